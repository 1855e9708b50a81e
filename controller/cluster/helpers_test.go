package cluster

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

const testCluster = "q1Sh-9_ISia_zwGINzRvyQ"

// world is a controller in miniature: a working image the records of each
// operation are appended to and replayed into, the lifecycle manager kept in
// step, and a clock.
type world struct {
	t    *testing.T
	b    *image.Builder
	next int64
	now  time.Duration
	m    *Manager
}

func newWorld(t *testing.T, mv metadata.Level, elr bool) *world {
	t.Helper()
	w := &world{t: t, b: image.NewBuilder(image.Empty(), image.Options{}), now: time.Hour}
	w.replay(&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: int16(mv)}, 0)
	if elr {
		w.replay(&metadata.FeatureLevelRecord{Name: "eligible.leader.replicas.version", FeatureLevel: 1}, 0)
	}
	w.m = Activate(Settings{ClusterID: testCluster, NodeID: 3000, SessionTimeout: DefaultSessionTimeout}, w.b.Image(), w.now)
	return w
}

func (w *world) replay(rec metadata.Record, version int16) {
	w.t.Helper()
	if err := w.b.Replay(w.next, 1, rec, version); err != nil {
		w.t.Fatal(err)
	}
	w.next++
	if w.m != nil {
		w.m.Replayed(rec, w.b.Image())
	}
}

func (w *world) apply(recs []Record) {
	w.t.Helper()
	for _, r := range recs {
		w.replay(r.Record, r.Version)
	}
}

func (w *world) op() Op {
	return Op{Image: w.b.Image(), Now: w.now, NextOffset: w.next, APIVersion: 4}
}

func dirID(n byte) [16]byte { return [16]byte{0: 0x80, 15: n} }

func incarnation(n byte) [16]byte { return [16]byte{0: 0x11, 15: n} }

// registration is a valid v4 request of broker id with one directory.
func registration(id int32, inc byte) *kmsg.BrokerRegistrationRequest {
	r := kmsg.NewPtrBrokerRegistrationRequest()
	r.Version = 4
	r.BrokerID, r.ClusterID, r.IncarnationID = id, testCluster, incarnation(inc)
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "PLAINTEXT", "localhost", uint16(9000+id)
	r.Listeners = []kmsg.BrokerRegistrationRequestListener{l}
	for _, f := range [][3]any{{"metadata.version", 7, 34}, {"kraft.version", 0, 1}, {"eligible.leader.replicas.version", 0, 1}} {
		ff := kmsg.NewBrokerRegistrationRequestFeature()
		ff.Name, ff.MinSupportedVersion, ff.MaxSupportedVersion = f[0].(string), int16(f[1].(int)), int16(f[2].(int))
		r.Features = append(r.Features, ff)
	}
	r.LogDirs = [][16]byte{dirID(byte(id))}
	r.PreviousBrokerEpoch = -1
	return r
}

// register registers broker id and applies the records, returning its epoch.
func (w *world) register(id int32, inc byte) int64 {
	w.t.Helper()
	res, err := w.m.RegisterBroker(w.op(), registration(id, inc))
	if err != nil {
		w.t.Fatal(err)
	}
	w.apply(res.Records)
	return res.Response.BrokerEpoch
}

func heartbeat(id int32, epoch, offset int64, fence, shutdown bool) *kmsg.BrokerHeartbeatRequest {
	r := kmsg.NewPtrBrokerHeartbeatRequest()
	r.Version = 1
	r.BrokerID, r.BrokerEpoch, r.CurrentMetadataOffset, r.WantFence, r.WantShutdown = id, epoch, offset, fence, shutdown
	r.CordonedLogDirs = nil // as a broker sends until it recovers
	return r
}

// beat sends a heartbeat at the current time and applies its records.
func (w *world) beat(id int32, epoch int64, fence, shutdown bool) (kmsg.BrokerHeartbeatResponse, []Record) {
	w.t.Helper()
	w.m.TrackHeartbeat(id, epoch, w.now)
	res, err := w.m.Heartbeat(w.op(), heartbeat(id, epoch, w.next-1, fence, shutdown))
	if err != nil {
		w.t.Fatal(err)
	}
	w.apply(res.Records)
	return res.Response, res.Records
}

// unfence registers broker id and heartbeats it to UNFENCED.
func (w *world) unfence(id int32) int64 {
	w.t.Helper()
	epoch := w.register(id, byte(id))
	if resp, _ := w.beat(id, epoch, false, false); resp.IsFenced {
		w.t.Fatalf("broker %d still fenced", id)
	}
	return epoch
}

var topicA = uuid.UUID{0: 0x40, 15: 1}

// topic creates topic "a" with one partition per replica list, the first
// replica leading and every replica in the ISR.
func (w *world) topic(replicas ...[]int32) {
	w.t.Helper()
	w.replay(&metadata.TopicRecord{Name: "a", TopicId: topicA}, 0)
	mv, _ := w.b.Image().MetadataVersion()
	v, _ := mv.RecordVersion(metadata.PartitionRecordAPIKey)
	for i, rs := range replicas {
		p := metadata.NewPartitionRecord()
		p.TopicId, p.PartitionId, p.Replicas, p.Isr = topicA, int32(i), rs, slices.Clone(rs)
		p.RemovingReplicas, p.AddingReplicas, p.Leader = []int32{}, []int32{}, rs[0]
		if mv.Has(metadata.GateDirectoryAssignment) {
			for _, r := range rs {
				p.Directories = append(p.Directories, dirID(byte(r)))
			}
		}
		w.replay(p, v)
	}
}

func (w *world) partition(pid int32) image.Partition {
	w.t.Helper()
	p, ok := w.b.Image().Partition(topicA, pid)
	if !ok {
		w.t.Fatalf("no partition %d", pid)
	}
	return p
}

func wantRefusal(t *testing.T, err error, code int16, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want refusal %d %q", err, code, msg)
	}
	if e.Code != code || e.Message != msg {
		t.Errorf("got %d %q, want %d %q", e.Code, e.Message, code, msg)
	}
}

// types lists the records' type names, for comparing sequences.
func types(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Record.TypeName()
	}
	return out
}
