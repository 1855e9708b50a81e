package main

import (
	"slices"
	"strings"
)

// sysmonSetting keeps the Go runtime's monitor thread (sysmon) out of its
// deep sleep in the node commands. When every P of a process is idle, sysmon
// sleeps until the next system call wakes it, and then polls every 20 µs
// again (the period is fixed: golang/go#18236). A node goes idle and wakes
// again at every commit round, hundreds of times a second, so its sysmon
// polled at 20-80 µs almost without pause: a futex wake-up and a context
// switch each time. On a 2-core machine (bench-quorum a0, linger 0,
// interleaved pairs), the three nodes used 0.60-0.61 cores at 20,000
// records/s with the deep sleep and 0.46-0.48 without (3 pairs), 1.00 and
// 0.66 at 100,000 records/s, with p99 unchanged. With two spinning threads in
// the nodes' session the kernel worker every fsync waits for (ext4's
// unwritten-extent conversion) was seen waiting 100 ms for a CPU on which a
// node's sysmon woke every ~90 µs; p99 there went from 67 and 139 ms to 47
// and 105 (2 pairs). Without the deep sleep, sysmon backs off
// to 10 ms while it has nothing to do, as it does whenever the process is
// busy.
//
// GODEBUG's schedtrace is the runtime's only switch for the deep sleep. Its
// period here, 2^31-1 ms (24.8 days), is counted on the monotonic clock from
// the host's boot, so a host up longer than that gets one scheduler trace
// line on stderr per period.
const sysmonSetting = "schedtrace=2147483647"

// sysmonCommands are the commands that run a node.
var sysmonCommands = map[string]bool{"start": true, "test-kraft-server-start": true}

// sysmonEnv returns environ with sysmonSetting added to GODEBUG (the first
// one, which the runtime reads), and whether it added it: not when GODEBUG
// names schedtrace already (an operator's choice; schedtrace=0 keeps Go's
// deep sleep).
func sysmonEnv(environ []string) ([]string, bool) {
	for i, kv := range environ {
		v, ok := strings.CutPrefix(kv, "GODEBUG=")
		if !ok {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if key, _, _ := strings.Cut(f, "="); strings.TrimSpace(key) == "schedtrace" {
				return environ, false
			}
		}
		out := slices.Clone(environ)
		if strings.TrimSpace(v) == "" {
			out[i] = "GODEBUG=" + sysmonSetting
		} else {
			out[i] = kv + "," + sysmonSetting
		}
		return out, true
	}
	return append(slices.Clone(environ), "GODEBUG="+sysmonSetting), true
}
