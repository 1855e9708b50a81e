package interop

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaUnattachedVoterAnswers probes a Kafka controller that cannot win an election (its
// only peer in a 2-voter static quorum is down) with the requests a kraftd voter sends:
// the discovery Fetch a Kafka voter sends while unattached, a pre-vote and a vote. The
// answers decode and re-encode with kraftd's codec, and show what kraftd must answer in
// the same state.
func TestKafkaUnattachedVoterAnswers(t *testing.T) {
	env := kafkatest.Require(t)
	start := time.Now()
	port := kafkatest.FreePort(t)
	absent := kafkatest.FreePort(t) // node 2: nothing listens there
	clusterID := kafkatest.NewUUID()
	ctrl := env.StartController(t, kafkatest.ControllerConfig{
		NodeID: 1, ClusterID: clusterID, Port: port,
		Voters: []string{kafkatest.Voter(1, "127.0.0.1:"+strconv.Itoa(port)), kafkatest.Voter(2, "127.0.0.1:"+strconv.Itoa(absent))},
	})
	t.Logf("Kafka controller started in %v", time.Since(start).Round(time.Millisecond))
	c, err := net.DialTimeout("tcp", ctrl.Addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	fetch := kmsg.NewPtrFetchRequest()
	fetch.SetVersion(17)
	fetch.ClusterID = &clusterID
	fetch.ReplicaID = -1
	fetch.ReplicaState.ID = 2
	fetch.ReplicaState.Epoch = -1
	fetch.MaxWaitMillis = 500
	fetch.MaxBytes = 1 << 20
	fetch.SessionEpoch = -1
	ft := kmsg.NewFetchRequestTopic()
	ft.TopicID = metadataTopicID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition = 0
	fp.CurrentLeaderEpoch = 0
	fp.FetchOffset = 0
	fp.LastFetchedEpoch = 0
	fp.LogStartOffset = -1
	fp.ReplicaDirectoryID = [16]byte{1}
	ft.Partitions = append(ft.Partitions, fp)
	fetch.Topics = append(fetch.Topics, ft)
	_, resp := exchange(t, c, 1, fetch, 17)
	fr := resp.(*kmsg.FetchResponse)
	if fr.ErrorCode != 0 || len(fr.Topics) != 1 || fr.Topics[0].TopicID != metadataTopicID || len(fr.Topics[0].Partitions) != 1 {
		t.Fatalf("Fetch answer %+v", fr)
	}
	p := fr.Topics[0].Partitions[0]
	// Kafka's reference answer: not the leader, no leader known, in epoch 0.
	if p.ErrorCode != kerr.NotLeaderForPartition.Code || p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != 0 || p.HighWatermark != -1 || len(p.RecordBatches) != 0 {
		t.Errorf("discovery Fetch answer %+v", p)
	}
	t.Logf("unattached Kafka voter answers a discovery Fetch: error %v, leader %d epoch %d, HW %d, LSO %d, log start %d, %d record bytes",
		kerr.ErrorForCode(p.ErrorCode), p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch, p.HighWatermark, p.LastStableOffset, p.LogStartOffset, len(p.RecordBatches))

	vote := func(corr int32, epoch int32, pre bool) *kmsg.VoteResponseTopicPartition {
		v := kmsg.NewPtrVoteRequest()
		v.SetVersion(2)
		v.ClusterID = &clusterID
		v.VoterID = 1
		vt := kmsg.NewVoteRequestTopic()
		vt.Topic = "__cluster_metadata"
		vp := kmsg.NewVoteRequestTopicPartition()
		vp.CandidateEpoch, vp.CandidateID, vp.PreVote = epoch, 2, pre
		vp.LastOffsetEpoch, vp.LastOffset = 0, 0
		vt.Partitions = append(vt.Partitions, vp)
		v.Topics = append(v.Topics, vt)
		_, r := exchange(t, c, corr, v, 2)
		vr := r.(*kmsg.VoteResponse)
		if vr.ErrorCode != 0 || len(vr.Topics) != 1 || len(vr.Topics[0].Partitions) != 1 {
			t.Fatalf("Vote answer %+v", vr)
		}
		return &vr.Topics[0].Partitions[0]
	}
	// A pre-vote does not change the voter's epoch; a vote does, and is persisted.
	pv := vote(2, 0, true)
	if pv.ErrorCode != 0 || !pv.VoteGranted || pv.LeaderID != -1 || pv.LeaderEpoch != 0 {
		t.Errorf("pre-vote answer %+v", pv)
	}
	v := vote(3, 1, false)
	if v.ErrorCode != 0 || !v.VoteGranted || v.LeaderID != -1 || v.LeaderEpoch != 1 {
		t.Errorf("vote answer %+v", v)
	}
	if err := ctrl.WaitLog("votedKey=Optional[ReplicaKey(id=2", 10*time.Second); err != nil {
		t.Error(err)
	}
	// A controller that cannot reach its quorum waits out its shutdown timeout on SIGTERM;
	// its shutdown is not under test here.
	ctrl.Kill()
}
