package kafkatest

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/internal/freeport"
)

// Props is a Java properties file's content.
type Props map[string]string

// Clone returns a copy that can be changed without touching p.
func (p Props) Clone() Props {
	c := make(Props, len(p))
	for k, v := range p {
		c[k] = v
	}
	return c
}

// Merge sets every key of o in p (o wins) and returns p.
func (p Props) Merge(o Props) Props {
	for k, v := range o {
		p[k] = v
	}
	return p
}

// Encode renders the properties sorted by key. Keys and values used here are plain ASCII
// without the characters properties files escape; Encode refuses anything else rather than
// write a file Kafka would read differently.
func (p Props) Encode() (string, error) {
	var b strings.Builder
	for _, k := range sortedKeys(p) {
		v := p[k]
		if strings.ContainsAny(k, "=:# \t\r\n\\") || strings.ContainsAny(v, "\r\n\\") {
			return "", fmt.Errorf("kafkatest: property %q=%q needs escaping", k, v)
		}
		fmt.Fprintf(&b, "%s=%s\n", k, v)
	}
	return b.String(), nil
}

// WriteFile writes the properties to path.
func (p Props) WriteFile(path string) error {
	s, err := p.Encode()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		return fmt.Errorf("kafkatest: write %s: %w", path, err)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FreePort returns a port on 127.0.0.1 that is free, outside the ephemeral range, and handed
// to no other test process (internal/freeport), so a node can bind it, and rebind it after
// a restart, without racing outbound connections or parallel tests.
func FreePort(t testing.TB) int {
	t.Helper()
	return FreePorts(t, 1)[0]
}

// FreePorts returns n distinct ports as FreePort does, e.g. for the voters of a mixed quorum.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freeport.Take(n)
	if err != nil {
		t.Fatalf("kafkatest: %v", err)
	}
	return ports
}

// Voter renders one controller.quorum.voters entry, id@host:port.
func Voter(id int32, hostport string) string { return fmt.Sprintf("%d@%s", id, hostport) }
