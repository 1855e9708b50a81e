package interop

import (
	"context"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKafkaToolDescribesKraftd: Kafka's kafka-metadata-quorum describes a single-voter kraftd
// controller (DescribeCluster, then DescribeQuorum, over kraftd's wire protocol).
func TestKafkaToolDescribesKraftd(t *testing.T) {
	env := kafkatest.Require(t)
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var st map[string]string
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		st, err = env.DescribeStatus(ctx, k.Addr)
		if err == nil && st["LeaderId"] == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kafka-metadata-quorum describe --status against kraftd: %v %v", st, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("kafka-metadata-quorum describe --status against kraftd: %v", st)
	if st["ClusterId"] != k.ClusterID {
		t.Errorf("ClusterId %q, want %q", st["ClusterId"], k.ClusterID)
	}
	rows, err := env.DescribeReplication(ctx, k.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("describe --replication against kraftd: %v", rows)
	if len(rows) != 1 || rows[0]["NodeId"] != "1" || rows[0]["Status"] != "Leader" {
		t.Errorf("rows %v", rows)
	}
}
