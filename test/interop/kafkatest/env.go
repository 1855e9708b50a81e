package kafkatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kraftd/kraftd/internal/testenv"
)

// KafkaVersion is the release the jars in interop/lib come from.
const KafkaVersion = "4.4.0"

// Main classes in the 4.4.0 jars.
const (
	ClassKafka          = "kafka.Kafka"                                  // kafka_2.13
	ClassTestRaftServer = "kafka.tools.TestRaftServer"                   // kafka_2.13
	ClassStorageTool    = "kafka.tools.StorageTool"                      // kafka_2.13 (kafka-storage)
	ClassDumpLog        = "org.apache.kafka.tools.DumpLogSegments"       // kafka-tools (kafka-dump-log)
	ClassMetadataQuorum = "org.apache.kafka.tools.MetadataQuorumCommand" // kafka-tools (kafka-metadata-quorum)
	ClassClusterTool    = "org.apache.kafka.tools.ClusterTool"           // kafka-tools (kafka-cluster)
)

// requiredJars must all be in the lib dir; together with the marker file written by
// `make interop-deps` after a complete copy they show the class path is usable.
var requiredJars = []string{
	"kafka_2.13-" + KafkaVersion + ".jar",
	"kafka-tools-" + KafkaVersion + ".jar",
	"kafka-raft-" + KafkaVersion + ".jar",
	"kafka-clients-" + KafkaVersion + ".jar",
}

// completeMarker is touched by `make interop-deps` once mvn has copied every jar, so an
// interrupted download is not mistaken for a usable class path.
const completeMarker = ".complete"

// SkipMessage is the reason given when the judge is missing.
const SkipMessage = "interop: java or Kafka jars missing: run make interop-deps"

// Env is a located Java runtime and Kafka class path.
type Env struct {
	Java   string // path of the java binary
	LibDir string // interop/lib
	// scratch holds the generated log4j2 configurations shared by every process.
	scratch string
}

var (
	envOnce sync.Once
	envVal  *Env
	envErr  error
)

// Require returns the Kafka environment, or skips the test (t.Fatal when
// KRAFTD_INTEROP=required, or under CI: testenv.Skip) when java or the jars are missing.
func Require(t testing.TB) *Env {
	t.Helper()
	envOnce.Do(func() { envVal, envErr = locate() })
	if envErr != nil {
		if os.Getenv("KRAFTD_INTEROP") == "required" {
			t.Fatalf("%s (KRAFTD_INTEROP=required): %v", SkipMessage, envErr)
		}
		testenv.Skip(t, "%s (%v)", SkipMessage, envErr)
	}
	return envVal
}

// locate finds java (KRAFTD_JAVA, then $JAVA_HOME/bin/java, then PATH) and the lib dir
// (KRAFTD_INTEROP_LIB, else interop/lib next to this package).
func locate() (*Env, error) {
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	lib := os.Getenv("KRAFTD_INTEROP_LIB")
	if lib == "" {
		lib, err = findLib()
		if err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(lib, completeMarker)); err != nil {
		return nil, fmt.Errorf("%s has no %s marker (download missing or incomplete)", lib, completeMarker)
	}
	for _, j := range requiredJars {
		if _, err := os.Stat(filepath.Join(lib, j)); err != nil {
			return nil, fmt.Errorf("missing %s in %s", j, lib)
		}
	}
	// One fixed dir per user, reused by every run, so runs leave nothing new behind.
	scratch := filepath.Join(os.TempDir(), fmt.Sprintf("kraftd-kafkatest-%d", os.Getuid()))
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, fmt.Errorf("kafkatest: scratch dir: %w", err)
	}
	e := &Env{Java: java, LibDir: lib, scratch: scratch}
	if err := e.writeLog4j(); err != nil {
		return nil, err
	}
	return e, nil
}

// findLib returns interop/lib: next to this source file when its path is known (it is not
// under -trimpath), else found from the working directory (go test runs in the package dir)
// by walking up to the directory holding interop/pom.xml.
func findLib() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(filepath.Dir(file)), "lib"), nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot locate interop/lib: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "interop", "pom.xml")); err == nil {
			return filepath.Join(dir, "interop", "lib"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot locate interop/lib: no interop/pom.xml above the working directory")
		}
		dir = parent
	}
}

func findJava() (string, error) {
	if j := os.Getenv("KRAFTD_JAVA"); j != "" {
		return j, nil
	}
	if home := os.Getenv("JAVA_HOME"); home != "" {
		j := filepath.Join(home, "bin", "java")
		if st, err := os.Stat(j); err == nil && !st.IsDir() {
			return j, nil
		}
	}
	j, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("java not found: %w", err)
	}
	return j, nil
}

// Classpath is the JVM class path: every jar in the lib dir.
func (e *Env) Classpath() string { return filepath.Join(e.LibDir, "*") }

// Log4j2 configurations (the properties syntax needs nothing beyond log4j-core).
// Servers log INFO to stdout (captured in a file) without the long config dumps; tools log
// only warnings, to stderr, so their stdout is exactly what the command prints.
const (
	serverLog4j = `status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.appinfo.name = org.apache.kafka.common.utils.internals.AppInfoParser
logger.appinfo.level = WARN
`
	toolLog4j = `status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
`
)

func (e *Env) writeLog4j() error {
	for name, body := range map[string]string{"server-log4j2.properties": serverLog4j, "tool-log4j2.properties": toolLog4j} {
		// Test binaries of several packages may run at once: write aside, then rename.
		tmp, err := os.CreateTemp(e.scratch, name+".*.tmp")
		if err != nil {
			return fmt.Errorf("kafkatest: write %s: %w", name, err)
		}
		_, werr := tmp.WriteString(body)
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("kafkatest: write %s: %w", name, err)
		}
		if err := os.Rename(tmp.Name(), filepath.Join(e.scratch, name)); err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("kafkatest: write %s: %w", name, err)
		}
	}
	return nil
}

// serverLog4jFile returns a log4j2 file for a server: the shared one, or one with the given
// extra logger levels (e.g. {"org.apache.kafka.raft": "DEBUG"}).
func (e *Env) serverLog4jFile(dir string, levels map[string]string) (string, error) {
	if len(levels) == 0 {
		return filepath.Join(e.scratch, "server-log4j2.properties"), nil
	}
	var b strings.Builder
	b.WriteString(serverLog4j)
	i := 0
	for _, name := range sortedKeys(levels) {
		fmt.Fprintf(&b, "logger.extra%d.name = %s\nlogger.extra%d.level = %s\n", i, name, i, levels[name])
		i++
	}
	f := filepath.Join(dir, "log4j2.properties")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("kafkatest: write %s: %w", f, err)
	}
	return f, nil
}

// JVM flags. Small heap and the serial collector keep several JVMs affordable on two cores.
// ShippedJVMFlags are kafka-run-class.sh's defaults with the heap of Kafka's
// kafka-test-raft-server-start.sh (-Xmx1G -Xms1G): a TestRaftServer as Kafka ships it (C2
// on, G1), for measurements of Kafka rather than of the harness's small heap.
var (
	ShippedJVMFlags = []string{"-Xmx1G", "-Xms1G", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true"}
	serverJVMFlags = []string{"-Xmx256m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}
	toolJVMFlags   = []string{"-Xmx128m", "-Xms16m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Djava.awt.headless=true"}
)
