package interop

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestBrokerLifecycleRandomAgainstKafka drives five fake brokers through a
// random sequence of registrations (amended, new incarnations clean and
// unclean, duplicates), heartbeats (stale epochs, behind or caught up,
// wanting fence or shutdown, directories going offline, cordoned
// directories) and unregistrations against a Kafka 4.4.0 controller (ELR on,
// topics with min.insync.replicas 1 and 2), each step decided by
// controller/cluster on the JVM's own image and compared as in
// TestClusterLifecycleAgainstKafka. The seed is logged;
// KRAFTD_METADATA_SEED replays it.
func TestBrokerLifecycleRandomAgainstKafka(t *testing.T) {
	l := startLifecycle(t, 600*time.Second)
	rnd := rand.New(rand.NewPCG(corpusSeed(t), 7))
	const brokers = 5
	inc := map[int32]byte{}
	for id := int32(1); id <= brokers; id++ {
		inc[id] = 1
		l.unfence(id, 1)
	}
	for i, minISR := range []string{"1", "2"} {
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.Version, ct.TimeoutMillis = 7, 30000
		tp := kmsg.NewCreateTopicsRequestTopic()
		tp.Topic, tp.NumPartitions, tp.ReplicationFactor = fmt.Sprintf("random%d", i), -1, -1
		for p := range 12 {
			perm := rnd.Perm(brokers)
			rs := []int32{int32(perm[0] + 1), int32(perm[1] + 1), int32(perm[2] + 1)}
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(p), rs
			tp.ReplicaAssignment = append(tp.ReplicaAssignment, a)
		}
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = "min.insync.replicas", kmsg.StringPtr(minISR)
		tp.Configs = append(tp.Configs, c)
		ct.Topics = append(ct.Topics, tp)
		if resp := l.send(ct).(*kmsg.CreateTopicsResponse); resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("create topic: %d %v", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage)
		}
		l.catchUp()
	}

	for step := range 160 {
		id := int32(1 + rnd.IntN(brokers))
		b, registered := l.b.Image().Broker(id)
		switch k := rnd.IntN(10); {
		case !registered || k == 0:
			r := l.reg(id, inc[id])
			if rnd.IntN(2) == 0 {
				inc[id]++ // a restart
				r = l.reg(id, inc[id])
				if registered && rnd.IntN(2) == 0 {
					r.PreviousBrokerEpoch = b.Epoch // after a clean shutdown
				}
			}
			l.register(fmt.Sprintf("step %d: broker %d registers (incarnation %d)", step, id, inc[id]), r)
		case k == 1:
			req := kmsg.NewPtrUnregisterBrokerRequest()
			req.BrokerID = id
			mine, err := l.m.UnregisterBroker(l.op(0), id)
			resp := l.send(req).(*kmsg.UnregisterBrokerResponse)
			jvm, _ := l.catchUp()
			name := fmt.Sprintf("step %d: broker %d unregistered", step, id)
			sameError(t, name, err, resp.ErrorCode, resp.ErrorMessage)
			if err == nil {
				sameRecords(t, name, mine.Records, jvm)
			}
		default:
			epoch := b.Epoch
			if rnd.IntN(12) == 0 {
				epoch++
			}
			req := l.hb(id, epoch, rnd.IntN(6) == 0, rnd.IntN(6) == 0)
			if rnd.IntN(5) == 0 {
				req.CurrentMetadataOffset = b.RegistrationOffset - 1 - rnd.Int64N(3)
			}
			if rnd.IntN(10) == 0 {
				req.OfflineLogDirs = [][16]byte{lifecycleDir(byte(id), byte(1+rnd.IntN(2)))}
			}
			if rnd.IntN(4) == 0 {
				req.Version = 2
				req.CordonedLogDirs = [][16]byte{}
				if rnd.IntN(2) == 0 {
					req.CordonedLogDirs = append(req.CordonedLogDirs, lifecycleDir(byte(id), byte(1+rnd.IntN(2))))
				}
			}
			l.heartbeat(fmt.Sprintf("step %d: broker %d heartbeats (epoch %d, fence %v, shutdown %v, offset %d)",
				step, id, epoch, req.WantFence, req.WantShutdown, req.CurrentMetadataOffset), req)
		}
		if t.Failed() {
			t.Fatalf("stopped at step %d", step)
		}
	}
}
