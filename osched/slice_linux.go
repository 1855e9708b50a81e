package osched

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// SetSlice asks for a scheduler slice of d for every thread of this process.
// Threads the Go runtime starts later inherit it from the thread that
// creates them. Each thread keeps its policy and nice value; threads under a
// real-time or deadline policy (an operator's choice) are left alone. It
// returns ErrUnsupported when the kernel accepts the request but does not
// apply it (before Linux 6.12).
func SetSlice(d time.Duration) error {
	if d < MinSlice || d > MaxSlice {
		return fmt.Errorf("osched: slice %v: must be in [%v, %v]", d, MinSlice, MaxSlice)
	}
	tids, err := threads()
	if err != nil {
		return err
	}
	want := uint64(d.Nanoseconds())
	applied := 0
	for _, tid := range tids {
		a, err := unix.SchedGetAttr(tid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // the thread exited
		}
		if err != nil {
			return fmt.Errorf("osched: sched_getattr thread %d: %w", tid, err)
		}
		if a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH {
			continue
		}
		a.Runtime = want
		if err := unix.SchedSetAttr(tid, a, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("osched: sched_setattr thread %d: %w", tid, err)
		}
		applied++
	}
	if applied == 0 {
		return nil
	}
	got, err := Slice()
	if err != nil {
		return err
	}
	if got != d {
		return ErrUnsupported
	}
	return nil
}

// Slice returns the calling thread's scheduler slice, as the kernel reports
// it (0 before Linux 6.12).
func Slice() (time.Duration, error) {
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return 0, fmt.Errorf("osched: sched_getattr: %w", err)
	}
	return time.Duration(a.Runtime), nil
}

// threads lists this process's thread ids.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("osched: list threads: %w", err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
