package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/storage"
)

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRandomUUID(t *testing.T) {
	code, out, _ := runCmd(t, "random-uuid")
	if code != 0 {
		t.Fatal(code)
	}
	id := strings.TrimSpace(out)
	if _, err := storage.ParseClusterID(id); err != nil {
		t.Fatalf("random-uuid printed %q: %v", id, err)
	}
	_, out2, _ := runCmd(t, "random-uuid")
	if strings.TrimSpace(out2) == id {
		t.Fatal("two random-uuid calls printed the same id")
	}
}

func TestFormatAndInfo(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.properties")
	logDir := filepath.Join(dir, "logs")
	if err := os.WriteFile(cfg, []byte(`node.id=2
process.roles=controller
listeners=CONTROLLER://127.0.0.1:9093
controller.listener.names=CONTROLLER
controller.quorum.voters=2@127.0.0.1:9093
log.dirs=`+logDir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "MkU3OEVBNTcwNTJENDM2Qg"
	if code, _, errs := runCmd(t, "format", "--config", cfg, "--cluster-id", "not-an-id"); code != 1 || !strings.Contains(errs, "22 base64url") {
		t.Fatalf("bad id: code %d stderr %q", code, errs)
	}
	if code, _, errs := runCmd(t, "format", "--config", cfg); code != 1 || !strings.Contains(errs, "--cluster-id is required") {
		t.Fatalf("no id: code %d stderr %q", code, errs)
	}
	code, out, errs := runCmd(t, "format", "--config", cfg, "--cluster-id", id)
	if code != 0 || !strings.Contains(out, "Formatting metadata directory "+logDir) {
		t.Fatalf("format: code %d out %q err %q", code, out, errs)
	}
	mp, err := storage.ReadMetaProperties(logDir)
	if err != nil || mp.ClusterID != id || mp.NodeID != 2 {
		t.Fatalf("meta.properties %+v %v", mp, err)
	}
	if code, _, errs := runCmd(t, "format", "-c", cfg, "-t", id); code != 1 || !strings.Contains(errs, "already formatted") {
		t.Fatalf("reformat: code %d stderr %q", code, errs)
	}
	if code, out, _ := runCmd(t, "format", "-c", cfg, "-t", id, "--ignore-formatted"); code != 0 || !strings.Contains(out, "All of the log directories are already formatted.") {
		t.Fatalf("reformat -g: code %d out %q", code, out)
	}
	code, out, _ = runCmd(t, "info", "--config", cfg)
	if code != 0 || !strings.Contains(out, "cluster.id="+id) || !strings.Contains(out, "node.id=2") {
		t.Fatalf("info: %d %q", code, out)
	}
	// An override changes one key: a different node id no longer matches.
	code, _, errs = runCmd(t, "format", "-c", cfg, "-t", id, "-g", "--override", "node.id=3", "--override", "controller.quorum.voters=3@127.0.0.1:9093")
	if code != 1 || !strings.Contains(errs, "node id") {
		t.Fatalf("override: %d %q", code, errs)
	}
	// info of an unformatted dir exits 1 and says so.
	other := filepath.Join(dir, "other")
	_ = os.Mkdir(other, 0o755)
	code, out, _ = runCmd(t, "info", "-c", cfg, "--override", "log.dirs="+other)
	if code != 1 || !strings.Contains(out, "is not formatted") {
		t.Fatalf("info unformatted: %d %q", code, out)
	}
}

func TestUnknownCommand(t *testing.T) {
	if code, _, errs := runCmd(t, "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Fatal(code, errs)
	}
	if code, _, errs := runCmd(t, "format", "--nope"); code == 0 || !strings.Contains(errs, "unknown flag") {
		t.Fatal(code, errs)
	}
}

func replica(id int32, dir byte, leo, fetch, caught int64) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	r.ReplicaID = id
	if dir != 0 {
		r.ReplicaDirectoryID[15] = dir
		r.ReplicaDirectoryID[0] = 0x40
	}
	r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = leo, fetch, caught
	return r
}

func sampleQuorum() *admin.Quorum {
	p := kmsg.NewDescribeQuorumResponseTopicPartition()
	p.LeaderID, p.LeaderEpoch, p.HighWatermark = 2, 7, 100
	p.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{
		replica(1, 1, 90, 1700000000100, 1700000000050),
		replica(2, 2, 105, 1700000000200, 1700000000200),
		replica(3, 0, 105, 1700000000150, 1700000000150),
	}
	p.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{replica(4, 0, 80, 1700000000120, -1)}
	n1 := kmsg.NewDescribeQuorumResponseNode()
	n1.NodeID = 1
	l := kmsg.NewDescribeQuorumResponseNodeListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "localhost", 9093
	n1.Listeners = append(n1.Listeners, l)
	n3 := kmsg.NewDescribeQuorumResponseNode()
	n3.NodeID = 3
	l.Host, l.Port = "::1", 9095
	n3.Listeners = append(n3.Listeners, l)
	return &admin.Quorum{ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", Partition: p, Nodes: []kmsg.DescribeQuorumResponseNode{n1, n3}}
}

func TestPrintQuorumStatus(t *testing.T) {
	var b bytes.Buffer
	if err := printQuorumStatus(&b, sampleQuorum()); err != nil {
		t.Fatal(err)
	}
	want := `ClusterId:              MkU3OEVBNTcwNTJENDM2Qg
LeaderId:               2
LeaderEpoch:            7
HighWatermark:          100
MaxFollowerLag:         15
MaxFollowerLagTimeMs:   150
CurrentVoters:          [{"id": 1, "directoryId": "QAAAAAAAAAAAAAAAAAAAAQ", "endpoints": ["CONTROLLER://localhost:9093"]}, {"id": 2, "directoryId": "QAAAAAAAAAAAAAAAAAAAAg"}, {"id": 3, "endpoints": ["CONTROLLER://[::1]:9095"]}]
CurrentObservers:       [{"id": 4}]
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	q := sampleQuorum()
	q.Partition.LeaderID = 9
	if err := printQuorumStatus(&b, q); err == nil {
		t.Error("leader outside the voters: want error")
	}
}

func TestPrintQuorumReplication(t *testing.T) {
	var b bytes.Buffer
	if err := printQuorumReplication(&b, sampleQuorum(), false, time.UnixMilli(1700000001000)); err != nil {
		t.Fatal(err)
	}
	want := "NodeId\tDirectoryId           \tLogEndOffset\tLag\tLastFetchTimestamp\tLastCaughtUpTimestamp\tStatus  \t\n" +
		"2     \tQAAAAAAAAAAAAAAAAAAAAg\t105         \t0  \t1700000000200     \t1700000000200        \tLeader  \t\n" +
		"1     \tQAAAAAAAAAAAAAAAAAAAAQ\t90          \t15 \t1700000000100     \t1700000000050        \tFollower\t\n" +
		"3     \tAAAAAAAAAAAAAAAAAAAAAA\t105         \t0  \t1700000000150     \t1700000000150        \tFollower\t\n" +
		"4     \tAAAAAAAAAAAAAAAAAAAAAA\t80          \t25 \t1700000000120     \t-1                   \tObserver\t\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := printQuorumReplication(&b, sampleQuorum(), true, time.UnixMilli(1700000001000)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "800 ms ago") || !strings.Contains(b.String(), "\t-1 ") {
		t.Errorf("human readable:\n%s", b.String())
	}
	if err := printQuorumReplication(&b, sampleQuorum(), true, time.UnixMilli(1700000000000)); err == nil {
		t.Error("timestamps in the future: want error")
	}
}

func TestLoggerFormats(t *testing.T) {
	var b bytes.Buffer
	lf := logFlags{format: "json", level: "info"}
	lg, err := lf.newLogger(&b)
	if err != nil {
		t.Fatal(err)
	}
	lg.Debug("hidden")
	lg.Info("leader change", zap.Int32("node_id", 1), zap.Int32("epoch", 4))
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("json log line %q: %v", b.String(), err)
	}
	if m["msg"] != "leader change" || m["epoch"] != float64(4) || m["node_id"] != float64(1) {
		t.Fatalf("%v", m)
	}
	b.Reset()
	lf = logFlags{format: "console", level: "debug"}
	if lg, err = lf.newLogger(&b); err != nil {
		t.Fatal(err)
	}
	lg.Debug("state transition", zap.Int32("epoch", 2))
	if !strings.Contains(b.String(), "DEBUG\tstate transition\t{\"epoch\": 2}") {
		t.Fatalf("console line %q", b.String())
	}
	for _, bad := range []logFlags{{format: "xml", level: "info"}, {format: "json", level: "loud"}} {
		if _, err := bad.newLogger(&b); err == nil {
			t.Errorf("%+v: want error", bad)
		}
	}
}
