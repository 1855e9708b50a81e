package interop

import (
	"net"
	"testing"
	"time"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// testRaftApisOfLeader asks a real single-voter Kafka leader what kafka-metadata-quorum and a
// kraftd observer ask: DescribeCluster v2, DescribeQuorum v2 and Fetch v17 from offset 0.
// Each answer decodes with kraftd's codec and re-encodes to Kafka's bytes (exchange checks),
// and the record batches of the Fetch answer are the batches kafka-dump-log prints for the
// leader's segment.
func testRaftApisOfLeader(t *testing.T, env *kafkatest.Env, ctrl *kafkatest.Controller) {
	c, err := net.DialTimeout("tcp", ctrl.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	dc := kmsg.NewPtrDescribeClusterRequest()
	dc.SetVersion(2)
	dc.EndpointType = 2 // controllers
	// Kafka lists controllers from their ControllerRegistration records, committed shortly
	// after the first election; until then it answers ControllerID -1 and no nodes.
	var dcr *kmsg.DescribeClusterResponse
	for corr, deadline := int32(100), time.Now().Add(20*time.Second); ; corr++ {
		_, resp := exchange(t, c, corr, dc, 2)
		dcr = resp.(*kmsg.DescribeClusterResponse)
		if dcr.ControllerID != -1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if dcr.ErrorCode != 0 || dcr.ClusterID != ctrl.ClusterID || dcr.ControllerID != ctrl.NodeID || len(dcr.Brokers) != 1 ||
		dcr.Brokers[0].NodeID != ctrl.NodeID || dcr.Brokers[0].Port != int32(ctrl.Port) {
		t.Errorf("DescribeCluster v2: %+v", dcr)
	}

	dq := kmsg.NewPtrDescribeQuorumRequest()
	dq.SetVersion(2)
	dqt := kmsg.NewDescribeQuorumRequestTopic()
	dqt.Topic = "__cluster_metadata"
	dqp := kmsg.NewDescribeQuorumRequestTopicPartition()
	dqt.Partitions = append(dqt.Partitions, dqp)
	dq.Topics = append(dq.Topics, dqt)
	_, resp := exchange(t, c, 2, dq, 2)
	dqr := resp.(*kmsg.DescribeQuorumResponse)
	if dqr.ErrorCode != 0 || len(dqr.Topics) != 1 || len(dqr.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeQuorum v2: %+v", dqr)
	}
	qp := dqr.Topics[0].Partitions[0]
	if qp.ErrorCode != 0 || qp.LeaderID != ctrl.NodeID || qp.LeaderEpoch < 1 || len(qp.CurrentVoters) != 1 || len(dqr.Nodes) != 1 {
		t.Errorf("DescribeQuorum v2 partition %+v nodes %+v", qp, dqr.Nodes)
	}

	f := kmsg.NewPtrFetchRequest()
	f.SetVersion(17)
	f.ClusterID = &ctrl.ClusterID
	f.ReplicaID = -1
	f.ReplicaState.ID = -1 // an observer without an id
	f.ReplicaState.Epoch = -1
	f.MaxBytes = 8 << 20
	f.SessionEpoch = -1
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = metadataTopicID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.CurrentLeaderEpoch = qp.LeaderEpoch
	fp.FetchOffset = 0
	fp.LastFetchedEpoch = 0 // kmsg's default is -1, which KRaft refuses with INVALID_REQUEST
	fp.LogStartOffset = -1
	fp.PartitionMaxBytes = 8 << 20
	ft.Partitions = append(ft.Partitions, fp)
	f.Topics = append(f.Topics, ft)
	_, resp = exchange(t, c, 3, f, 17)
	fr := resp.(*kmsg.FetchResponse)
	if fr.ErrorCode != 0 || len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		t.Fatalf("Fetch v17: %+v", fr)
	}
	p := fr.Topics[0].Partitions[0]
	if p.ErrorCode != 0 || len(p.RecordBatches) == 0 || p.CurrentLeader.LeaderID != ctrl.NodeID {
		t.Fatalf("Fetch v17 partition: error %d, leader %+v, %d record bytes", p.ErrorCode, p.CurrentLeader, len(p.RecordBatches))
	}

	// The leader keeps appending NoOps: compare the fetched prefix with the segment's dump.
	dumped, _ := dumpedBatches(t, env, ctrl.PartitionDir)
	i := 0
	for rest := p.RecordBatches; len(rest) > 0; i++ {
		h, err := protocol.ParseBatchHeader(rest)
		if err != nil || h.Size() > len(rest) {
			t.Fatalf("fetched batch %d: %v (%d bytes left)", i, err, len(rest))
		}
		if i >= len(dumped) {
			t.Fatalf("fetched more batches than the segment holds (%d)", len(dumped))
		}
		checkBatchAgainstDump(t, i, rest[:h.Size()], dumped[i])
		rest = rest[h.Size():]
	}
	t.Logf("Fetch v17 from offset 0 returned %d batches (HW %d), equal to the leader's segment", i, p.HighWatermark)
}
