package config

import (
	"errors"

	"github.com/kraftd/kraftd/security"
)

// readSecurity resolves each listener's security protocol and settings and
// those of outbound connections to voters (the first controller listener's)
// as Kafka 4.4 does; package security holds the rules and Kafka's messages.
// Stores are not read here: the node loads them when it starts listening.
func (c *Config) readSecurity(r *reader) {
	var names []string
	for _, l := range c.Listeners {
		names = append(names, l.Name)
	}
	m, err := security.ProtocolMap(r.p, names, c.ControllerListenerNames)
	if err != nil {
		r.bad("%v", err)
		return
	}
	c.ListenerSecurity = map[string]*security.Listener{}
	for _, l := range c.Listeners {
		proto, err := security.ListenerProtocol(m, l.Name)
		if err != nil {
			r.bad("listeners: %v", err)
			continue
		}
		ls, err := security.ResolveServer(r.p, l.Name, proto)
		if err != nil {
			badEach(r, err)
			continue
		}
		c.ListenerSecurity[l.Name] = ls
	}
	if len(c.ControllerListenerNames) == 0 {
		return
	}
	proto, err := security.OutboundProtocol(m, c.RaftListener())
	if err != nil {
		r.bad("controller.listener.names: %v", err)
		return
	}
	out, err := security.ResolveClient(r.p, c.RaftListener(), proto)
	if err != nil {
		badEach(r, err)
		return
	}
	c.OutboundSecurity = out
}

// badEach records each error joined in err as its own problem.
func badEach(r *reader, err error) {
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		for _, e := range j.Unwrap() {
			badEach(r, e)
		}
		return
	}
	r.bad("%v", err)
}
