package faultfs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kraftd/kraftd/vfs"
)

func TestParseControl(t *testing.T) {
	rules, err := ParseControl("# stall\nsync delay 15ms quorum-state\n\nwrite error ENOSPC\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []ControlRule{{Kind: OpSync, PathContains: "quorum-state", Delay: 15 * time.Millisecond}, {Kind: OpWrite, Err: syscall.ENOSPC}}
	if len(rules) != 2 || rules[0] != want[0] || rules[1] != want[1] {
		t.Fatalf("rules %+v, want %+v", rules, want)
	}
	for _, bad := range []string{"sync", "fsync error EIO", "sync error EBADF", "sync delay -1s", "sync delay x", "sync drop EIO", "sync error EIO a b"} {
		if _, err := ParseControl(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

// TestControlInjector: the rules follow the file; a file that stops
// parsing keeps the previous rules.
func TestControlInjector(t *testing.T) {
	dir := t.TempDir()
	ctl := filepath.Join(dir, "ctl")
	c := NewControlInjector(ctl)
	ffs := Wrap(vfs.OS, c)
	f, err := ffs.OpenFile(filepath.Join(dir, "seg"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatalf("no control file: %v", err)
	}
	write := func(s string) {
		if err := os.WriteFile(ctl, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sync error EIO\n")
	if err := c.Poll(); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync: %v, want EIO", err)
	}
	write("sync nonsense\n")
	if err := c.Poll(); err == nil {
		t.Fatal("bad control file accepted")
	}
	if err := f.Sync(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("after a bad file: %v, want the previous rule's EIO", err)
	}
	write("sync delay 30ms\n")
	c.Poll()
	start := time.Now()
	if err := f.Sync(); err != nil || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("delayed sync: %v after %v", err, time.Since(start))
	}
	write("")
	c.Poll()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
}
