package faultfs

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/kraftd/kraftd/vfs"
)

// OpKind is the kind of a file-system operation FS sees.
type OpKind int

// The operations FS offers to its injectors. Reads, Stat and Close are
// not offered: the failures worth testing are the ones that can lose or
// tear data.
const (
	OpCreate   OpKind = iota // OpenFile with O_CREATE
	OpOpen                   // OpenFile without O_CREATE, and OpenDir
	OpWrite                  // File.Write and File.WriteAt
	OpSync                   // File.Sync of a file or a directory
	OpTruncate               // File.Truncate
	OpRename
	OpRemove
	OpMkdir
	numOpKinds
)

var opNames = [...]string{"create", "open", "write", "sync", "truncate", "rename", "remove", "mkdir"}

func (k OpKind) String() string {
	if k < 0 || k >= numOpKinds {
		return fmt.Sprintf("OpKind(%d)", int(k))
	}
	return opNames[k]
}

// Op is an operation about to run.
type Op struct {
	Kind OpKind
	// Path is the file or directory operated on (the old name of a rename).
	Path string
	// Size is the byte count of a write.
	Size int
}

// Injector decides whether an operation fails (cf. pebble's
// vfs/errorfs.Injector). Injectors compose: see Fail, OnIndex, If and
// DiskFull.
type Injector interface {
	// MaybeError returns nil to let op run, or the error it fails with
	// instead. For a write, a *ShortWriteError stores a prefix first.
	MaybeError(op Op) error
}

// InjectorFunc adapts a function to Injector.
type InjectorFunc func(Op) error

// MaybeError implements Injector.
func (f InjectorFunc) MaybeError(op Op) error { return f(op) }

// ShortWriteError, returned by an injector for a write, makes FS store
// the first N bytes of the write and then fail with Err, as a disk filling up
// mid-write does.
type ShortWriteError struct {
	N   int
	Err error
}

func (e *ShortWriteError) Error() string { return e.Err.Error() }
func (e *ShortWriteError) Unwrap() error { return e.Err }

// Fail fails every operation of the given kinds (all kinds when none are
// given) with err.
func Fail(err error, kinds ...OpKind) Injector {
	return InjectorFunc(func(op Op) error {
		if len(kinds) == 0 {
			return err
		}
		for _, k := range kinds {
			if op.Kind == k {
				return err
			}
		}
		return nil
	})
}

// If lets in decide only the operations pred accepts.
func If(pred func(Op) bool, in Injector) Injector {
	return InjectorFunc(func(op Op) error {
		if !pred(op) {
			return nil
		}
		return in.MaybeError(op)
	})
}

// OnIndex fails only the index-th (from 0) operation that in would fail,
// and lets every other one run: sweeping index over 0, 1, 2, ... fails each
// step of a procedure in turn. Safe for concurrent use.
func OnIndex(index int, in Injector) Injector {
	var mu sync.Mutex
	seen := 0
	return InjectorFunc(func(op Op) error {
		err := in.MaybeError(op)
		if err == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen-1 == index {
			return err
		}
		return nil
	})
}

// DiskFull lets writes store budget more bytes; the write crossing the
// limit stores only what fits and fails with ENOSPC, as does every later
// one. Safe for concurrent use.
func DiskFull(budget int64) Injector {
	var mu sync.Mutex
	return InjectorFunc(func(op Op) error {
		if op.Kind != OpWrite {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if int64(op.Size) <= budget {
			budget -= int64(op.Size)
			return nil
		}
		n := int(budget)
		budget = 0
		return &ShortWriteError{N: n, Err: syscall.ENOSPC}
	})
}

// FS wraps a vfs.FS and offers every operation to its injectors first, in
// the order they were added; the first error wins and the operation does not
// run (a short write stores its prefix). Injected errors come wrapped in an
// *os.PathError, as the OS reports them. Safe for concurrent use.
type FS struct {
	fs vfs.FS

	mu        sync.Mutex
	injectors []Injector
	// counts are the operations attempted, by kind, failed or not.
	counts [numOpKinds]int
}

// Wrap returns an FS over fs with the given injectors armed.
func Wrap(fs vfs.FS, injectors ...Injector) *FS {
	return &FS{fs: fs, injectors: injectors}
}

// Inject arms more injectors.
func (f *FS) Inject(injectors ...Injector) {
	f.mu.Lock()
	f.injectors = append(f.injectors, injectors...)
	f.mu.Unlock()
}

// Reset disarms every injector.
func (f *FS) Reset() {
	f.mu.Lock()
	f.injectors = nil
	f.mu.Unlock()
}

// Count returns how many operations of kind were attempted through f.
func (f *FS) Count(kind OpKind) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[kind]
}

func (f *FS) check(op Op) error {
	f.mu.Lock()
	f.counts[op.Kind]++
	injectors := f.injectors
	f.mu.Unlock()
	for _, in := range injectors {
		err := in.MaybeError(op)
		if err == nil {
			continue
		}
		if short, ok := err.(*ShortWriteError); ok {
			return &ShortWriteError{N: short.N, Err: pathError(op, short.Err)}
		}
		return pathError(op, err)
	}
	return nil
}

func pathError(op Op, err error) error {
	if _, ok := err.(*os.PathError); ok {
		return err
	}
	return &os.PathError{Op: op.Kind.String(), Path: op.Path, Err: err}
}

func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	kind := OpOpen
	if flag&os.O_CREATE != 0 {
		kind = OpCreate
	}
	if err := f.check(Op{Kind: kind, Path: name}); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *FS) OpenDir(name string) (vfs.File, error) {
	if err := f.check(Op{Kind: OpOpen, Path: name}); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *FS) Rename(oldname, newname string) error {
	if err := f.check(Op{Kind: OpRename, Path: oldname}); err != nil {
		return err
	}
	return f.fs.Rename(oldname, newname)
}

func (f *FS) Remove(name string) error {
	if err := f.check(Op{Kind: OpRemove, Path: name}); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

func (f *FS) Mkdir(name string, perm os.FileMode) error {
	if err := f.check(Op{Kind: OpMkdir, Path: name}); err != nil {
		return err
	}
	return f.fs.Mkdir(name, perm)
}

func (f *FS) List(dir string) ([]string, error)     { return f.fs.List(dir) }
func (f *FS) Stat(name string) (os.FileInfo, error) { return f.fs.Stat(name) }

type faultFile struct {
	vfs.File
	fs   *FS
	name string
}

func (f *faultFile) Write(p []byte) (int, error) {
	return f.write(p, f.File.Write)
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.File.WriteAt(b, off) })
}

func (f *faultFile) write(p []byte, w func([]byte) (int, error)) (int, error) {
	err := f.fs.check(Op{Kind: OpWrite, Path: f.name, Size: len(p)})
	if err == nil {
		return w(p)
	}
	short, ok := err.(*ShortWriteError)
	if !ok {
		return 0, err
	}
	n, werr := w(p[:min(max(short.N, 0), len(p))])
	if werr != nil {
		return n, werr
	}
	return n, short.Err
}

func (f *faultFile) Sync() error {
	if err := f.fs.check(Op{Kind: OpSync, Path: f.name}); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.check(Op{Kind: OpTruncate, Path: f.name}); err != nil {
		return err
	}
	return f.File.Truncate(size)
}
