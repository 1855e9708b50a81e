package config

import (
	"errors"
	"testing"
)

// TestParseListener: one parser for listener entries; the node's own
// listeners also restrict the name, and each refusal says why.
func TestParseListener(t *testing.T) {
	if e, err := ParseListener("controller://[::1]:9093"); err != nil || e != (Endpoint{Name: "CONTROLLER", Host: "::1", Port: 9093}) {
		t.Fatalf("%+v %v", e, err)
	}
	if e, err := ParseListener("A.B://:0"); err != nil || e != (Endpoint{Name: "A.B"}) {
		t.Fatalf("any name: %+v %v", e, err)
	}
	for _, c := range []struct{ in, any, node string }{
		{"CONTROLLER:9093", `malformed listener "CONTROLLER:9093" (want NAME://host:port)`, ""},
		{"://h:1", `malformed listener "://h:1" (want NAME://host:port)`, ""},
		{"C://h:x", `malformed listener "C://h:x": "h:x": port "x" is not a number in 0-65535`, ""},
		{"A.B://h:x", `malformed listener "A.B://h:x": "h:x": port "x" is not a number in 0-65535`,
			`malformed listener "A.B://h:x": listener name "A.B" may hold only letters, digits, '_' and '-'`},
	} {
		_, err := ParseListener(c.in)
		var le *ListenerError
		if err == nil || err.Error() != c.any || !errors.As(err, &le) || le.Listener != c.in {
			t.Errorf("ParseListener(%q): %v, want %s", c.in, err, c.any)
		}
		want := c.node
		if want == "" {
			want = c.any
		}
		if _, err := parseListener(c.in); err == nil || err.Error() != want {
			t.Errorf("parseListener(%q): %v, want %s", c.in, err, want)
		}
	}
}
