package security

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/xdg-go/scram"
)

// Api keys of the requests a SASL connection may send before it is
// authenticated.
const (
	keySaslHandshake    int16 = 17
	keyApiVersions      int16 = 18
	keySaslAuthenticate int16 = 36
)

// AllowedBeforeAuth reports whether a request with api key may be served on
// a SASL connection that has not authenticated: ApiVersions, SaslHandshake
// and SaslAuthenticate only, as Kafka's SaslServerAuthenticator.
func AllowedBeforeAuth(key int16) bool {
	return key == keyApiVersions || key == keySaslHandshake || key == keySaslAuthenticate
}

// SASLServerConfig is what an Authenticator checks clients against; one
// per listener, shared by its connections.
type SASLServerConfig struct {
	Listener string
	// Mechanisms is sasl.enabled.mechanisms, in the order SaslHandshake
	// lists them.
	Mechanisms []string
	// PlainUsers are the user_<name> entries of the PLAIN JAAS config.
	PlainUsers map[string]string
	// Scram holds SCRAM credentials (nil: every SCRAM login fails).
	Scram *ScramStore
	// ReauthMs is connections.max.reauth.ms per mechanism (0: sessions
	// never expire).
	ReauthMs map[string]int64
	// MaxReceiveSize bounds frames before authentication.
	MaxReceiveSize int32
}

// NewSASLServerConfig builds the server side of a resolved SASL listener.
func NewSASLServerConfig(listener string, s *SASLSettings, store *ScramStore) *SASLServerConfig {
	c := &SASLServerConfig{Listener: listener, Mechanisms: s.EnabledMechanisms, Scram: store, ReauthMs: s.ReauthMs, MaxReceiveSize: s.MaxReceiveSize}
	if e := s.JAAS[MechPlain]; e != nil {
		c.PlainUsers = e.PlainUsers()
	}
	return c
}

// Action tells the network layer what to do with a Step's outcome.
type Action int

const (
	// Respond: send Response (or RawResponse, size-prefixed) and go on.
	Respond Action = iota
	// ServeApiVersions: answer the ApiVersions request as usual and go on.
	ServeApiVersions
	// RespondAndClose: send Response if not nil, then close the connection.
	RespondAndClose
	// Close: close the connection without an answer.
	Close
)

// Outcome is the result of one frame handed to an Authenticator.
type Outcome struct {
	Action   Action
	Response kmsg.Response // encode at its own version with the request's correlation id
	// RawResponse is a SaslHandshake v0 token answer: sent as a frame of
	// its own, without a Kafka header.
	RawResponse []byte
	// Err says why an authentication failed or the connection closes, in
	// Kafka's words, for the one rate-limited log line naming the peer.
	Err error
	// Authenticated is set when this frame completed authentication or
	// re-authentication; Reauthenticated too when it was a re-authentication
	// of a live session (connections.max.reauth.ms).
	Authenticated, Reauthenticated bool
}

type authState int

const (
	stateInitial   authState = iota // nothing received
	stateHandshake                  // ApiVersions served; SaslHandshake expected
	stateToken                      // handshake done, SASL tokens expected
	stateComplete                   // authenticated
	stateReauthBadMechanism
	stateFailed
)

// Authenticator is the server side of SASL on one connection, driven by the
// network layer one frame at a time. It reads no sockets and no clock: now
// is passed in. Not safe for concurrent use.
type Authenticator struct {
	cfg   *SASLServerConfig
	state authState

	mech      string
	rawTokens bool // SaslHandshake v0: tokens travel without Kafka headers
	plain     bool
	scramConv *scram.ServerConversation
	principal string

	reauthenticating bool
	prevMech         string
	prevPrincipal    string
	lastReauthStart  time.Time
	expiry           time.Time // zero: the session never expires
}

// NewAuthenticator starts the SASL exchange of a new connection.
func NewAuthenticator(cfg *SASLServerConfig) *Authenticator { return &Authenticator{cfg: cfg} }

// Authenticated reports whether the connection has authenticated and is
// not in the middle of a re-authentication.
func (a *Authenticator) Authenticated() bool { return a.state == stateComplete }

// Principal is the authenticated user name (Kafka's User:<name>).
func (a *Authenticator) Principal() string { return a.principal }

// Mechanism is the negotiated mechanism.
func (a *Authenticator) Mechanism() string { return a.mech }

// ExpectsRawToken reports whether the next frame is a bare SASL token
// (after SaslHandshake v0) rather than a Kafka request.
func (a *Authenticator) ExpectsRawToken() bool { return a.state == stateToken && a.rawTokens }

// MaxReceiveSize is the largest frame to accept while not authenticated
// (sasl.server.max.receive.size); a larger one fails authentication with
// "Failing SASL authentication due to invalid receive size" and closes.
func (a *Authenticator) MaxReceiveSize() int32 { return a.cfg.MaxReceiveSize }

// SessionExpired reports whether the session has outlived
// connections.max.reauth.ms: Kafka closes such a connection on its next
// request unless that request is a SaslHandshake starting re-authentication.
func (a *Authenticator) SessionExpired(now time.Time) bool {
	return a.state == stateComplete && !a.expiry.IsZero() && now.After(a.expiry)
}

// Unparsable handles a frame that is not a Kafka request (or a version
// kraftd does not serve) while not authenticated: Kafka treats a first
// such frame as a GSSAPI token, which kraftd never enables, and closes.
func (a *Authenticator) Unparsable(cause error) Outcome {
	a.state = stateFailed
	err := errors.New("Exception handling first SASL packet from client, GSSAPI is not supported by server")
	if cause != nil {
		err = fmt.Errorf("%w: %v", err, cause)
	}
	return Outcome{Action: Close, Err: err}
}

// Oversized handles a frame larger than MaxReceiveSize before
// authentication: Kafka fails authentication and closes without an answer.
func (a *Authenticator) Oversized(size int64) Outcome {
	a.state = stateFailed
	return Outcome{Action: Close, Err: fmt.Errorf("Failing SASL authentication due to invalid receive size (%d bytes, sasl.server.max.receive.size %d)", size, a.cfg.MaxReceiveSize)}
}

// RawToken handles a frame after SaslHandshake v0.
func (a *Authenticator) RawToken(token []byte, now time.Time) Outcome {
	if !a.ExpectsRawToken() {
		a.state = stateFailed
		return Outcome{Action: Close, Err: errors.New("unexpected raw SASL token")}
	}
	resp, err := a.evaluate(token)
	if err != nil {
		a.state = stateFailed
		return Outcome{Action: Close, Err: err}
	}
	out := Outcome{Action: Respond, RawResponse: resp}
	if a.done() {
		out.Authenticated, out.Reauthenticated = true, a.reauthenticating
		a.complete(now)
		if resp == nil {
			out.RawResponse = []byte{}
		}
	}
	return out
}

// Request handles a decoded request while not authenticated, or a
// SaslHandshake/SaslAuthenticate on an authenticated connection. key and
// version come from the request header; req is nil for an ApiVersions
// request of a version kraftd does not serve (answered by the network layer
// with UNSUPPORTED_VERSION, the state unchanged).
func (a *Authenticator) Request(key, version int16, req kmsg.Request, now time.Time) Outcome {
	switch a.state {
	case stateComplete:
		return a.authenticatedRequest(key, version, req, now)
	case stateFailed:
		return Outcome{Action: Close, Err: errors.New("SASL authentication already failed")}
	case stateReauthBadMechanism:
		a.state = stateFailed
		return Outcome{Action: Close, Err: fmt.Errorf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", a.mech, a.prevMech)}
	case stateToken:
		return a.tokenRequest(key, version, req, now)
	}
	// stateInitial or stateHandshake
	switch key {
	case keyApiVersions:
		if a.state != stateInitial || a.reauthenticating {
			a.state = stateFailed
			return Outcome{Action: Close, Err: errors.New("Unexpected ApiVersions request received during SASL authentication state HANDSHAKE_REQUEST")}
		}
		if req != nil {
			a.state = stateHandshake
		}
		return Outcome{Action: ServeApiVersions}
	case keySaslHandshake:
		hs, ok := req.(*kmsg.SASLHandshakeRequest)
		if !ok {
			a.state = stateFailed
			return Outcome{Action: Close, Err: errors.New("malformed SaslHandshake request")}
		}
		return a.handshake(hs, version)
	}
	a.state = stateFailed
	return Outcome{Action: Close, Err: fmt.Errorf("Unexpected Kafka request of type %s during SASL handshake.", apiName(key))}
}

func (a *Authenticator) handshake(hs *kmsg.SASLHandshakeRequest, version int16) Outcome {
	resp := &kmsg.SASLHandshakeResponse{Version: version, SupportedMechanisms: slices.Clone(a.cfg.Mechanisms)}
	if !slices.Contains(a.cfg.Mechanisms, hs.Mechanism) {
		a.state = stateFailed
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		return Outcome{Action: RespondAndClose, Response: resp, Err: fmt.Errorf("Unsupported SASL mechanism %s", hs.Mechanism)}
	}
	a.rawTokens = version == 0
	a.mech = hs.Mechanism
	if a.reauthenticating && hs.Mechanism != a.prevMech {
		// Kafka answers the handshake, then fails on the next frame.
		a.state = stateReauthBadMechanism
		return Outcome{Action: Respond, Response: resp}
	}
	if err := a.startMechanism(); err != nil {
		a.state = stateFailed
		return Outcome{Action: Close, Err: err}
	}
	a.state = stateToken
	return Outcome{Action: Respond, Response: resp}
}

func (a *Authenticator) startMechanism() error {
	a.plain, a.scramConv = false, nil
	if a.mech == MechPlain {
		a.plain = true
		return nil
	}
	h, ok := scramHash(a.mech)
	if !ok {
		return fmt.Errorf("Kafka Server failed to create a SaslServer to interact with a client during session authentication: mechanism %s", a.mech)
	}
	mech := a.mech
	srv, err := h.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := a.cfg.Scram.Get(mech, user)
		if !ok {
			return scram.StoredCredentials{}, errors.New("Authentication failed: Invalid user credentials")
		}
		if c.Iterations < ScramMinIterations {
			return scram.StoredCredentials{}, fmt.Errorf("Iterations %d is less than the minimum %d for %s", c.Iterations, ScramMinIterations, mech)
		}
		return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: int(c.Iterations)}, StoredKey: c.StoredKey, ServerKey: c.ServerKey}, nil
	})
	if err != nil {
		return err
	}
	a.scramConv = srv.NewConversation()
	return nil
}

func (a *Authenticator) tokenRequest(key, version int16, req kmsg.Request, now time.Time) Outcome {
	if key != keySaslAuthenticate {
		a.state = stateFailed
		err := fmt.Errorf("Unexpected Kafka request of type %s during SASL authentication.", apiName(key))
		if key == keySaslHandshake {
			return Outcome{Action: RespondAndClose, Response: &kmsg.SASLHandshakeResponse{Version: version, ErrorCode: kerr.IllegalSaslState.Code}, Err: err}
		}
		return Outcome{Action: Close, Err: err}
	}
	ar, ok := req.(*kmsg.SASLAuthenticateRequest)
	if !ok {
		a.state = stateFailed
		return Outcome{Action: Close, Err: errors.New("malformed SaslAuthenticate request")}
	}
	resp := &kmsg.SASLAuthenticateResponse{Version: version}
	token, err := a.evaluate(ar.SASLAuthBytes)
	if err != nil {
		a.state = stateFailed
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := err.Error()
		resp.ErrorMessage = &msg
		return Outcome{Action: RespondAndClose, Response: resp, Err: err}
	}
	resp.SASLAuthBytes = token
	if resp.SASLAuthBytes == nil {
		resp.SASLAuthBytes = []byte{}
	}
	out := Outcome{Action: Respond, Response: resp}
	if a.done() {
		out.Authenticated, out.Reauthenticated = true, a.reauthenticating
		resp.SessionLifetimeMillis = a.complete(now)
	}
	return out
}

// authFailed wraps a mechanism error as Kafka reports it: PLAIN's
// SaslAuthenticationExceptions keep their text; SCRAM's SaslExceptions
// become the generic "invalid credentials" text.
type authFailed struct{ msg string }

func (e *authFailed) Error() string { return e.msg }

func (a *Authenticator) evaluate(token []byte) ([]byte, error) {
	if a.plain {
		return nil, a.evaluatePlain(token)
	}
	if a.scramConv == nil {
		return nil, errors.New("Authentication exchange has not completed")
	}
	if !utf8.Valid(token) {
		return nil, a.scramFailure()
	}
	resp, err := a.scramConv.Step(string(token))
	if err != nil {
		return nil, a.scramFailure()
	}
	if authz := a.scramConv.AuthzID(); authz != "" && authz != a.scramConv.Username() {
		return nil, &authFailed{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	if a.scramConv.Done() {
		if !a.scramConv.Valid() {
			return nil, a.scramFailure()
		}
		if err := a.setPrincipal(a.scramConv.Username()); err != nil {
			return nil, err
		}
	}
	return []byte(resp), nil
}

func (a *Authenticator) scramFailure() error {
	what := "authentication"
	if a.reauthenticating {
		what = "re-authentication"
	}
	return &authFailed{fmt.Sprintf("Authentication failed during %s due to invalid credentials with SASL mechanism %s", what, a.mech)}
}

func (a *Authenticator) evaluatePlain(token []byte) error {
	// [authzid] NUL authcid NUL passwd, at most three parts (RFC 4616).
	parts := bytes.SplitN(token, []byte{0}, 4)
	if len(parts) != 3 {
		return &authFailed{fmt.Sprintf("Invalid SASL/PLAIN response: expected 3 tokens, got %d", min(len(parts), 4))}
	}
	authz, user, pass := string(parts[0]), string(parts[1]), parts[2]
	if user == "" {
		return &authFailed{"Authentication failed: username not specified"}
	}
	if len(pass) == 0 {
		return &authFailed{"Authentication failed: password not specified"}
	}
	want, ok := a.cfg.PlainUsers[user]
	if !ok || subtle.ConstantTimeCompare([]byte(want), pass) != 1 {
		return &authFailed{"Authentication failed: Invalid username or password"}
	}
	if authz != "" && authz != user {
		return &authFailed{"Authentication failed: Client requested an authorization id that is different from username"}
	}
	a.plain = false // done
	return a.setPrincipal(user)
}

func (a *Authenticator) setPrincipal(user string) error {
	if a.reauthenticating && user != a.prevPrincipal {
		return &authFailed{fmt.Sprintf("Cannot change principals during re-authentication from User.%s: User.%s", a.prevPrincipal, user)}
	}
	a.principal = user
	return nil
}

func (a *Authenticator) done() bool {
	if a.scramConv != nil {
		return a.scramConv.Done() && a.scramConv.Valid()
	}
	return a.principal != "" && !a.plain
}

// complete ends a successful exchange and returns the session lifetime
// Kafka sends (SessionLifetimeMs): connections.max.reauth.ms of the
// mechanism, 0 when re-authentication is off.
func (a *Authenticator) complete(now time.Time) int64 {
	a.state = stateComplete
	a.reauthenticating = false
	a.scramConv = nil
	ms := max(a.cfg.ReauthMs[a.mech], 0)
	a.expiry = time.Time{}
	if ms > 0 {
		a.expiry = now.Add(time.Duration(ms) * time.Millisecond)
	}
	return ms
}

// authenticatedRequest handles SaslHandshake and SaslAuthenticate after
// authentication. A handshake starts re-authentication when sessions
// expire and the last one began at least a second ago (Kafka's
// KafkaChannel.maybeBeginServerReauthentication); otherwise both get the
// ILLEGAL_SASL_STATE answers of Kafka's ControllerApis and the connection
// stays open.
func (a *Authenticator) authenticatedRequest(key, version int16, req kmsg.Request, now time.Time) Outcome {
	switch key {
	case keySaslHandshake:
		hs, ok := req.(*kmsg.SASLHandshakeRequest)
		if ok && !a.expiry.IsZero() && (a.lastReauthStart.IsZero() || now.Sub(a.lastReauthStart) >= time.Second) {
			a.lastReauthStart = now
			a.reauthenticating = true
			a.prevMech, a.prevPrincipal = a.mech, a.principal
			a.principal = ""
			return a.handshake(hs, version)
		}
		return Outcome{Action: Respond, Response: &kmsg.SASLHandshakeResponse{Version: version, ErrorCode: kerr.IllegalSaslState.Code}}
	case keySaslAuthenticate:
		msg := "SaslAuthenticate request received after successful authentication"
		return Outcome{Action: Respond, Response: &kmsg.SASLAuthenticateResponse{Version: version, ErrorCode: kerr.IllegalSaslState.Code, ErrorMessage: &msg}}
	}
	return Outcome{Action: Close, Err: fmt.Errorf("security: %s is not a SASL request", apiName(key))}
}

func apiName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" && n != "Unknown" {
		return strings.ToUpper(camelToSnake(n))
	}
	return fmt.Sprintf("api key %d", key)
}

// camelToSnake turns kmsg's names (ApiVersions) into Kafka's ApiKeys enum
// names (API_VERSIONS) for messages.
func camelToSnake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			prev, next := rune(s[i-1]), rune(0)
			if i+1 < len(s) {
				next = rune(s[i+1])
			}
			if prev >= 'a' && prev <= 'z' || prev >= 'A' && prev <= 'Z' && next >= 'a' && next <= 'z' {
				b.WriteByte('_')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
