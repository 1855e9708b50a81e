package security

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func testServerConfig(t *testing.T) *SASLServerConfig {
	t.Helper()
	store := NewScramStore()
	for _, m := range []string{MechScramSHA256, MechScramSHA512} {
		c, err := NewScramCredential(m, "scram-secret", nil, 4096)
		if err != nil {
			t.Fatal(err)
		}
		store.Put(m, "alice", c)
	}
	return &SASLServerConfig{
		Listener:       "CONTROLLER",
		Mechanisms:     []string{MechPlain, MechScramSHA256, MechScramSHA512},
		PlainUsers:     map[string]string{"admin": "admin-secret"},
		Scram:          store,
		ReauthMs:       map[string]int64{},
		MaxReceiveSize: 524288,
	}
}

// exchange runs a whole client exchange against a; it returns the last
// outcome (the failure, or the success).
func exchange(t *testing.T, a *Authenticator, mech, user, pass string, now time.Time) Outcome {
	t.Helper()
	m, err := ClientMechanism(&SASLSettings{ClientMechanism: mech, ClientUsername: user, ClientPassword: pass})
	if err != nil {
		t.Fatal(err)
	}
	c := NewSASLClient(m, "localhost", 2)
	hs := c.Handshake()
	out := a.Request(hs.Key(), hs.Version, hs, now)
	if out.Action != Respond {
		return out
	}
	req, err := c.OnHandshake(context.Background(), out.Response.(*kmsg.SASLHandshakeResponse))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		out = a.Request(req.Key(), req.Version, req, now)
		if out.Action != Respond {
			return out
		}
		next, done, _, err := c.OnAuthenticate(out.Response.(*kmsg.SASLAuthenticateResponse))
		if err != nil {
			t.Fatalf("client: %v", err)
		}
		if done {
			if !out.Authenticated {
				t.Fatal("client done, server not")
			}
			return out
		}
		req = next
	}
	t.Fatal("exchange did not end")
	return out
}

func TestSASLExchanges(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		mech, user, pass string
		wantMsg          string
	}{
		{MechPlain, "admin", "admin-secret", ""},
		{MechScramSHA256, "alice", "scram-secret", ""},
		{MechScramSHA512, "alice", "scram-secret", ""},
		{MechPlain, "admin", "wrong", "Authentication failed: Invalid username or password"},
		{MechPlain, "nobody", "admin-secret", "Authentication failed: Invalid username or password"},
		{MechScramSHA512, "alice", "wrong", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"},
		{MechScramSHA256, "nobody", "x", "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"},
	} {
		t.Run(tt.mech+"/"+tt.user+"/"+tt.pass, func(t *testing.T) {
			a := NewAuthenticator(testServerConfig(t))
			out := exchange(t, a, tt.mech, tt.user, tt.pass, now)
			if tt.wantMsg == "" {
				if !out.Authenticated || !a.Authenticated() || a.Principal() != tt.user || a.Mechanism() != tt.mech {
					t.Fatalf("outcome %+v, principal %q", out, a.Principal())
				}
				if lt := out.Response.(*kmsg.SASLAuthenticateResponse).SessionLifetimeMillis; lt != 0 {
					t.Errorf("session lifetime %d without connections.max.reauth.ms", lt)
				}
				return
			}
			r, ok := out.Response.(*kmsg.SASLAuthenticateResponse)
			if out.Action != RespondAndClose || !ok || r.ErrorCode != kerr.SaslAuthenticationFailed.Code || r.ErrorMessage == nil || *r.ErrorMessage != tt.wantMsg {
				t.Fatalf("outcome %+v (%+v), want SASL_AUTHENTICATION_FAILED %q", out, out.Response, tt.wantMsg)
			}
			if a.Authenticated() {
				t.Error("authenticated after a failure")
			}
			if o := a.Request(36, 2, &kmsg.SASLAuthenticateRequest{Version: 2}, now); o.Action != Close {
				t.Errorf("a failed authenticator served %+v", o)
			}
		})
	}
}

func TestSASLRefusals(t *testing.T) {
	now := time.Unix(1000, 0)
	cfg := testServerConfig(t)
	t.Run("unsupported mechanism", func(t *testing.T) {
		a := NewAuthenticator(cfg)
		out := a.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: "GSSAPI"}, now)
		r := out.Response.(*kmsg.SASLHandshakeResponse)
		if out.Action != RespondAndClose || r.ErrorCode != kerr.UnsupportedSaslMechanism.Code || !slices.Equal(r.SupportedMechanisms, cfg.Mechanisms) {
			t.Fatalf("%+v %+v", out, r)
		}
		if out.Err.Error() != "Unsupported SASL mechanism GSSAPI" {
			t.Errorf("err %v", out.Err)
		}
	})
	t.Run("request before authentication", func(t *testing.T) {
		a := NewAuthenticator(cfg)
		if out := a.Request(18, 3, &kmsg.ApiVersionsRequest{Version: 3}, now); out.Action != ServeApiVersions {
			t.Fatalf("ApiVersions: %+v", out)
		}
		out := a.Request(3, 12, &kmsg.MetadataRequest{Version: 12}, now)
		if out.Action != Close || out.Err.Error() != "Unexpected Kafka request of type METADATA during SASL handshake." {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("vote during the exchange", func(t *testing.T) {
		a := NewAuthenticator(cfg)
		a.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: MechPlain}, now)
		out := a.Request(52, 1, &kmsg.VoteRequest{Version: 1}, now)
		if out.Action != Close || out.Err.Error() != "Unexpected Kafka request of type VOTE during SASL authentication." {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("second ApiVersions", func(t *testing.T) {
		a := NewAuthenticator(cfg)
		a.Request(18, 3, &kmsg.ApiVersionsRequest{Version: 3}, now)
		if out := a.Request(18, 3, &kmsg.ApiVersionsRequest{Version: 3}, now); out.Action != Close {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("unsupported ApiVersions version keeps the state", func(t *testing.T) {
		a := NewAuthenticator(cfg)
		if out := a.Request(18, 9, nil, now); out.Action != ServeApiVersions {
			t.Fatalf("%+v", out)
		}
		if out := a.Request(18, 3, &kmsg.ApiVersionsRequest{Version: 3}, now); out.Action != ServeApiVersions {
			t.Fatalf("retry: %+v", out)
		}
	})
	t.Run("not a Kafka request", func(t *testing.T) {
		a := NewAuthenticator(cfg)
		out := a.Unparsable(nil)
		if out.Action != Close || !strings.Contains(out.Err.Error(), "GSSAPI is not supported by server") {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("PLAIN malformed", func(t *testing.T) {
		for tok, want := range map[string]string{
			"admin":                        "Invalid SASL/PLAIN response: expected 3 tokens, got 1",
			"\x00admin\x00x\x00y":          "Invalid SASL/PLAIN response: expected 3 tokens, got 4",
			"\x00\x00pw":                   "Authentication failed: username not specified",
			"\x00admin\x00":                "Authentication failed: password not specified",
			"bob\x00admin\x00admin-secret": "Authentication failed: Client requested an authorization id that is different from username",
		} {
			a := NewAuthenticator(cfg)
			a.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: MechPlain}, now)
			out := a.Request(36, 1, &kmsg.SASLAuthenticateRequest{Version: 1, SASLAuthBytes: []byte(tok)}, now)
			r := out.Response.(*kmsg.SASLAuthenticateResponse)
			if r.ErrorMessage == nil || *r.ErrorMessage != want {
				t.Errorf("%q: %+v", tok, r)
			}
		}
	})
	t.Run("SCRAM below the minimum iterations", func(t *testing.T) {
		c := testServerConfig(t)
		cred, _ := c.Scram.Get(MechScramSHA256, "alice")
		cred.Iterations = 4095
		c.Scram.Put(MechScramSHA256, "alice", cred)
		out := exchange(t, NewAuthenticator(c), MechScramSHA256, "alice", "scram-secret", now)
		if out.Action != RespondAndClose {
			t.Fatalf("%+v", out)
		}
	})
	if !AllowedBeforeAuth(18) || !AllowedBeforeAuth(17) || !AllowedBeforeAuth(36) || AllowedBeforeAuth(52) || AllowedBeforeAuth(1) {
		t.Error("AllowedBeforeAuth")
	}
}

// A SaslHandshake v0 client sends bare tokens.
func TestSASLHandshakeV0(t *testing.T) {
	now := time.Unix(1000, 0)
	a := NewAuthenticator(testServerConfig(t))
	out := a.Request(17, 0, &kmsg.SASLHandshakeRequest{Mechanism: MechPlain}, now)
	if out.Action != Respond || !a.ExpectsRawToken() {
		t.Fatalf("%+v", out)
	}
	out = a.RawToken([]byte("\x00admin\x00admin-secret"), now)
	if out.Action != Respond || !out.Authenticated || out.RawResponse == nil || len(out.RawResponse) != 0 {
		t.Fatalf("%+v", out)
	}
	b := NewAuthenticator(testServerConfig(t))
	b.Request(17, 0, &kmsg.SASLHandshakeRequest{Mechanism: MechPlain}, now)
	if out := b.RawToken([]byte("\x00admin\x00bad"), now); out.Action != Close || out.Err == nil {
		t.Fatalf("bad password over v0: %+v", out)
	}
}

func TestSASLReauthentication(t *testing.T) {
	now := time.Unix(1000, 0)
	cfg := testServerConfig(t)
	cfg.ReauthMs = map[string]int64{MechScramSHA512: 60000}
	a := NewAuthenticator(cfg)
	out := exchange(t, a, MechScramSHA512, "alice", "scram-secret", now)
	if lt := out.Response.(*kmsg.SASLAuthenticateResponse).SessionLifetimeMillis; lt != 60000 || out.Reauthenticated {
		t.Fatalf("session lifetime %d, first authentication marked a re-authentication: %v", lt, out.Reauthenticated)
	}
	if a.SessionExpired(now.Add(time.Minute)) || !a.SessionExpired(now.Add(time.Minute+time.Millisecond)) {
		t.Error("SessionExpired")
	}
	later := now.Add(50 * time.Second)
	out = exchange(t, a, MechScramSHA512, "alice", "scram-secret", later)
	if !out.Authenticated || !out.Reauthenticated || a.SessionExpired(now.Add(time.Minute+time.Second)) {
		t.Fatalf("re-authentication: %+v", out)
	}
	// Another principal is refused.
	cred, _ := NewScramCredential(MechScramSHA512, "other", nil, 4096)
	cfg.Scram.Put(MechScramSHA512, "mallory", cred)
	out = exchange(t, a, MechScramSHA512, "mallory", "other", later.Add(2*time.Second))
	if r, ok := out.Response.(*kmsg.SASLAuthenticateResponse); out.Action != RespondAndClose || !ok || !strings.Contains(*r.ErrorMessage, "Cannot change principals during re-authentication") {
		t.Fatalf("principal change: %+v", out.Response)
	}
	// Another mechanism is refused after the handshake.
	b := NewAuthenticator(cfg)
	exchange(t, b, MechScramSHA512, "alice", "scram-secret", now)
	if out := b.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: MechScramSHA256}, later); out.Action != Respond {
		t.Fatalf("handshake: %+v", out)
	}
	out = b.Request(36, 2, &kmsg.SASLAuthenticateRequest{Version: 2}, later)
	if out.Action != Close || !strings.Contains(out.Err.Error(), "is not supported for re-authentication of mechanism 'SCRAM-SHA-512'") {
		t.Fatalf("mechanism change: %+v", out)
	}
	// Within a second of the last re-authentication a handshake is an
	// ordinary request: ILLEGAL_SASL_STATE, connection kept.
	c := NewAuthenticator(cfg)
	exchange(t, c, MechScramSHA512, "alice", "scram-secret", now)
	exchange(t, c, MechScramSHA512, "alice", "scram-secret", later)
	out = c.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: MechScramSHA512}, later.Add(500*time.Millisecond))
	if r := out.Response.(*kmsg.SASLHandshakeResponse); out.Action != Respond || r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("%+v", out)
	}
}

func TestSASLAuthenticatedWithoutReauth(t *testing.T) {
	now := time.Unix(1000, 0)
	a := NewAuthenticator(testServerConfig(t))
	exchange(t, a, MechPlain, "admin", "admin-secret", now)
	out := a.Request(17, 1, &kmsg.SASLHandshakeRequest{Version: 1, Mechanism: MechPlain}, now)
	if r := out.Response.(*kmsg.SASLHandshakeResponse); out.Action != Respond || r.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("%+v", out)
	}
	out = a.Request(36, 2, &kmsg.SASLAuthenticateRequest{Version: 2}, now)
	r := out.Response.(*kmsg.SASLAuthenticateResponse)
	if out.Action != Respond || r.ErrorCode != kerr.IllegalSaslState.Code || *r.ErrorMessage != "SaslAuthenticate request received after successful authentication" {
		t.Fatalf("%+v", r)
	}
	if a.SessionExpired(now.Add(time.Hour)) {
		t.Error("a session without connections.max.reauth.ms expired")
	}
}

func TestReauthDelay(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		d := ReauthDelay(time.Minute, r)
		if d < 51*time.Second || d > 57*time.Second {
			t.Fatalf("delay %v outside 85-95%% of a minute", d)
		}
	}
	if ReauthDelay(0, r) != 0 {
		t.Error("no lifetime, a delay")
	}
}

// FuzzSASLServer feeds arbitrary request sequences to an Authenticator:
// it must never panic and never report authentication without a valid
// exchange.
func FuzzSASLServer(f *testing.F) {
	f.Add([]byte("\x11\x01PLAIN\x00\x24\x02\x00admin\x00admin-secret"))
	f.Add([]byte("\x12\x03\x00\x11\x01SCRAM-SHA-512\x00\x24\x02n,,n=alice,r=abc"))
	f.Add([]byte("\x11\x00PLAIN\x00\xff\x00\x00admin\x00x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg := &SASLServerConfig{Mechanisms: []string{MechPlain, MechScramSHA256, MechScramSHA512},
			PlainUsers: map[string]string{"admin": "admin-secret"}, Scram: NewScramStore(), ReauthMs: map[string]int64{MechPlain: 1}}
		a := NewAuthenticator(cfg)
		now := time.Unix(0, 0)
		for len(b) >= 2 {
			key, version := int16(b[0]), int16(b[1]%4)
			b = b[2:]
			payload, rest, _ := strings.Cut(string(b), "\x00")
			b = []byte(rest)
			now = now.Add(time.Duration(key) * 100 * time.Millisecond)
			var out Outcome
			switch key {
			case 0x11:
				out = a.Request(17, version%2, &kmsg.SASLHandshakeRequest{Version: version % 2, Mechanism: payload}, now)
			case 0x12:
				out = a.Request(18, version, &kmsg.ApiVersionsRequest{Version: version}, now)
			case 0x24:
				out = a.Request(36, version%3, &kmsg.SASLAuthenticateRequest{Version: version % 3, SASLAuthBytes: []byte(payload)}, now)
			case 0xff:
				out = a.RawToken([]byte(payload), now)
			case 0x13:
				out = a.Request(18, 9, nil, now)
			default:
				out = a.Request(key, version, nil, now)
			}
			if out.Authenticated && a.Principal() != "admin" {
				t.Fatalf("authenticated as %q", a.Principal())
			}
			if out.Action == Close || out.Action == RespondAndClose {
				return
			}
		}
	})
}
