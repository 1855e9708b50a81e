//go:build !linux

package osched

import "time"

// SetSlice is only available on Linux.
func SetSlice(d time.Duration) error { return ErrUnsupported }

// Slice is only available on Linux.
func Slice() (time.Duration, error) { return 0, ErrUnsupported }
