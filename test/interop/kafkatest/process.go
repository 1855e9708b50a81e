package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StopGrace is how long Stop waits after SIGTERM before SIGKILL. A KRaft controller's
// graceful shutdown (resign, close the log) takes a second or two.
const StopGrace = 15 * time.Second

// StartTimeout bounds the wait for a started JVM to accept connections. JVM start-up is
// about 2 s on an idle machine; the bound is loose because the suite may share two cores.
const StartTimeout = 60 * time.Second

// Process is a JVM started by a test. Its stdout and stderr go to LogPath.
type Process struct {
	Name    string
	LogPath string

	t    testing.TB
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	mu   sync.Mutex
	err  error // exit status, valid after done
}

// startJVM starts java with the given flags, main class and arguments, output to
// dir/<name>.log. t.Cleanup stops it and, if the test failed, logs the output's tail.
func (e *Env) startJVM(t testing.TB, name, dir string, jvmFlags []string, log4j, class string, args ...string) (*Process, error) {
	t.Helper()
	argv := append([]string{}, jvmFlags...)
	argv = append(argv, "-Dlog4j2.configurationFile="+log4j, "-cp", e.Classpath(), class)
	argv = append(argv, args...)
	return startProcess(t, name, dir, e.Java, argv...)
}

// startProcess starts a program with its output in dir/<name>.log, stopped when the test
// ends (and its output's tail logged if the test failed).
func startProcess(t testing.TB, name, dir, prog string, argv ...string) (*Process, error) {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("kafkatest: create %s: %w", logPath, err)
	}
	cmd := exec.Command(prog, argv...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("kafkatest: start %s: %w", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, t: t, cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		out.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			p.DumpLog(200)
		}
	})
	return p, nil
}

// Pid is the JVM's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has exited, and its exit error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop sends SIGTERM (Kafka's shutdown hook runs a graceful shutdown), waits up to
// StopGrace, then SIGKILLs. It returns the exit error (nil if already stopped cleanly);
// calling it again is harmless.
func (p *Process) Stop() error {
	if exited, err := p.Exited(); exited {
		return err
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(StopGrace):
		p.t.Logf("kafkatest: %s (pid %d) ignored SIGTERM for %v: SIGKILL", p.Name, p.Pid(), StopGrace)
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	_, err := p.Exited()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 128+int(syscall.SIGTERM) {
		return nil // the JVM's exit status after its shutdown hooks ran on SIGTERM
	}
	return err
}

// Terminate sends SIGTERM without waiting (Stop or Kill finish the job).
func (p *Process) Terminate() {
	if exited, _ := p.Exited(); !exited {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// Kill sends SIGKILL (a crash: no shutdown hook, no flush) and waits for the exit.
func (p *Process) Kill() {
	if exited, _ := p.Exited(); exited {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Log returns the process output so far.
func (p *Process) Log() string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", p.LogPath, err)
	}
	return string(b)
}

// DumpLog logs the last n lines of the output through the test.
func (p *Process) DumpLog(n int) {
	lines := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	p.t.Logf("kafkatest: last %d lines of %s (pid %d, %s):\n%s", len(lines), p.Name, p.Pid(), p.LogPath, strings.Join(lines, "\n"))
}

// WaitLog waits until the output contains s, the process exits, or the timeout passes.
func (p *Process) WaitLog(s string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if strings.Contains(p.Log(), s) {
			return nil
		}
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("kafkatest: %s exited (%v) before logging %q", p.Name, err, s)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kafkatest: %s did not log %q within %v", p.Name, s, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitListening dials addr until it accepts, the process exits, or the timeout passes.
func (p *Process) waitListening(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		if exited, exitErr := p.Exited(); exited {
			return fmt.Errorf("kafkatest: %s exited (%v) before listening on %s", p.Name, exitErr, addr)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("kafkatest: %s not listening on %s after %v: %w", p.Name, addr, timeout, err)
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}

// ToolError is a tool run that exited non-zero or timed out.
type ToolError struct {
	Args   []string
	Stdout string
	Stderr string
	Err    error
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("kafkatest: %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(e.Args, " "), e.Err, e.Stdout, e.Stderr)
}

func (e *ToolError) Unwrap() error { return e.Err }

// ExitCode is the tool's exit status, -1 when it did not exit by itself (killed, timed out).
func (e *ToolError) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// ErrorLine is the first line of stderr that is not a log line: what Kafka's command line
// tools print for a failure before any stack trace.
func (e *ToolError) ErrorLine() string {
	for _, line := range strings.Split(e.Stderr, "\n") {
		if line != "" && !strings.HasPrefix(line, "[") {
			return line
		}
	}
	return ""
}

// ToolTimeout bounds one tool run.
const ToolTimeout = 60 * time.Second

// RunTool runs a Kafka command line class to completion (bounded by ToolTimeout and ctx)
// and returns its stdout. A non-zero exit is a *ToolError carrying both outputs.
func (e *Env) RunTool(ctx context.Context, class string, args ...string) (string, error) {
	return e.RunToolInput(ctx, "", class, args...)
}

// RunToolInput is RunTool with stdin as the tool's standard input (e.g. the lines
// kafka-console-producer sends), closed at its end.
func (e *Env) RunToolInput(ctx context.Context, stdin, class string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, ToolTimeout)
	defer cancel()
	argv := append([]string{}, toolJVMFlags...)
	argv = append(argv, "-Dlog4j2.configurationFile="+filepath.Join(e.scratch, "tool-log4j2.properties"), "-cp", e.Classpath(), class)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, e.Java, argv...)
	dieWithTest(cmd)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		return stdout.String(), &ToolError{Args: append([]string{class}, args...), Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}
