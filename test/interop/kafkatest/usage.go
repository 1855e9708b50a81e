package kafkatest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Usage is a process's resource use so far, from /proc (Linux).
type Usage struct {
	CPU     time.Duration // user + system time
	PeakRSS int64         // bytes (VmHWM)
	RSS     int64         // bytes (VmRSS)
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// Usage reads the process's CPU time and memory high-water mark. It must be called while
// the process runs (before Stop or Kill).
func (p *Process) Usage() (Usage, error) {
	if exited, _ := p.Exited(); exited {
		return Usage{}, fmt.Errorf("kafkatest: %s has exited: no usage to read", p.Name)
	}
	return procUsage(p.Pid())
}

// ResetPeakRSS sets the process's VmHWM back to its current RSS (clear_refs 5, Linux 4.0+),
// so that a later Usage reports the peak since the reset.
func (p *Process) ResetPeakRSS() error {
	if exited, _ := p.Exited(); exited {
		return fmt.Errorf("kafkatest: %s has exited: no peak RSS to reset", p.Name)
	}
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.Pid()), []byte("5"), 0); err != nil {
		return fmt.Errorf("kafkatest: reset peak RSS of %s: %w", p.Name, err)
	}
	return nil
}

// PidUsage reads the usage of any running process by pid, as Usage does.
func PidUsage(pid int) (Usage, error) { return procUsage(pid) }

func procUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("kafkatest: usage: %w", err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("kafkatest: usage: %w", err)
	}
	return parseProcUsage(stat, status)
}

// parseProcUsage reads utime and stime (fields 14 and 15 of /proc/pid/stat, counted after
// the parenthesised command name, which may hold spaces) and VmHWM / VmRSS of
// /proc/pid/status.
func parseProcUsage(stat, status []byte) (Usage, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return Usage{}, fmt.Errorf("kafkatest: malformed /proc stat %q", stat)
	}
	f := strings.Fields(string(stat[i+1:]))
	// After ")": state(3) ppid(4) ... utime(14) stime(15): indexes 11 and 12 here.
	if len(f) < 13 {
		return Usage{}, fmt.Errorf("kafkatest: short /proc stat %q", stat)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Usage{}, fmt.Errorf("kafkatest: /proc stat times %q %q", f[11], f[12])
	}
	u := Usage{CPU: time.Duration(ut+st) * time.Second / clockTicks}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) != 2 || fields[1] != "kB" {
			return Usage{}, fmt.Errorf("kafkatest: /proc status %s: %q", k, v)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return Usage{}, fmt.Errorf("kafkatest: /proc status %s: %w", k, err)
		}
		if k == "VmHWM" {
			u.PeakRSS = kb * 1024
		} else {
			u.RSS = kb * 1024
		}
	}
	return u, nil
}

// RaftThroughput is one report line of TestRaftServer's leader:
// "Throughput (bytes/second): %.2f, Latency (ms): %.1f p75 %.1f p99 %.1f p999".
type RaftThroughput struct {
	BytesPerSec          float64
	P75Ms, P99Ms, P999Ms float64
}

var throughputLine = regexp.MustCompile(`Throughput \(bytes/second\): ([0-9.]+), Latency \(ms\): ([0-9.]+) p75 ([0-9.]+) p99 ([0-9.]+) p999`)

// ParseRaftThroughput returns every throughput report in TestRaftServer output, in order.
func ParseRaftThroughput(out string) []RaftThroughput {
	var r []RaftThroughput
	for _, m := range throughputLine.FindAllStringSubmatch(out, -1) {
		var v [4]float64
		ok := true
		for i := range v {
			f, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				ok = false
				break
			}
			v[i] = f
		}
		if ok {
			r = append(r, RaftThroughput{BytesPerSec: v[0], P75Ms: v[1], P99Ms: v[2], P999Ms: v[3]})
		}
	}
	return r
}

// Throughput returns the throughput reports the server has printed so far (leader only).
func (s *RaftServer) Throughput() []RaftThroughput { return ParseRaftThroughput(s.Log()) }
