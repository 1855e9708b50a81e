// Command fsyncstall measures how long a plain append-and-fdatasync loop waits when
// spinning processes share the machine, with and without a few other threads of the same
// session that sleep and wake often. It involves no kraftd code: it is the control for
// the "busy in-session" rows of make bench-report.
//
// Linux with sched_autogroup_enabled schedules the threads of a session as one group. An
// fdatasync on a disk with a volatile write cache completes through kernel workers of the
// root group (ext4's unwritten-extent conversion, the block layer's per-CPU flush worker),
// and those were seen waiting hundreds of milliseconds for a CPU held by a spinner of the
// session once other threads of the session woke often, while the same loop beside the
// same spinners without them waited a few milliseconds at most. Any quorum of
// multi-threaded processes in the spinners' session is such a set of threads.
//
// Each run measures the loop twice, interleaved: beside the spinners alone, then beside
// the spinners and the wakers; it prints the fdatasync latency percentiles of both.
//
//	go run ./cmd/fsyncstall -runs 3 -seconds 10 -wakers 3 -wake-every 1ms [-apart]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kraftd/kraftd/osched"
)

const roleEnv = "KRAFTD_FSYNCSTALL_ROLE"

func main() {
	switch os.Getenv(roleEnv) {
	case "spin":
		for x := uint64(1); ; {
			x ^= x << 13
		}
	case "wake":
		wake()
		return
	}
	runs := flag.Int("runs", 3, "runs, each measuring the loop without and with the wakers")
	seconds := flag.Int("seconds", 10, "seconds the loop runs in each measurement")
	spinners := flag.Int("spinners", runtime.NumCPU(), "spinning processes")
	apart := flag.Bool("apart", false, "start the spinners in a session of their own")
	wakers := flag.Int("wakers", 3, "threads of another process of the session that sleep and wake")
	every := flag.Duration("wake-every", time.Millisecond, "how long each waker sleeps between wake-ups")
	slice := flag.Duration("waker-slice", 0, "scheduler slice the wakers ask for, as kraftd.process.scheduler.slice.us does (0: the kernel's)")
	dir := flag.String("dir", ".", "directory of the appended file (on the disk under test)")
	flag.Parse()
	if *runs < 1 || *seconds < 1 || *spinners < 0 || *wakers < 1 || *every <= 0 ||
		(*slice != 0 && (*slice < osched.MinSlice || *slice > osched.MaxSlice)) {
		fmt.Fprintf(os.Stderr, "fsyncstall: -runs, -seconds and -wakers must be positive, -spinners not negative, -wake-every above zero, -waker-slice 0 or in [%v, %v]\n", osched.MinSlice, osched.MaxSlice)
		os.Exit(2)
	}
	stopSpin, err := start(*spinners, "spin", nil, *apart)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fsyncstall:", err)
		os.Exit(1)
	}
	defer stopSpin()
	where := "in this session"
	if *apart {
		where = "a session of their own"
	}
	fmt.Printf("%d spinners (%s), wakers: %d threads sleeping %v, slice %v (0: the kernel's)\n", *spinners, where, *wakers, *every, *slice)
	for run := 1; run <= *runs; run++ {
		for _, withWakers := range []bool{false, true} {
			stopWake := func() {}
			if withWakers {
				env := []string{"KRAFTD_FSYNCSTALL_WAKERS=" + strconv.Itoa(*wakers), "KRAFTD_FSYNCSTALL_EVERY=" + every.String(), "KRAFTD_FSYNCSTALL_SLICE=" + slice.String()}
				if stopWake, err = start(1, "wake", env, false); err != nil {
					fmt.Fprintln(os.Stderr, "fsyncstall:", err)
					os.Exit(1)
				}
			}
			lat, err := fsyncLoop(*dir, time.Duration(*seconds)*time.Second)
			stopWake()
			if err != nil {
				fmt.Fprintln(os.Stderr, "fsyncstall:", err)
				os.Exit(1)
			}
			fmt.Printf("run %d wakers %-5v %s\n", run, withWakers, summary(lat))
		}
	}
}

// start starts n copies of this program in the given role; apart puts each in a session
// of its own.
func start(n int, role string, env []string, apart bool) (stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command(exe)
		c.Env = append(append(os.Environ(), roleEnv+"="+role), env...)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: apart, Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}

// wake runs the waker threads: each an OS thread of its own that sleeps in the kernel.
func wake() {
	n, _ := strconv.Atoi(os.Getenv("KRAFTD_FSYNCSTALL_WAKERS"))
	d, _ := time.ParseDuration(os.Getenv("KRAFTD_FSYNCSTALL_EVERY"))
	slice, _ := time.ParseDuration(os.Getenv("KRAFTD_FSYNCSTALL_SLICE"))
	ts := unix.NsecToTimespec(d.Nanoseconds())
	started := make(chan struct{})
	for range max(n, 1) {
		go func() {
			runtime.LockOSThread()
			started <- struct{}{}
			for {
				_ = unix.Nanosleep(&ts, nil)
			}
		}()
		<-started
	}
	if slice != 0 {
		if err := osched.SetSlice(slice); err != nil {
			fmt.Fprintln(os.Stderr, "fsyncstall: waker slice:", err)
			os.Exit(1)
		}
	}
	select {}
}

// fsyncLoop appends 4 KiB and fdatasyncs it every millisecond for d, the appends growing
// the file as a log segment grows, and returns each append's latency.
func fsyncLoop(dir string, d time.Duration) ([]time.Duration, error) {
	f, err := os.CreateTemp(dir, "fsyncstall-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()); _ = f.Close() }()
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = 'x'
	}
	var lat []time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); {
		t0 := time.Now()
		if _, err := f.Write(buf); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f.Name()), err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			return nil, fmt.Errorf("%s: fdatasync: %w", filepath.Base(f.Name()), err)
		}
		lat = append(lat, time.Since(t0))
		time.Sleep(time.Millisecond)
	}
	return lat, nil
}

func summary(lat []time.Duration) string {
	if len(lat) == 0 {
		return "no appends"
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	slow := 0
	for _, l := range lat {
		if l > 20*time.Millisecond {
			slow++
		}
	}
	return fmt.Sprintf("n=%d p50=%.2f p99=%.2f p99.9=%.2f max=%.1f ms, %d over 20 ms", len(lat), q(0.5), q(0.99), q(0.999), q(1), slow)
}
