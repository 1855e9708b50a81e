package config

import (
	"fmt"
	"strings"
)

// Load reads a properties file and applies --override arguments
// ("key=value"), which replace single keys; an overridden key reports no
// line number.
func Load(path string, overrides []string) (*Properties, error) {
	p, err := LoadProperties(path)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		k, v, err := ParseOverride(o)
		if err != nil {
			return nil, err
		}
		p.Set(k, v)
		p.Lines[k] = 0
	}
	return p, nil
}

// ParseOverride splits a --override argument "key=value".
func ParseOverride(s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("config: --override %q: want key=value", s)
	}
	return k, v, nil
}
