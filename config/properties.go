package config

import (
	"fmt"
	"os"

	"github.com/kraftd/kraftd/javaprops"
)

// Properties are a node's server properties: Java properties text (keys in
// file order, values, the line of each key) and where keys that were not
// read from a file came from.
type Properties struct {
	javaprops.Properties
	// Origins names where a key not read from a file came from (e.g.
	// "environment variable KAFKA_NODE_ID"), for messages; may be nil.
	Origins map[string]string
}

func newProperties() *Properties { return &Properties{Properties: *javaprops.New()} }

// ParseProperties parses server properties text (javaprops.Parse).
func ParseProperties(text string) (*Properties, error) {
	p, err := javaprops.Parse(text)
	if err != nil {
		return nil, err
	}
	return &Properties{Properties: *p}, nil
}

// maxPropertiesFile bounds what we read: a config file is a few KiB; anything
// near this size is not one.
const maxPropertiesFile = 16 << 20

// LoadProperties reads and parses a properties file.
func LoadProperties(path string) (*Properties, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if st.Size() > maxPropertiesFile {
		return nil, fmt.Errorf("config: %s: file is %d bytes, larger than the %d bytes a properties file may have", path, st.Size(), maxPropertiesFile)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	p, err := ParseProperties(string(b))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	return p, nil
}
