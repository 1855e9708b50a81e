package faultfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/vfs"
)

// TestSyncLedgerDurableSizes: the ledger of real file operations replays to
// each file's size at its last fsync, following renames and removals, and
// leaves out files it never saw.
func TestSyncLedgerDurableSizes(t *testing.T) {
	dir := t.TempDir()
	var rec strings.Builder
	fs := NewSyncLedger(vfs.OS, &rec)
	p := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, flag int, data string, sync bool) {
		t.Helper()
		f, err := fs.OpenFile(p(name), flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
		if sync {
			if err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("seg", os.O_CREATE|os.O_WRONLY, "0123456789", true)
	write("seg", os.O_WRONLY|os.O_APPEND, "unsynced", false)
	write("new", os.O_CREATE|os.O_WRONLY, "never synced", false)
	write("state.tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, "epoch 7", true)
	if err := fs.Rename(p("state.tmp"), p("state")); err != nil {
		t.Fatal(err)
	}
	write("gone", os.O_CREATE|os.O_WRONLY, "x", true)
	if err := fs.Remove(p("gone")); err != nil {
		t.Fatal(err)
	}
	write("state.tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, "epoch 8, not yet synced", false)
	if err := os.WriteFile(p("outside"), []byte("not through the ledger"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := DurableSizes(rec.String() + "sync 12") // a line cut by a kill
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{p("seg"): 10, p("new"): 0, p("state"): 7, p("state.tmp"): 0}
	if len(got) != len(want) {
		t.Fatalf("durable sizes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: durable size %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
	if _, err := DurableSizes("sync x /a\n"); err == nil {
		t.Error("a bad size was accepted")
	}
	if _, err := DurableSizes("frob /a\n"); err == nil {
		t.Error("an unknown record was accepted")
	}
}
