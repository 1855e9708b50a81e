package faultfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kraftd/kraftd/vfs"
)

// TestFromEnv: without KRAFTD_FAULTFS the file system is left alone; with
// it, the control file's rules apply from the start and KRAFTD_SYNC_LEDGER
// records what went through; a ledger that cannot be opened is an error.
func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("KRAFTD_FAULTFS", "")
	if fs, err := FromEnv(vfs.OS); err != nil || fs != vfs.OS {
		t.Fatalf("unset: %v %v", fs, err)
	}

	ctl, ledger := filepath.Join(dir, "ctl"), filepath.Join(dir, "ledger")
	if err := os.WriteFile(ctl, []byte("sync error EIO seg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRAFTD_FAULTFS", ctl)
	t.Setenv("KRAFTD_SYNC_LEDGER", ledger)
	fs, err := FromEnv(vfs.OS)
	if err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, "seg")
	f, err := fs.OpenFile(seg, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync: %v, want EIO", err)
	}
	if got, _ := os.ReadFile(ledger); !strings.Contains(string(got), "create "+seg) {
		t.Fatalf("ledger %q", got)
	}

	t.Setenv("KRAFTD_SYNC_LEDGER", filepath.Join(dir, "missing", "ledger"))
	if _, err := FromEnv(vfs.OS); err == nil {
		t.Fatal("an unopenable ledger was accepted")
	}
}
