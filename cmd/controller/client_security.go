package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/security"
)

// toolSecurity reads the client security of --command-config as Kafka's
// admin client takes it: security.protocol (default PLAINTEXT), the ssl.*
// keys, sasl.mechanism and sasl.jaas.config (username and password of a
// PlainLoginModule or ScramLoginModule). nil means plaintext.
func toolSecurity(p *config.Properties) (*security.ClientSide, error) {
	text, ok := p.Get("security.protocol")
	if !ok {
		return nil, nil
	}
	proto, ok := security.ParseProtocol(strings.TrimSpace(text))
	if !ok {
		return nil, toolError{fmt.Sprintf("Invalid value %s for configuration security.protocol: String must be one of: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", text)}
	}
	if proto == security.Plaintext {
		return nil, nil
	}
	l, err := security.ResolveClient(adminProps{p}, adminListener, proto)
	if err != nil {
		return nil, fmt.Errorf("--command-config: %w", err)
	}
	side, err := security.NewClientSide(l, func(string, ...any) {})
	if err != nil {
		return nil, fmt.Errorf("--command-config: %w", err)
	}
	return side, nil
}

// adminListener names the tools' client settings for package security,
// which resolves them as the outbound side of a listener.
const adminListener = "admin"

// adminProps presents an admin client's keys as package security reads a
// listener's client side: sasl.mechanism for
// sasl.mechanism.controller.protocol, sasl.jaas.config for the listener's
// <mechanism>.sasl.jaas.config; no listener-prefixed key exists.
type adminProps struct{ p security.Props }

func (a adminProps) Get(key string) (string, bool) {
	prefix := security.ListenerPrefix(adminListener)
	switch {
	case key == "sasl.mechanism.controller.protocol":
		return a.p.Get("sasl.mechanism")
	case strings.HasPrefix(key, prefix) && strings.HasSuffix(key, ".sasl.jaas.config"):
		return a.p.Get("sasl.jaas.config")
	case strings.HasPrefix(key, prefix):
		return "", false
	}
	return a.p.Get(key)
}

// context is the tools' request context: bounded by --timeout, carrying
// the client security of --command-config.
func (c *connFlags) context(props *config.Properties) (context.Context, context.CancelFunc, error) {
	sec, err := toolSecurity(props)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	return admin.WithSecurity(ctx, sec), cancel, nil
}
