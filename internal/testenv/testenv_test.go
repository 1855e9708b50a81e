package testenv

import (
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records what Skip and WaitFor do to a test without ending the real one.
type fakeT struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Skip(args ...any) {
	f.skipped = true
	f.msg = args[0].(string)
}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = true
	f.msg = format
}

func TestSkipFailsUnderCI(t *testing.T) {
	t.Setenv(CIEnv, "")
	f := &fakeT{}
	Skip(f, "no %s", "tool")
	if !f.skipped || f.failed || f.msg != "no tool" {
		t.Fatalf("outside CI: skipped %v failed %v (%q)", f.skipped, f.failed, f.msg)
	}
	for _, v := range []string{"1", "true"} {
		t.Setenv(CIEnv, v)
		f = &fakeT{}
		Skip(f, "no tool")
		if f.skipped || !f.failed {
			t.Fatalf("%s=%s: skipped %v failed %v", CIEnv, v, f.skipped, f.failed)
		}
	}
	t.Setenv(CIEnv, "0")
	if CI() {
		t.Fatalf("%s=0 counts as CI", CIEnv)
	}
}

func TestWaitFor(t *testing.T) {
	var n atomic.Int32
	f := &fakeT{}
	WaitFor(f, time.Minute, "three looks", func() bool { return n.Add(1) >= 3 })
	if f.failed || n.Load() != 3 {
		t.Fatalf("failed %v after %d looks", f.failed, n.Load())
	}
	WaitFor(f, 0, "never", func() bool { return false })
	if !f.failed {
		t.Fatal("a condition that never holds did not fail the test")
	}
}
