package metadatalog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
)

// mkBatch encodes a data batch of n records of size bytes each (values
// derived from base and i so every batch differs).
func mkBatch(base int64, epoch int32, n, size int) []byte {
	recs := make([]protocol.Record, n)
	for i := range recs {
		v := bytes.Repeat([]byte{byte(base + int64(i))}, size)
		copy(v, fmt.Sprintf("%d/%d", base, i))
		recs[i] = protocol.Record{Value: v}
	}
	return protocol.AppendBatch(nil, protocol.Batch{BaseOffset: base, PartitionLeaderEpoch: epoch, BaseTimestamp: 1700000000000 + base, Records: recs})
}

type testLog struct {
	*Log
	t    testing.TB
	opts Options
	logs *observer.ObservedLogs
}

func smallOpts(dir string) Options {
	return Options{Dir: dir, SegmentMinBytes: 1024, SegmentBytes: 4096}
}

func openTest(t testing.TB, opts Options) *testLog {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	opts.Logger = zap.New(core)
	l, err := Open(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return &testLog{Log: l, t: t, opts: opts, logs: logs}
}

func (tl *testLog) reopen() {
	tl.t.Helper()
	tl.Close()
	n := openTest(tl.t, tl.opts)
	*tl = *n
}

// mustFlush flushes, failing the test on an error.
func (tl *testLog) mustFlush() {
	tl.t.Helper()
	if err := tl.Flush(); err != nil {
		tl.t.Fatalf("flush: %v", err)
	}
}

func (tl *testLog) mustAppend(b []byte) int64 {
	tl.t.Helper()
	last, err := tl.Append(b)
	if err != nil {
		tl.t.Fatalf("append: %v", err)
	}
	return last
}

// all returns every batch in the log, concatenated.
func (tl *testLog) all() []byte {
	tl.t.Helper()
	var out []byte
	if err := tl.Batches(tl.StartOffset(), func(b []byte) error { out = append(out, b...); return nil }); err != nil {
		tl.t.Fatalf("batches: %v", err)
	}
	return out
}

func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	return m
}

func fileSize(t testing.TB, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

var _ = raft.OffsetAndEpoch{}

// noSyncFS skips fsyncs: tests that simulate crashes by editing files
// themselves do not need the kernel's durability, only its speed.
type noSyncFS struct{ vfs.FS }

func (f noSyncFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{file}, nil
}

func (f noSyncFS) OpenDir(name string) (vfs.File, error) {
	file, err := f.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return noSyncFile{file}, nil
}

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error { return nil }
