package interop

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// compiledJava is one testdata/<Name>.java program, compiled once per test
// binary.
type compiledJava struct {
	once sync.Once
	dir  string
	err  error
}

var javaPrograms sync.Map // name -> *compiledJava

// javaProgram compiles testdata/<name>.java against Kafka 4.4's jars (once)
// and returns a function making a command that runs it with args; it skips
// without Java or the jars.
func javaProgram(t *testing.T, name string) func(args ...string) *exec.Cmd {
	t.Helper()
	env := kafkatest.Require(t)
	cp := filepath.Join(env.LibDir, "*")
	p, _ := javaPrograms.LoadOrStore(name, &compiledJava{})
	prog := p.(*compiledJava)
	prog.once.Do(func() {
		prog.dir, prog.err = os.MkdirTemp("", "kraftd-"+name)
		if prog.err != nil {
			return
		}
		javac := filepath.Join(filepath.Dir(env.Java), "javac")
		out, err := exec.Command(javac, "-d", prog.dir, "-cp", cp, filepath.Join("testdata", name+".java")).CombinedOutput()
		if err != nil {
			prog.err = fmt.Errorf("javac %s: %v\n%s", name, err, out)
		}
	})
	if prog.err != nil {
		t.Fatal(prog.err)
	}
	return func(args ...string) *exec.Cmd {
		a := append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", prog.dir + string(os.PathListSeparator) + cp, name}, args...)
		return exec.Command(env.Java, a...)
	}
}

// runJava runs testdata/<name>.java with stdin and returns its standard
// output; it fails the test on an error exit, with the program's standard
// error, and kills a program still running after five minutes.
func runJava(t *testing.T, name string, stdin io.Reader, args ...string) (stdout, stderr []byte) {
	t.Helper()
	cmd := javaProgram(t, name)(args...)
	cmd.Stdin = stdin
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			cmd.Process.Kill()
		}
	}()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, errBuf.Bytes())
	}
	return out, errBuf.Bytes()
}
