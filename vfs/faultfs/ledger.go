package faultfs

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/kraftd/kraftd/vfs"
)

// SyncLedger wraps a vfs.FS and records, for every file, the size it had at
// its last successful fsync: what a power loss cannot take away. A process
// killed with -9 keeps all it wrote in the page cache; a test that cuts
// each file back to some size between its ledger size and its current one
// afterwards gives that process the disk a power loss would have left
// (the unflushed tail gone, the last write possibly torn).
//
// The ledger is a text file of lines "create PATH", "trunc PATH",
// "sync SIZE PATH", "rename OLD\tNEW" and "remove PATH", appended without
// fsync (the page cache outlives the process; the machine is not what
// fails). DurableSizes reads it back.
type SyncLedger struct {
	vfs.FS
	mu sync.Mutex
	w  io.Writer
}

// NewSyncLedger returns fs recording its durable sizes to w.
func NewSyncLedger(fs vfs.FS, w io.Writer) *SyncLedger { return &SyncLedger{FS: fs, w: w} }

func (l *SyncLedger) record(format string, args ...any) {
	l.mu.Lock()
	fmt.Fprintf(l.w, format+"\n", args...)
	l.mu.Unlock()
}

func (l *SyncLedger) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := l.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	switch {
	case flag&os.O_TRUNC != 0:
		l.record("trunc %s", name)
	case flag&os.O_CREATE != 0:
		l.record("create %s", name)
	}
	return &ledgerFile{File: f, l: l, name: name}, nil
}

func (l *SyncLedger) Rename(oldname, newname string) error {
	if err := l.FS.Rename(oldname, newname); err != nil {
		return err
	}
	l.record("rename %s\t%s", oldname, newname)
	return nil
}

func (l *SyncLedger) Remove(name string) error {
	if err := l.FS.Remove(name); err != nil {
		return err
	}
	l.record("remove %s", name)
	return nil
}

type ledgerFile struct {
	vfs.File
	l    *SyncLedger
	name string
}

// Sync records the size from before the fsync: a write on another
// goroutine may land during it (a leader's flush job runs beside its
// appends), and only what was written before the fsync began is durable.
func (f *ledgerFile) Sync() error {
	st, err := f.File.Stat()
	if err != nil {
		return err
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.l.record("sync %d %s", st.Size(), f.name)
	return nil
}

// DurableSizes replays a SyncLedger's text: the size at its last fsync of
// every file the ledger saw created or synced (0 if never synced; renames
// carry a size to the new name; removals drop it). A file absent from the
// map was not written through the ledger. A last line cut short by the
// kill that ended the process is ignored.
func DurableSizes(text string) (map[string]int64, error) {
	lines := strings.Split(text, "\n")
	lines = lines[:len(lines)-1] // "" after the last newline, or a cut line
	sizes := map[string]int64{}
	for n, line := range lines {
		if err := replay(sizes, line); err != nil {
			return nil, fmt.Errorf("sync ledger line %d %q: %w", n+1, line, err)
		}
	}
	return sizes, nil
}

func replay(sizes map[string]int64, line string) error {
	verb, rest, _ := strings.Cut(line, " ")
	switch verb {
	case "create":
		if _, known := sizes[rest]; !known {
			sizes[rest] = 0
		}
	case "trunc":
		sizes[rest] = 0
	case "sync":
		num, path, ok := strings.Cut(rest, " ")
		size, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || size < 0 {
			return fmt.Errorf("bad sync")
		}
		sizes[path] = size
	case "rename":
		from, to, ok := strings.Cut(rest, "\t")
		if !ok {
			return fmt.Errorf("bad rename")
		}
		if size, known := sizes[from]; known {
			sizes[to] = size
		} else {
			delete(sizes, to)
		}
		delete(sizes, from)
	case "remove":
		delete(sizes, rest)
	default:
		return fmt.Errorf("unknown record")
	}
	return nil
}
