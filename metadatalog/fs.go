package metadatalog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
)

// FS is the file system the log and the quorum-state store use. It is small
// on purpose (as pebble's vfs.FS) so tests can inject failures: see FaultFS.
type FS interface {
	// OpenFile opens a file as os.OpenFile does.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// OpenDir opens a directory for Sync.
	OpenDir(name string) (File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	MkdirAll(dir string, perm os.FileMode) error
	// List returns the names in dir, sorted.
	List(dir string) ([]string, error)
	Stat(name string) (os.FileInfo, error)
}

// File is an open file of an FS.
type File interface {
	io.ReaderAt
	io.Writer
	// WriteAt is what segments use: after a truncation the file offset of
	// the descriptor no longer matches the end.
	io.WriterAt
	io.Closer
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Chmod(mode os.FileMode) error
}

// OSFS is the real file system.
var OSFS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osFS) OpenDir(name string) (File, error)           { return os.Open(name) }
func (osFS) Rename(o, n string) error                    { return os.Rename(o, n) }
func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)       { return os.Stat(name) }
func (osFS) List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	sort.Strings(names)
	return names, nil
}

// syncDir fsyncs a directory so renames, creations and removals in it are
// durable.
func syncDir(fs FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return fmt.Errorf("open dir %s: %w", dir, err)
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("fsync dir %s: %w", dir, err)
	}
	return d.Close()
}

// writeFileAtomic replaces path with data durably: a stale path.tmp is
// removed, data is written to path.tmp, fsynced, renamed over path, and the
// directory is fsynced. After a crash path holds the old or the new content.
func writeFileAtomic(fs FS, path string, data []byte) error {
	tmp := path + ".tmp"
	if err := fs.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", tmp, err)
	}
	f, err := fs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		fs.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		fs.Remove(tmp)
		return fmt.Errorf("fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	return syncDir(fs, filepath.Dir(path))
}

// FaultFS wraps an FS and injects the failures of reliability rows 9 and 10:
// a disk that fills up after a byte budget (writes then fail with ENOSPC,
// possibly after a partial write) and fsync errors (EIO). Safe for concurrent
// use.
type FaultFS struct {
	FS FS

	mu sync.Mutex
	// writeBudget is the number of bytes writes may still store; < 0 means
	// unlimited.
	writeBudget int64
	syncErr     error
	syncCount   int
}

// NewFaultFS returns a FaultFS over fs with no faults armed.
func NewFaultFS(fs FS) *FaultFS { return &FaultFS{FS: fs, writeBudget: -1} }

// FailWritesAfter makes writes fail with ENOSPC once n more bytes have been
// written (the write crossing the limit stores only what fits, as a full disk
// does). n < 0 disarms.
func (f *FaultFS) FailWritesAfter(n int64) {
	f.mu.Lock()
	f.writeBudget = n
	f.mu.Unlock()
}

// FailSyncs makes every later file or directory fsync return err (nil
// disarms).
func (f *FaultFS) FailSyncs(err error) {
	f.mu.Lock()
	f.syncErr = err
	f.mu.Unlock()
}

// Syncs counts the fsyncs attempted through f.
func (f *FaultFS) Syncs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncCount
}

func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *FaultFS) OpenDir(name string) (File, error) {
	file, err := f.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *FaultFS) Rename(o, n string) error                    { return f.FS.Rename(o, n) }
func (f *FaultFS) Remove(name string) error                    { return f.FS.Remove(name) }
func (f *FaultFS) MkdirAll(dir string, perm os.FileMode) error { return f.FS.MkdirAll(dir, perm) }
func (f *FaultFS) List(dir string) ([]string, error)           { return f.FS.List(dir) }
func (f *FaultFS) Stat(name string) (os.FileInfo, error)       { return f.FS.Stat(name) }

type faultFile struct {
	File
	fs *FaultFS
}

func (f *faultFile) Write(p []byte) (int, error) {
	return f.write(p, f.File.Write)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.File.WriteAt(b, off) })
}

func (f *faultFile) write(p []byte, w func([]byte) (int, error)) (int, error) {
	f.fs.mu.Lock()
	budget := f.fs.writeBudget
	allowed := len(p)
	if budget >= 0 && int64(allowed) > budget {
		allowed = int(budget)
	}
	if budget >= 0 {
		f.fs.writeBudget -= int64(allowed)
	}
	f.fs.mu.Unlock()
	n, err := w(p[:allowed])
	if err == nil && allowed < len(p) {
		err = &os.PathError{Op: "write", Path: "faultfs", Err: syscall.ENOSPC}
	}
	return n, err
}

func (f *faultFile) Sync() error {
	f.fs.mu.Lock()
	err := f.fs.syncErr
	f.fs.syncCount++
	f.fs.mu.Unlock()
	if err != nil {
		return err
	}
	return f.File.Sync()
}
