//go:build interoplong

package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestClusterScriptKafkaControllersLong: `make cluster` with CONTROLLERS=kafka
// (scripts/cluster.sh) starts three Kafka 4.4.0 controllers and three brokers and prints
// their bootstrap servers; Kafka's tools run through scripts/kafka-tool.sh create a topic
// with three replicas, produce with acks=all and consume in a group that commits every
// record; `cluster.sh stop` then stops every process it started, each on SIGTERM.
func TestClusterScriptKafkaControllersLong(t *testing.T) {
	t.Parallel() // see interop/doc.go
	clusterScriptRoundTrip(t, "kafka")
}

// clusterScript runs the cluster scripts for one test: its dir, ports and tools.
type clusterScript struct {
	t    *testing.T
	root string
	dir  string
	env  []string
}

func (c *clusterScript) run(ctx context.Context, stdin string, prog string, args ...string) (string, string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(c.root, "scripts", prog)}, args...)...)
	cmd.Dir = c.root
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// The tools are exec'd JVMs: a timeout kills the JVM itself.
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// tool runs scripts/kafka-tool.sh and returns its stdout; failures are fatal.
func (c *clusterScript) tool(ctx context.Context, stdin string, args ...string) string {
	c.t.Helper()
	out, errOut, err := c.run(ctx, stdin, "kafka-tool.sh", args...)
	if err != nil {
		c.t.Fatalf("kafka-tool.sh %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// clusterScriptRoundTrip starts the cluster with the given controllers, runs the
// topic/produce/consume round trip through the tool wrapper and stops it.
func clusterScriptRoundTrip(t *testing.T, controllers string) {
	e := kafkatest.Require(t)
	root, err := kafkatest.KraftdRoot()
	if err != nil {
		t.Fatal(err)
	}
	ports := kafkatest.FreePorts(t, 6)
	c := &clusterScript{t: t, root: root, dir: filepath.Join(t.TempDir(), "cluster")}
	c.env = append(os.Environ(),
		"CONTROLLERS="+controllers,
		"CLUSTER_DIR="+c.dir,
		"CLUSTER_DETACH=1",
		fmt.Sprintf("CONTROLLER_PORTS=%d %d %d", ports[0], ports[1], ports[2]),
		fmt.Sprintf("BROKER_PORTS=%d %d %d", ports[3], ports[4], ports[5]),
		"START_TIMEOUT=240",
		"KRAFTD_INTEROP_LIB="+e.LibDir,
		"KRAFTD_JAVA="+e.Java,
	)
	if controllers == "kraftd" {
		c.env = append(c.env, "KRAFTD_BIN="+kafkatest.BuildKraftd(t))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// Stop whatever started, even when the start failed half-way (the script stops what
	// it started then, but a test timeout could cut it short).
	stopped := false
	var pids []int
	t.Cleanup(func() {
		if !stopped {
			c.run(context.Background(), "", "cluster.sh", "stop")
		}
		if t.Failed() {
			for _, name := range []string{"controller1", "controller2", "controller3", "broker1", "broker2", "broker3"} {
				if b, err := os.ReadFile(filepath.Join(c.dir, name+".log")); err == nil {
					t.Logf("--- %s.log (end):\n%s", name, lastLines(string(b), 40))
				}
			}
		}
	})

	out, errOut, err := c.run(ctx, "", "cluster.sh", "start")
	if err != nil {
		t.Fatalf("cluster.sh start: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	pids = readClusterPids(t, filepath.Join(c.dir, "pids"))
	if len(pids) != 6 {
		t.Fatalf("cluster.sh recorded %d pids, want 6: %v", len(pids), pids)
	}
	bootstrap := fmt.Sprintf("127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d", ports[3], ports[4], ports[5])
	if !strings.Contains(out, "bootstrap servers: "+bootstrap) {
		t.Fatalf("cluster.sh start did not print the bootstrap servers %s:\n%s", bootstrap, out)
	}

	const topic, group, n = "script-demo", "script-group", 20
	c.tool(ctx, "", "kafka-topics", "--bootstrap-server", bootstrap, "--create", "--topic", topic,
		"--partitions", "3", "--replication-factor", "3")
	desc := c.tool(ctx, "", "kafka-topics", "--bootstrap-server", bootstrap, "--describe", "--topic", topic)
	if got := strings.Count(desc, "Replicas: "); got != 3 {
		t.Fatalf("kafka-topics --describe shows %d partitions, want 3:\n%s", got, desc)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("record-%d", i))
	}
	c.tool(ctx, strings.Join(want, "\n")+"\n", "kafka-console-producer", "--bootstrap-server", bootstrap,
		"--topic", topic, "--command-property", "acks=all")
	got := strings.Fields(c.tool(ctx, "", "kafka-console-consumer", "--bootstrap-server", bootstrap,
		"--topic", topic, "--group", group, "--from-beginning", "--max-messages", strconv.Itoa(n), "--timeout-ms", "120000"))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("consumed %v, want %v", got, want)
	}
	// The consumer committed its offsets on close: the group's lag is zero on every partition.
	groups := c.tool(ctx, "", "kafka-consumer-groups", "--bootstrap-server", bootstrap, "--describe", "--group", group)
	if committed := committedOffsets(t, groups, topic); committed != n {
		t.Fatalf("group %s committed %d records of %s, want %d:\n%s", group, committed, topic, n, groups)
	}

	out, errOut, err = c.run(ctx, "", "cluster.sh", "stop")
	stopped = true
	if err != nil {
		t.Fatalf("cluster.sh stop: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	if strings.Contains(errOut, "SIGKILL") {
		t.Errorf("a process needed SIGKILL:\n%s", errOut)
	}
	for _, pid := range pids {
		if processRunning(pid) {
			t.Errorf("pid %d still runs after cluster.sh stop", pid)
		}
	}
}

// readClusterPids reads cluster.sh's pids file ("name pid" lines).
func readClusterPids(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("%s: malformed line %q", path, line)
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// processRunning reports whether pid exists and has not exited: an exited process its
// parent has not reaped yet (a zombie) has stopped.
func processRunning(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, the state follows its last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || !strings.HasPrefix(s[i+1:], " Z")
}

// committedOffsets sums the CURRENT-OFFSET column of kafka-consumer-groups --describe
// for topic's rows.
func committedOffsets(t *testing.T, out, topic string) int {
	t.Helper()
	sum := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[1] != topic {
			continue
		}
		v, err := strconv.Atoi(f[3])
		if err != nil {
			t.Fatalf("kafka-consumer-groups: CURRENT-OFFSET %q in %q", f[3], line)
		}
		sum += v
	}
	return sum
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
