package osched

import (
	"errors"
	"time"
)

// The slice range Linux accepts for SCHED_OTHER tasks.
const (
	MinSlice = 100 * time.Microsecond
	MaxSlice = 100 * time.Millisecond
)

// ErrUnsupported is returned where the kernel has no per-task slice.
var ErrUnsupported = errors.New("osched: this kernel does not let a task choose its scheduler slice (Linux 6.12 or later does)")
