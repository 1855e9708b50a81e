package interop

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/uuid"
)

// cliResult is one command line tool run: what it printed and its exit status.
type cliResult struct {
	stdout, errLine string // errLine: the first stderr line that is not a log line
	code            int
}

// runKraftdCLI runs kraftd's controller binary to completion.
func runKraftdCLI(t *testing.T, bin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cliResult{stdout: stdout.String(), errLine: (&kafkatest.ToolError{Stderr: stderr.String()}).ErrorLine()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Errorf("controller %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// kafkaCLISlots bounds the Kafka tools run at once: on a loaded machine more JVMs
// starting together each take longer than the tool timeout.
var kafkaCLISlots = make(chan struct{}, 3)

// runKafkaCLI runs Kafka's kafka-metadata-quorum with the same arguments.
func runKafkaCLI(t *testing.T, env *kafkatest.Env, args ...string) cliResult {
	t.Helper()
	kafkaCLISlots <- struct{}{}
	defer func() { <-kafkaCLISlots }()
	out, err := env.RunTool(context.Background(), kafkatest.ClassMetadataQuorum, args...)
	r := cliResult{stdout: out}
	var te *kafkatest.ToolError
	switch {
	case errors.As(err, &te):
		r.code, r.errLine = te.ExitCode(), te.ErrorLine()
	case err != nil:
		t.Errorf("kafka-metadata-quorum %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// parallel runs fs at once and waits for all: each JVM tool start takes seconds, and the
// checks of one phase do not change the quorum. fs report with t.Errorf only.
func parallel(fs ...func()) {
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

// sameCLI runs one kafka-metadata-quorum command line through both tools and
// wants the same stdout, exit status and error line; it returns kraftd's run.
// Kraftd's command names its subcommand first: `controller add-controller
// --bootstrap-controller ...` for `kafka-metadata-quorum --bootstrap-controller ...
// add-controller`.
func sameCLI(t *testing.T, env *kafkatest.Env, bin string, conn []string, sub string, subArgs ...string) cliResult {
	t.Helper()
	var kafka, ours cliResult
	parallel(
		func() { kafka = runKafkaCLI(t, env, append(append(slices.Clone(conn), sub), subArgs...)...) },
		func() { ours = runKraftdCLI(t, bin, append(append([]string{sub}, conn...), subArgs...)...) },
	)
	t.Logf("%s %s: Kafka exit %d %q %q; kraftd exit %d %q %q", sub, strings.Join(subArgs, " "),
		kafka.code, kafka.stdout, kafka.errLine, ours.code, ours.stdout, ours.errLine)
	if kafka != ours {
		t.Errorf("%s %s: Kafka's tool and kraftd's differ:\nKafka:  exit %d stdout %q error %q\nkraftd: exit %d stdout %q error %q",
			sub, strings.Join(subArgs, " "), kafka.code, kafka.stdout, kafka.errLine, ours.code, ours.stdout, ours.errLine)
	}
	return ours
}

// TestQuorumCLIWithKafka: a Kafka 4.4 controller formatted --standalone and a second one
// formatted --no-initial-controllers (an observer). kraftd's add-controller and
// remove-controller change the voter set; Kafka's tool, run side by side on the same
// quorum, prints the same for the same situation (dry runs, duplicate voter, unknown
// voter, wrong directory id), and both describe the quorum the same way.
func TestQuorumCLIWithKafka(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	bin := kafkatest.BuildKraftd(t)
	port1 := kafkatest.FreePort(t)
	boot := []string{"127.0.0.1:" + strconv.Itoa(port1)}
	// Node 1 stays the leader, so the two tools' describes, run one after the other,
	// see the same epoch even on a loaded machine.
	patient := kafkatest.Props{"controller.quorum.election.timeout.ms": "10000", "controller.quorum.fetch.timeout.ms": "20000"}
	cs := env.StartControllers(t,
		kafkatest.ControllerConfig{NodeID: 1, Port: port1, BootstrapServers: boot, FormatArgs: []string{"--standalone"}, Props: patient},
		kafkatest.ControllerConfig{NodeID: 2, BootstrapServers: boot, FormatArgs: []string{"--no-initial-controllers"}, Props: patient})
	c1, c2 := cs[0], cs[1]
	if c1.DirectoryID == "" || c2.DirectoryID == "" {
		t.Fatalf("directory ids %q %q: want both from meta.properties", c1.DirectoryID, c2.DirectoryID)
	}
	conn := []string{"--bootstrap-controller", c1.Addr}
	withConfig := append(slices.Clone(conn), "--command-config", c2.ConfigPath) // c2's properties
	isObserver := func(q kafkatest.QuorumInfo) bool {
		return len(q.Voters) == 1 && slices.ContainsFunc(q.Observers, func(o kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool { return o.ReplicaID == 2 })
	}
	if _, err := kafkatest.WaitQuorum(c1.Addr, topics.ClusterMetadata, 60*time.Second, isObserver); err != nil {
		t.Fatal(err)
	}

	// Not a voter yet: removing it fails the same way on both sides. Dry runs print what
	// they would do and change nothing.
	parallel(
		func() { sameCLI(t, env, bin, conn, "remove-controller", "-i", "2", "-d", c2.DirectoryID) },
		func() { sameCLI(t, env, bin, withConfig, "add-controller", "--dry-run") },
		func() {
			if r := sameCLI(t, env, bin, conn, "remove-controller", "-i", "1", "-d", c1.DirectoryID, "--dry-run"); r.code != 0 {
				t.Errorf("remove-controller --dry-run: exit %d", r.code)
			}
		},
	)
	if _, err := kafkatest.WaitQuorum(c1.Addr, topics.ClusterMetadata, 10*time.Second, isObserver); err != nil {
		t.Fatalf("after the dry runs: %v", err)
	}

	added := runKraftdCLI(t, bin, "add-controller", "--bootstrap-controller", c1.Addr, "--command-config", c2.ConfigPath)
	want := "Added controller 2 with directory id " + c2.DirectoryID + " and endpoints: CONTROLLER://" + c2.Addr + "\n"
	if added.code != 0 || added.stdout != want {
		t.Fatalf("controller add-controller: exit %d, stdout %q, error %q; want %q", added.code, added.stdout, added.errLine, want)
	}
	q, err := kafkatest.WaitQuorum(c1.Addr, topics.ClusterMetadata, 30*time.Second, func(q kafkatest.QuorumInfo) bool { return len(q.Voters) == 2 })
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range q.Voters {
		if dir := [...]string{1: c1.DirectoryID, 2: c2.DirectoryID}[v.ReplicaID]; uuid.UUID(v.ReplicaDirectoryID).String() != dir {
			t.Errorf("voter %d directory id %s, want %s", v.ReplicaID, uuid.UUID(v.ReplicaDirectoryID).String(), dir)
		}
	}

	// A voter already: adding it again, or removing it with the wrong directory id or an
	// unknown id, fails the same way on both sides; both describe the two voters alike.
	parallel(
		func() { describeSame(t, env, bin, c1.Addr, 2) },
		func() { sameCLI(t, env, bin, withConfig, "add-controller") },
		func() { sameCLI(t, env, bin, conn, "remove-controller", "-i", "2", "-d", kafkatest.NewUUID()) },
		func() { sameCLI(t, env, bin, conn, "remove-controller", "-i", "7", "-d", c2.DirectoryID) },
	)

	removed := runKraftdCLI(t, bin, "remove-controller", "--bootstrap-controller", c1.Addr, "-i", "2", "-d", c2.DirectoryID)
	if want := "Removed KRaft controller 2 with directory id " + c2.DirectoryID + "\n"; removed.code != 0 || removed.stdout != want {
		t.Fatalf("controller remove-controller: exit %d, stdout %q, error %q; want %q", removed.code, removed.stdout, removed.errLine, want)
	}
	if _, err := kafkatest.WaitQuorum(c1.Addr, topics.ClusterMetadata, 30*time.Second, isObserver); err != nil {
		t.Fatal(err)
	}
	describeSame(t, env, bin, c1.Addr, 1)

	// Kafka's tool adds it back, printing what kraftd's printed; kraftd describes the result.
	if again := runKafkaCLI(t, env, append(slices.Clone(withConfig), "add-controller")...); again.code != 0 || again.stdout != want {
		t.Fatalf("kafka-metadata-quorum add-controller: exit %d, stdout %q, error %q; want %q", again.code, again.stdout, again.errLine, want)
	}
	st := runKraftdCLI(t, bin, "describe-quorum", "--bootstrap-controller", c1.Addr, "--status")
	for _, c := range []*kafkatest.Controller{c1, c2} {
		if voter := `{"id": ` + strconv.Itoa(int(c.NodeID)) + `, "directoryId": "` + c.DirectoryID + `"`; !strings.Contains(st.stdout, voter) {
			t.Errorf("controller describe-quorum --status after Kafka's add-controller lacks %s:\n%s", voter, st.stdout)
		}
	}
}

// describeSame compares kraftd's describe-quorum with Kafka's describe: the --status
// fields that do not move while the leader appends, and the --replication columns, with
// and without --human-readable. Each kraftd run follows the Kafka run it is compared with
// at once, as Kafka's tool asks the leader only at the end of its JVM's slow start.
func describeSame(t *testing.T, env *kafkatest.Env, bin, addr string, voters int) {
	t.Helper()
	conn := []string{"--bootstrap-controller", addr}
	parallel(
		func() { describeStatusSame(t, env, bin, conn, voters) },
		func() { describeReplicationSame(t, env, bin, conn, false) },
		func() { describeReplicationSame(t, env, bin, conn, true) },
	)
}

func describeStatusSame(t *testing.T, env *kafkatest.Env, bin string, conn []string, voters int) {
	kafkaRun := runKafkaCLI(t, env, append(slices.Clone(conn), "describe", "--status")...)
	ourRun := runKraftdCLI(t, bin, append(append([]string{"describe-quorum"}, conn...), "--status")...)
	kafka, err1 := kafkatest.ParseStatus(kafkaRun.stdout)
	ours, err2 := kafkatest.ParseStatus(ourRun.stdout)
	if err1 != nil || err2 != nil {
		t.Errorf("describe --status: Kafka exit %d %q %v; kraftd exit %d %q %v", kafkaRun.code, kafkaRun.errLine, err1, ourRun.code, ourRun.errLine, err2)
		return
	}
	for _, k := range []string{"ClusterId", "LeaderId", "LeaderEpoch", "CurrentVoters", "CurrentObservers"} {
		if kafka[k] != ours[k] {
			t.Errorf("describe --status %s: Kafka %q, kraftd %q", k, kafka[k], ours[k])
		}
	}
	if n := strings.Count(ours["CurrentVoters"], `"directoryId"`); n != voters {
		t.Errorf("CurrentVoters %s: %d directory ids, want %d", ours["CurrentVoters"], n, voters)
	}
}

// describeReplicationSame compares the --replication tables row by row: the columns that
// do not move, and (human) that timestamps read "<n> ms ago" where Kafka's do.
func describeReplicationSame(t *testing.T, env *kafkatest.Env, bin string, conn []string, human bool) {
	args := []string{"--replication"}
	if human {
		args = append(args, "--human-readable")
	}
	kafkaRun := runKafkaCLI(t, env, append(append(slices.Clone(conn), "describe"), args...)...)
	ourRun := runKraftdCLI(t, bin, append(append([]string{"describe-quorum"}, conn...), args...)...)
	kr, err1 := kafkatest.ParseReplication(kafkaRun.stdout)
	or, err2 := kafkatest.ParseReplication(ourRun.stdout)
	if err1 != nil || err2 != nil || len(kr) != len(or) {
		t.Errorf("describe %v: Kafka exit %d %q %v; kraftd exit %d %q %v; rows:\n%s\n%s", args, kafkaRun.code, kafkaRun.errLine, err1,
			ourRun.code, ourRun.errLine, err2, kafkaRun.stdout, ourRun.stdout)
		return
	}
	for i := range kr {
		for _, k := range []string{"NodeId", "DirectoryId", "Status"} {
			if kr[i][k] != or[i][k] {
				t.Errorf("describe %v row %d %s: Kafka %q, kraftd %q", args, i, k, kr[i][k], or[i][k])
			}
		}
		for _, k := range []string{"LastFetchTimestamp", "LastCaughtUpTimestamp"} {
			if human && kr[i][k] != "-1" && !strings.HasSuffix(or[i][k], " ms ago") {
				t.Errorf("describe %v row %d %s: kraftd %q, Kafka %q", args, i, k, or[i][k], kr[i][k])
			}
		}
	}
}
