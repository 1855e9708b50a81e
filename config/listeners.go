package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The keys of the node's listeners that tools read too.
const (
	ListenersKey               = "listeners"
	AdvertisedListenersKey     = "advertised.listeners"
	ControllerListenerNamesKey = "controller.listener.names"
)

// listenerKeys are the keys of the node's listeners. The security keys
// (ssl.*, sasl.*, listener.name.* overrides) are security.IsSecurityKey's.
var listenerKeys = []string{
	ListenersKey, AdvertisedListenersKey, ControllerListenerNamesKey, "listener.security.protocol.map",
}

const defaultListeners = "PLAINTEXT://:9092"

// Endpoint is a listener or voter address. Name is the upper-cased listener
// name (empty for voter and bootstrap addresses, which carry none).
type Endpoint struct {
	Name string
	Host string
	Port int
}

// HostPort is the endpoint's address in host:port form.
func (e Endpoint) HostPort() string { return net.JoinHostPort(e.Host, strconv.Itoa(e.Port)) }

// RaftListener is the first controller listener name.
func (c *Config) RaftListener() string { return c.ControllerListenerNames[0] }

// ControllerListeners returns this node's bind addresses of the controller
// listeners, in controller.listener.names order.
func (c *Config) ControllerListeners() []Endpoint {
	return c.byControllerName(c.Listeners)
}

// AdvertisedControllerListeners returns the advertised endpoints of the
// controller listeners, in controller.listener.names order.
func (c *Config) AdvertisedControllerListeners() []Endpoint {
	return c.byControllerName(c.AdvertisedListeners)
}

func (c *Config) byControllerName(eps []Endpoint) []Endpoint {
	var out []Endpoint
	for _, name := range c.ControllerListenerNames {
		for _, l := range eps {
			if l.Name == name {
				out = append(out, l)
			}
		}
	}
	return out
}

// readListeners reads the listeners, the controller listener names, their
// security protocols and settings, and the advertised endpoints. It runs
// after readRoles: which listeners are allowed depends on the roles.
func (c *Config) readListeners(r *reader) {
	names := c.readListenerList(r)
	c.readControllerNames(r, names)
	c.readSecurity(r)
	c.readAdvertised(r, names)
}

// readListenerList reads listeners and returns the set of their names.
func (c *Config) readListenerList(r *reader) map[string]bool {
	names := map[string]bool{}
	ports := map[int]string{}
	for _, e := range SplitList(r.get(ListenersKey, defaultListeners)) {
		ep, err := parseListener(e)
		if err != nil {
			r.bad("listeners: %v", err)
			continue
		}
		if names[ep.Name] {
			r.bad("listeners: listener name %s appears more than once", ep.Name)
			continue
		}
		if other, ok := ports[ep.Port]; ok && ep.Port != 0 {
			r.bad("listeners: %s and %s use the same port %d", other, ep.Name, ep.Port)
		}
		ports[ep.Port] = ep.Name
		names[ep.Name] = true
		c.Listeners = append(c.Listeners, ep)
	}
	if len(c.Listeners) == 0 && !r.hasProblem("listeners:") {
		r.bad("listeners: at least one listener is required")
	}
	return names
}

// readControllerNames reads controller.listener.names and checks them
// against the listeners as Kafka does for the node's roles.
func (c *Config) readControllerNames(r *reader, listeners map[string]bool) {
	for _, n := range SplitList(r.get(ControllerListenerNamesKey, "")) {
		c.ControllerListenerNames = append(c.ControllerListenerNames, strings.ToUpper(n))
	}
	if len(c.ControllerListenerNames) == 0 {
		r.bad("controller.listener.names: required; it names the listener(s) the quorum uses")
		return
	}
	controller := map[string]bool{}
	for _, n := range c.ControllerListenerNames {
		controller[n] = true
	}
	switch {
	case c.IsController():
		for _, n := range c.ControllerListenerNames {
			if !listeners[n] {
				r.bad("controller.listener.names: %s does not appear in listeners (%s)", n, r.get(ListenersKey, defaultListeners))
			}
		}
		// A controller-only node may have only controller listeners.
		if len(c.ProcessRoles) == 1 {
			for _, l := range c.Listeners {
				if !controller[l.Name] {
					r.bad("listeners: %s is missing from controller.listener.names (%s); with process.roles=controller every listener must be a controller listener",
						l.Name, strings.Join(c.ControllerListenerNames, ","))
				}
			}
		}
	case len(c.ProcessRoles) > 0:
		// broker only (an observer): its listeners are not controller listeners.
		for _, l := range c.Listeners {
			if controller[l.Name] {
				r.bad("controller.listener.names: %s must not appear in listeners when process.roles=broker", l.Name)
			}
		}
	}
}

// readAdvertised sets AdvertisedListeners: per name, the advertised endpoint
// wins over the bind address.
func (c *Config) readAdvertised(r *reader, listeners map[string]bool) {
	adv := map[string]Endpoint{}
	for _, e := range SplitList(r.get(AdvertisedListenersKey, "")) {
		ep, err := parseListener(e)
		if err != nil {
			r.bad("advertised.listeners: %v", err)
			continue
		}
		if isNonRoutable(ep.Host) {
			r.bad("advertised.listeners: %s cannot advertise the non-routable address %s", ep.Name, ep.Host)
			continue
		}
		if !listeners[ep.Name] {
			r.bad("advertised.listeners: %s is not one of the listeners", ep.Name)
			continue
		}
		adv[ep.Name] = ep
	}
	for _, l := range c.Listeners {
		if a, ok := adv[l.Name]; ok {
			l = a
		}
		c.AdvertisedListeners = append(c.AdvertisedListeners, l)
	}
}

func isNonRoutable(host string) bool { return host == "0.0.0.0" || host == "::" }

// ParseListener parses one entry of listeners or advertised.listeners,
// NAME://host:port (host may be empty, IPv6 bracketed; the name upper-cased
// as Kafka's ListenerName.normalised does). It is the one parser of such
// entries, as Kafka's listenerListToEndPoints is: the node's configuration
// reads its listeners with it (and checks the names further), and
// add-controller the new controller's. An error is a *ListenerError.
func ParseListener(s string) (Endpoint, error) {
	name, rest, ok := strings.Cut(s, "://")
	if !ok || name == "" {
		return Endpoint{}, &ListenerError{Listener: s}
	}
	host, port, err := ParseHostPort(rest)
	if err != nil {
		return Endpoint{}, &ListenerError{Listener: s, Err: err}
	}
	return Endpoint{Name: strings.ToUpper(name), Host: host, Port: port}, nil
}

// ListenerError is a listener entry ParseListener refused: not
// NAME://... at all (Err nil), or with a bad host:port (Err says why).
type ListenerError struct {
	Listener string
	Err      error
}

func (e *ListenerError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("malformed listener %q (want NAME://host:port)", e.Listener)
	}
	return fmt.Sprintf("malformed listener %q: %v", e.Listener, e.Err)
}

func (e *ListenerError) Unwrap() error { return e.Err }

// parseListener is ParseListener for the node's own listeners, whose names
// may hold only letters, digits, '_' and '-'.
func parseListener(s string) (Endpoint, error) {
	if name, _, ok := strings.Cut(s, "://"); ok {
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return Endpoint{}, fmt.Errorf("malformed listener %q: listener name %q may hold only letters, digits, '_' and '-'", s, name)
			}
		}
	}
	return ParseListener(s)
}

// ParseHostPort parses host:port or [ipv6]:port with 0 <= port <= 65535.
// The host may be empty.
func ParseHostPort(s string) (string, int, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("%q has no port (want host:port)", s)
	}
	host, ps := s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", 0, fmt.Errorf("%q: unterminated [ in IPv6 address", s)
		}
		host = host[1 : len(host)-1]
		if net.ParseIP(host) == nil {
			return "", 0, fmt.Errorf("%q: %q is not an IPv6 address", s, host)
		}
	} else if strings.Contains(host, ":") {
		return "", 0, fmt.Errorf("%q: IPv6 addresses must be in brackets", s)
	}
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_' || r == '%' || r == ':') {
			return "", 0, fmt.Errorf("%q: invalid character %q in host", s, r)
		}
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 0 || port > 65535 || ps == "" || ps[0] == '+' || ps[0] == '-' {
		return "", 0, fmt.Errorf("%q: port %q is not a number in 0-65535", s, ps)
	}
	return host, port, nil
}
