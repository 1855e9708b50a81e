package admin

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/security"
)

// clientID names kraftd's admin requests in the controllers' logs.
const clientID = "kraftd-admin"

type securityKey struct{}

// WithSecurity returns ctx carrying the client security of the tools'
// --command-config (TLS and SASL); every request made with it connects so.
// A context travels where the tools' requests go (bootstrap, leader, retries)
// without widening every signature.
func WithSecurity(ctx context.Context, sec *security.ClientSide) context.Context {
	return context.WithValue(ctx, securityKey{}, sec)
}

// Request sends one request to addr with a short-lived franz-go client,
// which negotiates versions with ApiVersions first, as Kafka's admin client
// does, over TLS and after SASL when ctx carries them (WithSecurity). ctx
// bounds the whole exchange.
func Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(clientID), kgo.DialTimeout(5 * time.Second), kgo.RetryTimeout(0)}
	if sec, _ := ctx.Value(securityKey{}).(*security.ClientSide); sec != nil {
		if sec.TLS != nil {
			opts = append(opts, kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
				h, _, err := net.SplitHostPort(host)
				if err != nil {
					return nil, err
				}
				d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: sec.TLSConfig(h)}
				return d.DialContext(ctx, network, host)
			}))
		}
		if sec.Mechanism != nil {
			opts = append(opts, kgo.SASL(sec.Mechanism))
		}
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("admin: no seed broker for %s", addr)
	}
	return seeds[0].Request(ctx, req)
}
