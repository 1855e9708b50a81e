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
// creates them; a thread started while SetSlice runs, by a thread not yet
// set, is caught by the next pass. Each thread keeps its policy and nice
// value; threads under a real-time or deadline policy (an operator's choice)
// are left alone. It returns ErrUnsupported when the kernel accepts the
// request but does not apply it (before Linux 6.12).
func SetSlice(d time.Duration) error {
	if d < MinSlice || d > MaxSlice {
		return fmt.Errorf("osched: slice %v: must be in [%v, %v]", d, MinSlice, MaxSlice)
	}
	want := uint64(d.Nanoseconds())
	for pass := 0; pass < maxPasses; pass++ {
		tids, err := threads()
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			a, err := unix.SchedGetAttr(tid, 0)
			if errors.Is(err, unix.ESRCH) {
				continue // the thread exited
			}
			if err != nil {
				return fmt.Errorf("osched: sched_getattr thread %d: %w", tid, err)
			}
			if (a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH) || a.Runtime == want {
				continue
			}
			a.Runtime = want
			err = unix.SchedSetAttr(tid, a, 0)
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			if err != nil {
				return fmt.Errorf("osched: sched_setattr thread %d: %w", tid, err)
			}
			if a, err = unix.SchedGetAttr(tid, 0); err == nil && a.Runtime != want {
				return ErrUnsupported // accepted, not applied
			}
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return nil
}

// maxPasses bounds SetSlice's passes over the threads: the runtime starts
// only a few threads at a time, and inherited slices need no pass.
const maxPasses = 3

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
