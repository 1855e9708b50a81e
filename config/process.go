package config

import (
	"time"

	"github.com/kraftd/kraftd/osched"
)

// SchedulerSliceKey is the CPU scheduler slice kraftd asks for, in
// microseconds (osched.SetSlice): a short slice lets its threads run as soon
// as they wake on a machine whose cores are busy. 0 leaves the kernel's.
const SchedulerSliceKey = "kraftd.process.scheduler.slice.us"

const defaultSchedulerSliceUs = 100

var processKeys = []string{SchedulerSliceKey}

// readProcess reads the settings of the process as a whole.
func (c *Config) readProcess(r *reader) {
	us := r.int(SchedulerSliceKey, defaultSchedulerSliceUs, 0)
	d := time.Duration(us) * time.Microsecond
	if us != 0 && (d < osched.MinSlice || d > osched.MaxSlice) {
		r.bad("%s=%d: want 0 (the kernel's) or %d to %d", SchedulerSliceKey, us, osched.MinSlice.Microseconds(), osched.MaxSlice.Microseconds())
		return
	}
	c.SchedulerSlice = d
}
