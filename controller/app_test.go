package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/uuid"
)

var t0 = time.Unix(1_700_000_000, 0)

func batch(t *testing.T, base int64, recs ...metadata.Record) raft.CommittedBatch {
	t.Helper()
	b := raft.CommittedBatch{BaseOffset: base, LastOffset: base + int64(len(recs)) - 1, Epoch: 1}
	for _, r := range recs {
		_, v := r.ValidVersions()
		if _, ok := r.(*metadata.FeatureLevelRecord); ok {
			v = 0
		}
		val, err := metadata.Append(nil, r, v)
		if err != nil {
			t.Fatal(err)
		}
		b.Records = append(b.Records, val)
	}
	return b
}

func mv() metadata.Record {
	return &metadata.FeatureLevelRecord{Name: features.MetadataVersionName, FeatureLevel: int16(metadata.LatestProductionLevel)}
}

func topic(i byte) metadata.Record {
	return &metadata.TopicRecord{Name: "t" + string('a'+i), TopicId: uuid.UUID{1, i}}
}

func newApp(t *testing.T, maxBytes int64, interval time.Duration) *App {
	t.Helper()
	a, err := New(Options{MaxBytesBetweenSnapshots: maxBytes, MaxSnapshotInterval: interval, Start: t0})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The bytes trigger fires at the published image that reaches the limit,
// counting the batches before the metadata.version with the first image
// that has one; while a snapshot waits, no other is scheduled; once it
// starts the counters restart and the next can queue behind it.
func TestBytesTrigger(t *testing.T) {
	b0 := batch(t, 0, mv())
	b1 := batch(t, 1, topic(0))
	size := BatchBytes(b0) + BatchBytes(b1)
	a := newApp(t, size, 0)
	a.HandleCommit([]raft.CommittedBatch{b0})
	if _, ok := a.NextSnapshot(); ok {
		t.Fatal("a snapshot before the limit")
	}
	a.HandleCommit([]raft.CommittedBatch{b1})
	a.HandleCommit([]raft.CommittedBatch{batch(t, 2, topic(1))})
	job, ok := a.NextSnapshot()
	if !ok || job.ID != (raft.OffsetAndEpoch{Offset: 2, Epoch: 1}) {
		t.Fatalf("job %v %v, want the image at offset 1 (id 2-1)", job.ID, ok)
	}
	// Being written: the next one queues once the bytes reach the limit
	// again, and waits for the first to end.
	for i := int64(3); i < 40; i++ {
		a.HandleCommit([]raft.CommittedBatch{batch(t, i, topic(byte(i)))})
	}
	if _, ok := a.NextSnapshot(); ok {
		t.Fatal("a second snapshot while one is written")
	}
	a.SnapshotWritten(node.SnapshotResult{ID: job.ID, Bytes: 100, At: t0})
	job2, ok := a.NextSnapshot()
	if !ok || job2.ID.Offset <= job.ID.Offset || job2.ID.Offset > 40 {
		t.Fatalf("second job %v %v", job2.ID, ok)
	}
	if v, _ := a.ControllerView(); v.LatestSnapshotBytes != 100 || v.Topics != 39 {
		t.Fatalf("view %+v", v)
	}
}

// The time trigger fires at the first image published after the interval;
// a loaded snapshot restarts the counters.
func TestTimeTrigger(t *testing.T) {
	a := newApp(t, 1<<30, time.Hour)
	a.HandleCommit([]raft.CommittedBatch{batch(t, 0, mv())})
	a.Tick(t0.Add(59*time.Minute), raft.Status{}, nil)
	a.HandleCommit([]raft.CommittedBatch{batch(t, 1, topic(0))})
	if _, ok := a.NextSnapshot(); ok {
		t.Fatal("a snapshot before the interval")
	}
	a.Tick(t0.Add(61*time.Minute), raft.Status{}, nil)
	if _, ok := a.NextSnapshot(); ok {
		t.Fatal("a snapshot without a published image")
	}
	a.HandleCommit([]raft.CommittedBatch{batch(t, 2, topic(1))})
	if job, ok := a.NextSnapshot(); !ok || job.ID.Offset != 3 || job.LastContainedMs != t0.Add(61*time.Minute).UnixMilli() {
		t.Fatalf("job %+v %v", job, ok)
	}
}

// Inside a metadata transaction nothing is published, so no snapshot; the
// End publishes and the trigger fires then.
func TestNoSnapshotInsideTransaction(t *testing.T) {
	a := newApp(t, 1, 0)
	a.HandleCommit([]raft.CommittedBatch{batch(t, 0, &metadata.BeginTransactionRecord{}, mv())})
	a.HandleCommit([]raft.CommittedBatch{batch(t, 2, topic(0))})
	if _, ok := a.NextSnapshot(); ok {
		t.Fatal("a snapshot inside a transaction")
	}
	a.HandleCommit([]raft.CommittedBatch{batch(t, 3, &metadata.EndTransactionRecord{})})
	if job, ok := a.NextSnapshot(); !ok || job.ID.Offset != 4 {
		t.Fatalf("job %+v %v, want at the End", job.ID, ok)
	}
}

// A record that does not replay stops the application with an error
// naming the offset and record, and no snapshot follows.
func TestReplayFailureIsFatal(t *testing.T) {
	a := newApp(t, 1, 0)
	a.HandleCommit([]raft.CommittedBatch{batch(t, 0, mv())})
	a.HandleCommit([]raft.CommittedBatch{batch(t, 1, &metadata.PartitionRecord{TopicId: uuid.UUID{9}, Replicas: []int32{1}, Isr: []int32{1}})})
	err := a.Err()
	if err == nil || !strings.Contains(err.Error(), "PartitionRecord") || !strings.Contains(err.Error(), "offset 1") {
		t.Fatalf("Err %v", err)
	}
	if a.Image().Provenance().Offset != 0 {
		t.Fatalf("published %+v after the failure", a.Image().Provenance())
	}
	// The snapshot scheduled before the failure is dropped too.
	if _, ok := a.NextSnapshot(); ok {
		t.Fatal("a snapshot after a replay failure")
	}
	if v, _ := a.ControllerView(); v.MetadataErrors != 1 {
		t.Fatalf("metadata errors %d", v.MetadataErrors)
	}
}

// BatchBytes is the size of the batch as the log holds it.
func TestBatchBytes(t *testing.T) {
	b := batch(t, 5, mv(), topic(0), topic(1))
	if got, want := BatchBytes(b), encodedSize(b); got != want {
		t.Fatalf("BatchBytes %d, encoded %d", got, want)
	}
}

func encodedSize(b raft.CommittedBatch) int64 {
	var recs []protocol.Record
	for i, v := range b.Records {
		recs = append(recs, protocol.Record{OffsetDelta: int32(i), Value: v})
	}
	return int64(len(protocol.AppendBatch(nil, protocol.Batch{BaseOffset: b.BaseOffset, PartitionLeaderEpoch: b.Epoch,
		BaseTimestamp: 1, MaxTimestamp: 1, Records: recs})))
}
