package osched

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kraftd/kraftd/internal/testenv"
)

func TestSetSliceRange(t *testing.T) {
	for _, d := range []time.Duration{0, MinSlice - 1, MaxSlice + 1} {
		if err := SetSlice(d); err == nil {
			t.Errorf("SetSlice(%v) accepted", d)
		}
	}
}

// Every thread gets the slice, and threads the runtime starts afterwards
// inherit it.
func TestSetSliceAllThreadsAndInherited(t *testing.T) {
	const d = 300 * time.Microsecond
	err := SetSlice(d)
	if errors.Is(err, ErrUnsupported) {
		if got, _ := Slice(); got == d {
			t.Fatalf("ErrUnsupported, yet the thread reports the slice %v", got)
		}
		testenv.Skip(t, "kernel without per-task slices (Linux 6.12+): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tids, err := threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // exited
		}
		if time.Duration(a.Runtime) != d {
			t.Errorf("thread %d: slice %v, want %v", tid, time.Duration(a.Runtime), d)
		}
	}
	// More goroutines locked to threads, and kept there, than there are
	// threads: the runtime must start new ones.
	n := len(tids) + 2
	got := make(chan time.Duration, n)
	release := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			s, err := Slice()
			if err != nil {
				t.Error(err)
			}
			got <- s
			<-release
		}()
	}
	for range n {
		if s := <-got; s != d {
			t.Errorf("a thread started later has slice %v, want %v", s, d)
		}
	}
	after, _ := threads()
	close(release)
	if len(after) <= len(tids) {
		t.Errorf("no new thread was started (%d before, %d after): inheritance untested", len(tids), len(after))
	}
}
