package interop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// classFeatures is kafka-features.
const classFeatures = "org.apache.kafka.tools.FeatureCommand"

// upgradeKRaftVersion runs kafka-features upgrade until it succeeds: the leader refuses
// while some voter has not yet reported its kraft.version range (UpdateRaftVoter, once per
// leader a fetch timeout into its epoch).
func upgradeKRaftVersion(ctx context.Context, t *testing.T, env *kafkatest.Env, addr string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := env.RunTool(ctx, classFeatures, "--bootstrap-controller", addr, "upgrade", "--feature", "kraft.version=1")
		if err == nil {
			if !strings.Contains(out, "kraft.version was upgraded to 1.") {
				t.Fatalf("kafka-features upgrade printed %q", out)
			}
			return out
		}
		var te *kafkatest.ToolError
		if !errors.As(err, &te) || !strings.Contains(te.Stdout+te.Stderr, "not all of the voters support it") || time.Now().After(deadline) {
			t.Fatalf("kafka-features upgrade: %v", err)
		}
		t.Logf("upgrade refused until every voter reported: %s", firstLine(te.Stdout+te.Stderr))
		time.Sleep(time.Second)
	}
}

var kraftVersionLine = regexp.MustCompile(`Feature: kraft\.version\s+SupportedMinVersion: (\d+)\s+SupportedMaxVersion: (\d+)\s+FinalizedVersionLevel: (\d+)\s+Epoch: (\S+)`)

// finalizedKRaftVersion is kraft.version's FinalizedVersionLevel in kafka-features describe
// against addr. A run is retried: just after a leader change the admin client can wait for
// metadata until its timeout.
func finalizedKRaftVersion(ctx context.Context, t *testing.T, env *kafkatest.Env, addr string) string {
	t.Helper()
	var out string
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		runCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err = env.RunTool(runCtx, classFeatures, "--bootstrap-controller", addr, "describe")
		cancel()
		if err == nil {
			break
		}
		t.Logf("kafka-features describe against %s: %s", addr, firstLine(err.Error()))
	}
	if err != nil {
		t.Fatalf("kafka-features describe against %s: %v", addr, err)
	}
	m := kraftVersionLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("kafka-features describe against %s lists no kraft.version:\n%s", addr, out)
	}
	if m[1] != "0" || m[2] != "1" {
		t.Errorf("kafka-features describe against %s: kraft.version supported %s-%s, want 0-1", addr, m[1], m[2])
	}
	return m[3]
}

// checkVoterDirectories: describe --replication lists every voter with its node's directory id.
func checkVoterDirectories(ctx context.Context, t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft, addr string) {
	t.Helper()
	rows, err := env.DescribeReplication(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, row := range rows {
		if strings.Contains(row["Status"], "Leader") || strings.Contains(row["Status"], "Follower") {
			got[row["NodeId"]] = row["DirectoryId"]
		}
	}
	for _, n := range q.Nodes {
		if d, want := got[fmt.Sprint(n.ID)], directoryID(t, n); d != want {
			t.Errorf("describe --replication: voter %d directory %q, want %q (rows %v)", n.ID, d, want, rows)
		}
	}
}

// adminReady waits until Kafka's admin tools work against the Kafka leader at addr: its
// DescribeCluster lists the controllers that registered with it.
func adminReady(ctx context.Context, t *testing.T, env *kafkatest.Env, addr string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		runCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_, err := env.MetadataQuorum(runCtx, addr, "describe", "--status")
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("kafka-metadata-quorum against %s: %v", addr, err)
		}
		time.Sleep(time.Second)
	}
}

// directoryID is the directory id the node's format wrote.
func directoryID(t *testing.T, n *kafkatest.MixedNode) string {
	t.Helper()
	meta, err := kafkatest.MetaProperties(n.LogDir)
	if err != nil {
		t.Fatal(err)
	}
	return meta["directory.id"]
}

func removeController(ctx context.Context, t *testing.T, env *kafkatest.Env, addr string, n *kafkatest.MixedNode) {
	t.Helper()
	out, err := env.MetadataQuorum(ctx, addr, "remove-controller", "--controller-id", fmt.Sprint(n.ID),
		"--controller-directory-id", directoryID(t, n))
	if err != nil {
		t.Fatalf("remove-controller %d: %v", n.ID, err)
	}
	t.Logf("remove-controller: %s", strings.TrimSpace(out))
}

// waitVoters waits until describe --status lists want voters.
func waitVoters(ctx context.Context, t *testing.T, env *kafkatest.Env, addr string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := env.DescribeStatus(ctx, addr)
		if err == nil && strings.Count(st["CurrentVoters"], `"id"`) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("describe --status: want %d voters: %v %v", want, st, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// checkControlRecordsDumped: kafka-dump-log decodes the same KRaftVersion and KRaftVoters
// records on every node.
func checkControlRecordsDumped(ctx context.Context, t *testing.T, env *kafkatest.Env, q *kafkatest.MixedRaft) {
	t.Helper()
	var ref []string
	for i, n := range q.Nodes {
		segs, err := filepath.Glob(filepath.Join(n.PartitionDir, "*.log"))
		if err != nil || len(segs) == 0 {
			t.Fatalf("no segments in %s", n.PartitionDir)
		}
		sort.Strings(segs)
		out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true, ClusterMetadataDecoder: true}, segs...)
		if err != nil {
			t.Fatal(err)
		}
		var recs []string
		for _, line := range strings.Split(out, "\n") {
			// Records only: the "Dumping <path>" lines name the test's directory.
			i := strings.Index(line, "| offset:")
			if i < 0 || !strings.Contains(line, "KRaftVersion {") && !strings.Contains(line, "KRaftVoters {") {
				continue
			}
			recs = append(recs, line[i:])
		}
		if i == 0 {
			ref = recs
			t.Logf("kafka-dump-log: %d KRaftVersion/KRaftVoters records, e.g. %s", len(recs), strings.Join(recs, "\n"))
			if len(recs) < 2 {
				t.Errorf("node %d: no KRaftVersion and Voters records dumped", n.ID)
			}
			continue
		}
		// A removed voter stops at its removal; the records it has match.
		if len(recs) > len(ref) || strings.Join(recs, "\n") != strings.Join(ref[:len(recs)], "\n") {
			t.Errorf("node %d dumps other control records:\n%s\nnode %d:\n%s", n.ID, strings.Join(recs, "\n"), q.Nodes[0].ID, strings.Join(ref, "\n"))
		}
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// waitHighWatermarkGrows waits until the Kafka leader at addr commits past its current high
// watermark (a Kafka controller appends a NoOpRecord every 500 ms) and returns the new one.
func waitHighWatermarkGrows(t *testing.T, addr string) int64 {
	t.Helper()
	d, err := kafkatest.DescribeQuorum(addr, "__cluster_metadata")
	if err != nil {
		t.Fatal(err)
	}
	from := d.HighWatermark
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := kafkatest.DescribeQuorum(addr, "__cluster_metadata")
		if err == nil && d.HighWatermark > from+2 {
			return d.HighWatermark
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Kafka leader at %s commits nothing past %d: %+v %v", addr, from, d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
