package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadPropertiesNamesFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.properties")
	if err := os.WriteFile(path, []byte("a=1\nb=\\u00zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadProperties(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error %v should name file and line", err)
	}
	if _, err := LoadProperties(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing file: want error")
	}
}
