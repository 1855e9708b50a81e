package vfs

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// MemFS is an in-memory FS that tracks what is durable, for crash tests and
// simulations (in the style of pebble's vfs.MemFS and CrashClone): a file's
// content is durable as of its last Sync, a directory's entries (creations,
// renames, removals) as of the directory's last Sync. CrashClone returns the
// file system a machine would see after power loss at that moment. Safe for
// concurrent use.
type MemFS struct {
	mu   sync.Mutex
	root *memNode
	// afterOp, when set, runs after every operation that changes state
	// (without the lock held), so tests can crash at every step.
	afterOp func()
}

type memNode struct {
	isDir bool
	// files
	data, synced []byte
	mode         os.FileMode
	// dirs
	children, syncedChildren map[string]*memNode
}

func newDirNode() *memNode {
	return &memNode{isDir: true, children: map[string]*memNode{}, syncedChildren: map[string]*memNode{}, mode: 0o755 | os.ModeDir}
}

// NewMemFS returns an empty MemFS with a durable root "/".
func NewMemFS() *MemFS { return &MemFS{root: newDirNode()} }

// SetAfterOp installs fn to run after every mutating operation (nil
// removes it).
func (m *MemFS) SetAfterOp(fn func()) {
	m.mu.Lock()
	m.afterOp = fn
	m.mu.Unlock()
}

func (m *MemFS) changed() {
	m.mu.Lock()
	fn := m.afterOp
	m.mu.Unlock()
	if fn != nil {
		fn()
	}
}

func splitPath(p string) []string {
	p = filepath.Clean("/" + p)
	if p == "/" {
		return nil
	}
	var parts []string
	for p != "/" {
		parts = append([]string{filepath.Base(p)}, parts...)
		p = filepath.Dir(p)
	}
	return parts
}

// lookup returns the parent dir node and the node at p (nil if missing).
// Caller holds mu.
func (m *MemFS) lookup(p string) (parent *memNode, name string, n *memNode, err error) {
	parts := splitPath(p)
	if len(parts) == 0 {
		return nil, "", m.root, nil
	}
	dir := m.root
	for _, part := range parts[:len(parts)-1] {
		next, ok := dir.children[part]
		if !ok || !next.isDir {
			return nil, "", nil, &os.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		dir = next
	}
	name = parts[len(parts)-1]
	return dir, name, dir.children[name], nil
}

func (m *MemFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	m.mu.Lock()
	parent, base, n, err := m.lookup(name)
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	created := false
	switch {
	case n == nil && flag&os.O_CREATE == 0:
		m.mu.Unlock()
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	case n != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		m.mu.Unlock()
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrExist}
	case n != nil && n.isDir:
		m.mu.Unlock()
		return nil, &os.PathError{Op: "open", Path: name, Err: fmt.Errorf("is a directory")}
	case n == nil:
		n = &memNode{mode: perm}
		parent.children[base] = n
		created = true
	}
	if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		n.data = n.data[:0:0]
		created = true
	}
	f := &memFile{fs: m, n: n, name: name, readOnly: flag&(os.O_WRONLY|os.O_RDWR) == 0, appendMode: flag&os.O_APPEND != 0}
	m.mu.Unlock()
	if created {
		m.changed()
	}
	return f, nil
}

func (m *MemFS) OpenDir(name string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	if n == nil || !n.isDir {
		return nil, &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{fs: m, n: n, name: name, readOnly: true}, nil
}

func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	op, ob, on, err := m.lookup(oldname)
	if err == nil && on == nil {
		err = &os.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
	}
	if err != nil {
		m.mu.Unlock()
		return err
	}
	np, nb, _, err := m.lookup(newname)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	delete(op.children, ob)
	np.children[nb] = on
	m.mu.Unlock()
	m.changed()
	return nil
}

func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	p, b, n, err := m.lookup(name)
	if err == nil && n == nil {
		err = &os.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	if err == nil && n.isDir && len(n.children) > 0 {
		err = &os.PathError{Op: "remove", Path: name, Err: fmt.Errorf("directory not empty")}
	}
	if err != nil {
		m.mu.Unlock()
		return err
	}
	delete(p.children, b)
	m.mu.Unlock()
	m.changed()
	return nil
}

// Mkdir creates one directory. Like a new file, its entry in the parent is
// durable only once the parent is synced.
func (m *MemFS) Mkdir(name string, perm os.FileMode) error {
	m.mu.Lock()
	parent, base, n, err := m.lookup(name)
	switch {
	case err != nil:
	case parent == nil || n != nil:
		err = &os.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
	default:
		d := newDirNode()
		d.mode = perm.Perm() | os.ModeDir
		parent.children[base] = d
	}
	m.mu.Unlock()
	if err != nil {
		return err
	}
	m.changed()
	return nil
}

func (m *MemFS) List(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookup(dir)
	if err != nil {
		return nil, err
	}
	if n == nil || !n.isDir {
		return nil, &os.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
	}
	names := make([]string, 0, len(n.children))
	for k := range n.children {
		names = append(names, k)
	}
	sort.Strings(names)
	return names, nil
}

func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, &os.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return memInfo{name: filepath.Base(name), size: int64(len(n.data)), mode: n.mode}, nil
}

// ReadFile returns a file's current content (for tests).
func (m *MemFS) ReadFile(name string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookup(name)
	if err != nil {
		return nil, err
	}
	if n == nil || n.isDir {
		return nil, &os.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(n.data), nil
}

// CrashClone returns what survives a power loss now: directories hold the
// entries of their last Sync, files the content of their last Sync. When
// rng is non-nil, each file whose current content extends its synced
// content also keeps a random part of the unsynced tail (a torn write).
func (m *MemFS) CrashClone(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[*memNode]*memNode{}
	var clone func(n *memNode) *memNode
	clone = func(n *memNode) *memNode {
		if c, ok := seen[n]; ok {
			return c
		}
		if n.isDir {
			c := newDirNode()
			c.mode = n.mode
			seen[n] = c
			for k, child := range n.syncedChildren {
				cc := clone(child)
				c.children[k] = cc
				c.syncedChildren[k] = cc
			}
			return c
		}
		data := bytes.Clone(n.synced)
		if rng != nil && len(n.data) > len(n.synced) && bytes.Equal(n.data[:len(n.synced)], n.synced) {
			extra := rng.IntN(len(n.data) - len(n.synced) + 1)
			data = append(data, n.data[len(n.synced):len(n.synced)+extra]...)
		}
		c := &memNode{data: data, synced: bytes.Clone(data), mode: n.mode}
		seen[n] = c
		return c
	}
	return &MemFS{root: clone(m.root)}
}

type memFile struct {
	fs         *MemFS
	n          *memNode
	name       string
	pos        int64
	readOnly   bool
	appendMode bool
	closed     bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	off := f.pos
	if f.appendMode {
		off = int64(len(f.n.data))
	}
	f.fs.mu.Unlock()
	n, err := f.WriteAt(p, off)
	f.fs.mu.Lock()
	f.pos = off + int64(n)
	f.fs.mu.Unlock()
	return n, err
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	if f.readOnly || f.n.isDir {
		f.fs.mu.Unlock()
		return 0, &os.PathError{Op: "write", Path: f.name, Err: os.ErrPermission}
	}
	if end := off + int64(len(p)); end > int64(len(f.n.data)) {
		grown := make([]byte, end)
		copy(grown, f.n.data)
		f.n.data = grown
	}
	copy(f.n.data[off:], p)
	f.fs.mu.Unlock()
	f.fs.changed()
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	if size < int64(len(f.n.data)) {
		f.n.data = f.n.data[:size:size]
	} else {
		grown := make([]byte, size)
		copy(grown, f.n.data)
		f.n.data = grown
	}
	f.fs.mu.Unlock()
	f.fs.changed()
	return nil
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	if f.n.isDir {
		f.n.syncedChildren = make(map[string]*memNode, len(f.n.children))
		for k, v := range f.n.children {
			f.n.syncedChildren[k] = v
		}
	} else {
		f.n.synced = bytes.Clone(f.n.data)
	}
	f.fs.mu.Unlock()
	f.fs.changed()
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return memInfo{name: filepath.Base(f.name), size: int64(len(f.n.data)), mode: f.n.mode}, nil
}

func (f *memFile) Chmod(mode os.FileMode) error {
	f.fs.mu.Lock()
	f.n.mode = mode
	f.fs.mu.Unlock()
	return nil
}

func (f *memFile) Close() error { f.closed = true; return nil }

type memInfo struct {
	name string
	size int64
	mode os.FileMode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }
