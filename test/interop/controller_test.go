package interop

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKafkaController runs one real Kafka controller (single static voter) and shares it
// between subtests, since each JVM start costs seconds on a small machine.
func TestKafkaController(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	start := time.Now()
	ctrl := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1})
	t.Logf("Kafka %s controller listening on %s after %v (pid %d)", kafkatest.KafkaVersion, ctrl.Addr, time.Since(start).Round(time.Millisecond), ctrl.Pid())
	if err := ctrl.WaitLog("Completed transition to Leader", 30*time.Second); err != nil {
		t.Fatal(err)
	}

	t.Run("ApiVersions", func(t *testing.T) { testApiVersions(t, ctrl) })
	t.Run("ApiVersionsUnsupported", func(t *testing.T) { testApiVersionsUnsupported(t, ctrl) })
	t.Run("RaftApisOfLeader", func(t *testing.T) { testRaftApisOfLeader(t, env, ctrl) })
	t.Run("MetadataQuorumDescribe", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		st, err := env.DescribeStatus(ctx, ctrl.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if st["ClusterId"] != ctrl.ClusterID || st["LeaderId"] != "1" {
			t.Errorf("describe --status: ClusterId %q LeaderId %q, want %q and 1: %v", st["ClusterId"], st["LeaderId"], ctrl.ClusterID, st)
		}
		if epoch, err := strconv.Atoi(st["LeaderEpoch"]); err != nil || epoch < 1 {
			t.Errorf("describe --status LeaderEpoch %q", st["LeaderEpoch"])
		}
		rows, err := env.DescribeReplication(ctx, ctrl.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0]["NodeId"] != "1" || rows[0]["Status"] != "Leader" {
			t.Errorf("describe --replication rows %v, want node 1 as the only row, Leader", rows)
		}
	})
}
