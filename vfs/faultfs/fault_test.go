package faultfs

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/kraftd/kraftd/vfs"
)

func TestInjectors(t *testing.T) {
	mem := vfs.NewMemFS()
	if err := vfs.MkdirAll(mem, "/d", 0o755); err != nil {
		t.Fatal(err)
	}
	ffs := Wrap(mem, DiskFull(5))
	f, err := ffs.OpenFile("/d/f", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("within budget: %d %v", n, err)
	}
	n, err := f.Write([]byte("defg"))
	if n != 2 || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/d/f") {
		t.Fatalf("crossing the budget: %d %v", n, err)
	}
	if got, _ := mem.ReadFile("/d/f"); string(got) != "abcde" {
		t.Fatalf("short write stored %q", got)
	}
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("full disk: %v", err)
	}

	// If narrows, OnIndex picks the second matching sync, Reset disarms.
	ffs.Reset()
	ffs.Inject(OnIndex(1, If(func(op Op) bool { return strings.HasSuffix(op.Path, "/d") }, Fail(syscall.EIO, OpSync))))
	if err := f.Sync(); err != nil {
		t.Fatalf("file sync: %v", err)
	}
	for i, want := range []error{nil, syscall.EIO, nil} {
		if err := vfs.SyncDir(ffs, "/d"); !errors.Is(err, want) && err != want {
			t.Fatalf("dir sync %d: %v, want %v", i, err, want)
		}
	}
	if got := ffs.Count(OpSync); got != 4 {
		t.Fatalf("counted %d syncs", got)
	}
	ffs.Reset()
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
}
