package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// FS is the file system kraftd's storage uses. It is small on purpose (as
// pebble's vfs.FS) so tests can swap in MemFS or wrap it in faultfs.FS.
type FS interface {
	// OpenFile opens a file as os.OpenFile does.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// OpenDir opens a directory for Sync.
	OpenDir(name string) (File, error)
	Rename(oldname, newname string) error
	Remove(name string) error
	// Mkdir creates one directory as os.Mkdir does. Use MkdirAll, which
	// also makes the new entry durable.
	Mkdir(name string, perm os.FileMode) error
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

// OS is the real file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return os.OpenFile(name, flag, perm)
}
func (osFS) OpenDir(name string) (File, error)         { return os.Open(name) }
func (osFS) Rename(o, n string) error                  { return os.Rename(o, n) }
func (osFS) Remove(name string) error                  { return os.Remove(name) }
func (osFS) Mkdir(name string, perm os.FileMode) error { return os.Mkdir(name, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)     { return os.Stat(name) }
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

// Or returns fs, or OS when fs is nil (the default of every FS option).
func Or(fs FS) FS {
	if fs == nil {
		return OS
	}
	return fs
}

// SyncDir fsyncs a directory so creations, renames and removals in it are
// durable.
func SyncDir(fs FS, dir string) error {
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

// MkdirAll creates dir and any missing parents as os.MkdirAll does, and
// fsyncs the parent of each directory it creates: a new directory's entry,
// like a new file's, survives a power loss only once its parent is synced,
// and losing a partition dir would lose the quorum-state (a vote already
// cast) inside it. A directory that already exists is left as it is.
func MkdirAll(fs FS, dir string, perm os.FileMode) error {
	dir = filepath.Clean(dir)
	if st, err := fs.Stat(dir); err == nil {
		if st.IsDir() {
			return nil
		}
		return &os.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := MkdirAll(fs, parent, perm); err != nil {
			return err
		}
	}
	if err := fs.Mkdir(dir, perm); err != nil {
		// Created meanwhile by someone else, who owns its durability (as
		// os.MkdirAll, a directory there is success).
		if st, serr := fs.Stat(dir); serr == nil && st.IsDir() {
			return nil
		}
		return err
	}
	return SyncDir(fs, parent)
}

// WriteFileAtomic replaces path with data durably, staging it in path.tmp.
// See WriteFileAtomicVia.
func WriteFileAtomic(fs FS, path string, data []byte) error {
	return WriteFileAtomicVia(fs, path+".tmp", path, data, 0)
}

// WriteFileAtomicVia replaces path with data durably: a stale temp is
// removed, data is written to temp (which must be in path's directory),
// fsynced, renamed over path, and the directory is fsynced. After a crash
// path holds the old or the new content, never a mix, and once it returns
// nil the new content survives a crash. A mode other than 0 is applied to
// the file before the rename (0o444 freezes a snapshot); failing to apply it
// does not endanger the content, so it is not an error. On error the temp
// is removed (best effort).
func WriteFileAtomicVia(fs FS, temp, path string, data []byte, mode os.FileMode) error {
	if err := fs.Remove(temp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", temp, err)
	}
	f, err := fs.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", temp, err)
	}
	fail := func(err error) error {
		fs.Remove(temp)
		return err
	}
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		f.Close()
		return fail(fmt.Errorf("write %s: %w", temp, err))
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fail(fmt.Errorf("fsync %s: %w", temp, err))
	}
	if mode != 0 {
		f.Chmod(mode)
	}
	if err := f.Close(); err != nil {
		return fail(fmt.Errorf("close %s: %w", temp, err))
	}
	if err := fs.Rename(temp, path); err != nil {
		return fail(fmt.Errorf("rename %s to %s: %w", temp, path, err))
	}
	return SyncDir(fs, filepath.Dir(path))
}

// ReadFile returns the content of name, refusing files larger than limit
// bytes (the files read this way are small; anything big is not the file
// expected and must not be loaded into memory whole).
func ReadFile(fs FS, name string, limit int64) ([]byte, error) {
	f, err := fs.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, 0, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return data, nil
}
