package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The layout of protocol/metadata: Kafka's schemas in schema/, the feature
// schemas of the generator's tests in testdata/schema/; generated files are
// gen_*.go (gen_*_test.go for the test schemas) beside them.
const (
	schemaDir     = "schema"
	testSchemaDir = "testdata/schema"
	genPrefix     = "gen_"
)

// Files returns every generated file of the package in dir, by name.
func Files(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, set := range []struct {
		dir  string
		opt  Options
		test bool
	}{
		{schemaDir, Options{Package: "metadata", Registry: true}, false},
		{testSchemaDir, Options{Package: "metadata"}, true},
	} {
		msgs, err := parseDir(filepath.Join(dir, set.dir))
		if err != nil {
			return nil, err
		}
		files, err := Generate(msgs, set.opt)
		if err != nil {
			return nil, err
		}
		for name, src := range files {
			if set.test {
				name = strings.TrimSuffix(name, ".go") + "_test.go"
			}
			out[name] = src
		}
	}
	return out, nil
}

func parseDir(dir string) ([]*Message, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		return nil, fmt.Errorf("no schemas in %s (%v)", dir, err)
	}
	var msgs []*Message
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(filepath.Dir(dir), p)
		m, err := Parse(filepath.ToSlash(rel), src)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Generated lists the generated files present in dir.
func Generated(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, genPrefix+"*.go"))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	return names, nil
}

// WriteDir regenerates the package in dir: writes every generated file and
// removes generated files no schema produces any more.
func WriteDir(dir string) error {
	files, err := Files(dir)
	if err != nil {
		return err
	}
	old, err := Generated(dir)
	if err != nil {
		return err
	}
	for _, name := range old {
		if _, ok := files[name]; !ok {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}
