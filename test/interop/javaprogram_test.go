package interop

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

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
