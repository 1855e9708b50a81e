package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Ports are drawn from [low, the ephemeral range's start), never above defaultHigh.
const (
	low         = 10000
	defaultHigh = 32768 // Linux's default ip_local_port_range start
	maxTries    = 20000
)

var (
	mu    sync.Mutex
	taken = map[int]*os.File{} // port -> its lock file, open (locked) for the process's life
)

// Take returns n distinct ports that are free on 127.0.0.1, outside the ephemeral range,
// and handed to no other caller in any process on this machine while this one lives.
func Take(n int) ([]int, error) {
	mu.Lock()
	defer mu.Unlock()
	high := ephemeralStart()
	if high-low < 4*n {
		return nil, fmt.Errorf("freeport: only ports %d-%d lie below the ephemeral range", low, high-1)
	}
	dir := filepath.Join(os.TempDir(), "kraftd-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("freeport: %w", err)
	}
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries == maxTries {
			return nil, fmt.Errorf("freeport: no free port among %d tries in %d-%d", maxTries, low, high-1)
		}
		p := low + rand.IntN(high-low)
		if taken[p] != nil {
			continue
		}
		f, ok := lock(dir, p)
		if !ok {
			continue
		}
		if !bindable(p) {
			f.Close() // releases the lock
			continue
		}
		taken[p] = f
		ports = append(ports, p)
	}
	return ports, nil
}

// lock takes an exclusive, non-blocking flock on dir/<port>; the kernel drops it when the
// process exits, so a crashed test leaves nothing to clean up.
func lock(dir string, port int) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

func bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ephemeralStart is the first port of the kernel's ephemeral range (capped at
// defaultHigh), read from /proc where it exists.
func ephemeralStart() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultHigh
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return defaultHigh
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start > defaultHigh {
		return defaultHigh
	}
	return start
}
