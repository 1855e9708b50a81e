package network

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// serverApi is an api the server answers itself, whatever its Handler.
type serverApi struct {
	protocol.Api
	// answer is the answer to a decoded request (on a SASL listener the
	// Authenticator answers the SASL apis before this).
	answer func(c *conn, hdr protocol.RequestHeader, req kmsg.Request) kmsg.Response
}

// serverApis are the apis of every Kafka listener: ApiVersions (KIP-511), and
// SaslHandshake and SaslAuthenticate, which a Kafka controller lists on every
// controller listener (their schemas name the controller) and answers with
// ILLEGAL_SASL_STATE off SASL listeners, as Kafka's ControllerApis.
var serverApis = []serverApi{
	{
		Api: protocol.Typed[*kmsg.ApiVersionsRequest, *kmsg.ApiVersionsResponse]{
			Versions: protocol.VersionRange{Min: 0, Max: 5}, // v5: ClusterId/NodeId checking (KIP-1242)
			TopError: func(r *kmsg.ApiVersionsResponse) *int16 { return &r.ErrorCode },
		}.Api(),
		answer: func(c *conn, _ protocol.RequestHeader, req kmsg.Request) kmsg.Response {
			return c.s.apiVersionsResponse(req.(*kmsg.ApiVersionsRequest))
		},
	},
	{
		Api: protocol.Typed[*kmsg.SASLHandshakeRequest, *kmsg.SASLHandshakeResponse]{
			Versions: protocol.VersionRange{Min: 0, Max: 1},
			TopError: func(r *kmsg.SASLHandshakeResponse) *int16 { return &r.ErrorCode },
		}.Api(),
		answer: func(_ *conn, hdr protocol.RequestHeader, _ kmsg.Request) kmsg.Response {
			return &kmsg.SASLHandshakeResponse{Version: hdr.APIVersion, ErrorCode: kerr.IllegalSaslState.Code}
		},
	},
	{
		Api: protocol.Typed[*kmsg.SASLAuthenticateRequest, *kmsg.SASLAuthenticateResponse]{
			Versions: protocol.VersionRange{Min: 0, Max: 2},
			TopError: func(r *kmsg.SASLAuthenticateResponse) *int16 { return &r.ErrorCode },
		}.Api(),
		answer: func(_ *conn, hdr protocol.RequestHeader, _ kmsg.Request) kmsg.Response {
			msg := "SaslAuthenticate request received after successful authentication"
			return &kmsg.SASLAuthenticateResponse{Version: hdr.APIVersion, ErrorCode: kerr.IllegalSaslState.Code, ErrorMessage: &msg}
		},
	},
}

// serverAnswers indexes serverApis by key; it never changes.
var serverAnswers = func() (t [protocol.MaxKey]*serverApi) {
	for i := range serverApis {
		t[serverApis[i].Key] = &serverApis[i]
	}
	return t
}()

// ownAnswer returns the server's registration of key, nil for an api the
// Handler serves.
func ownAnswer(key int16) *serverApi {
	if key < 0 || key >= protocol.MaxKey {
		return nil
	}
	return serverAnswers[key]
}

// Apis returns the registrations of the apis the server answers itself,
// for the node's api table (ServerConfig.Apis must hold them).
func Apis() []protocol.Api {
	out := make([]protocol.Api, len(serverApis))
	for i, a := range serverApis {
		out[i] = a.Api
	}
	return out
}
