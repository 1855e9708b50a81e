package vfs_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// TestWriteFileAtomicCrashAtEveryStep: after a power loss at any point of a
// replacement the file holds the old or the new content, and the new one
// once vfs.WriteFileAtomic returned.
func TestWriteFileAtomicCrashAtEveryStep(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := vfs.MkdirAll(mem, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	old, next := []byte("old content"), bytes.Repeat([]byte("new content "), 100)
	if err := vfs.WriteFileAtomic(mem, "/d/f", old); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var images []*vfs.MemFS
	mem.SetAfterOp(func() { images = append(images, mem.CrashClone(nil), mem.CrashClone(rng)) })
	if err := vfs.WriteFileAtomic(mem, "/d/f", next); err != nil {
		t.Fatal(err)
	}
	mem.SetAfterOp(nil)
	if len(images) < 8 {
		t.Fatalf("only %d crash images", len(images))
	}
	for i, img := range images {
		got, err := img.ReadFile("/d/f")
		if err != nil || (!bytes.Equal(got, old) && !bytes.Equal(got, next)) {
			t.Fatalf("image %d: %q %v", i, got, err)
		}
	}
	if got, _ := mem.CrashClone(nil).ReadFile("/d/f"); !bytes.Equal(got, next) {
		t.Fatal("a completed write must survive a crash")
	}
}

// TestMkdirAll: the directories it creates survive a power loss, one made
// by Mkdir alone does not, and every failure is reported.
func TestMkdirAll(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := vfs.MkdirAll(mem, "/a/b/c", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := mem.Mkdir("/a/lost", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.MkdirAll(mem, "/a/b", 0o755); err != nil {
		t.Fatalf("existing dir: %v", err)
	}
	crashed := mem.CrashClone(nil)
	if _, err := crashed.Stat("/a/lost"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a dir whose parent was never synced survived a power loss: %v", err)
	}
	st, err := crashed.Stat("/a/b/c")
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("created dir after a power loss: %v %v", st, err)
	}

	if err := vfs.WriteFileAtomic(mem, "/a/f", nil); err != nil {
		t.Fatal(err)
	}
	if err := vfs.MkdirAll(mem, "/a/f/g", 0o755); !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("under a file: %v", err)
	}
	for _, kind := range []faultfs.OpKind{faultfs.OpMkdir, faultfs.OpOpen, faultfs.OpSync} {
		ffs := faultfs.Wrap(mem, faultfs.Fail(syscall.EIO, kind))
		if err := vfs.MkdirAll(ffs, "/a/x/y", 0o755); !errors.Is(err, syscall.EIO) {
			t.Fatalf("failing %v: %v", kind, err)
		}
	}
}

func TestWriteFileAtomicViaMode(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := vfs.MkdirAll(mem, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := vfs.WriteFileAtomicVia(mem, "/d/x.part", "/d/x", []byte("data"), 0o444); err != nil {
		t.Fatal(err)
	}
	st, err := mem.Stat("/d/x")
	if err != nil || st.Mode().Perm() != 0o444 {
		t.Fatalf("mode %v %v", st, err)
	}
	if names, _ := mem.List("/d"); len(names) != 1 {
		t.Fatalf("left %q", names)
	}
}

// TestWriteFileAtomicFailures: each failing step is reported, leaves the old
// content and no temp file.
func TestWriteFileAtomicFailures(t *testing.T) {
	for i := 0; ; i++ {
		mem := vfs.NewMemFS()
		if err := vfs.MkdirAll(mem, "/d", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := vfs.WriteFileAtomic(mem, "/d/f", []byte("old")); err != nil {
			t.Fatal(err)
		}
		ffs := faultfs.Wrap(mem, faultfs.OnIndex(i, faultfs.Fail(syscall.EIO)))
		err := vfs.WriteFileAtomic(ffs, "/d/f", []byte("new"))
		if err == nil {
			if i < 5 {
				t.Fatalf("only %d steps", i)
			}
			return
		}
		if !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "/d") {
			t.Fatalf("step %d: %v", i, err)
		}
		got, _ := mem.ReadFile("/d/f")
		names, _ := mem.List("/d")
		// Only a failed dir fsync comes after the rename.
		if (!bytes.Equal(got, []byte("old")) && !bytes.Equal(got, []byte("new"))) || len(names) != 1 {
			t.Fatalf("step %d: content %q, files %q", i, got, names)
		}
	}
}
