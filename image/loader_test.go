package image

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
)

// encodeAll encodes records at their highest versions.
func encodeAll(t testing.TB, recs ...metadata.Record) [][]byte {
	t.Helper()
	out := make([][]byte, len(recs))
	for i, r := range recs {
		_, hi := r.ValidVersions()
		v, err := metadata.Append(nil, r, hi)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

func batch(t testing.TB, base int64, recs ...metadata.Record) raft.CommittedBatch {
	return raft.CommittedBatch{BaseOffset: base, LastOffset: base + int64(len(recs)) - 1, Epoch: 2, Records: encodeAll(t, recs...)}
}

func commit(t *testing.T, l *Loader, b raft.CommittedBatch) {
	t.Helper()
	if err := l.HandleCommit(b); err != nil {
		t.Fatal(err)
	}
}

// snapshotFile is a snapshot as raft stores it: header control batch, data
// batches of the records (two per batch), footer control batch.
type snapshotFile struct{ b []byte }

func newSnapshotFile(t testing.TB, recs ...metadata.Record) snapshotFile {
	buf := protocol.AppendControlBatch(nil, 0, 0, 0, protocol.ControlSnapshotHeader, protocol.SnapshotHeaderRecord{}.AppendTo(nil))
	vals := encodeAll(t, recs...)
	for i := 0; i < len(vals); i += 2 {
		var b protocol.Batch
		for j := i; j < min(i+2, len(vals)); j++ {
			b.Records = append(b.Records, protocol.Record{OffsetDelta: int32(j - i), Value: vals[j]})
		}
		buf = protocol.AppendBatch(buf, b)
	}
	buf = protocol.AppendControlBatch(buf, 0, 0, 0, protocol.ControlSnapshotFooter, protocol.SnapshotFooterRecord{}.AppendTo(nil))
	return snapshotFile{buf}
}

func (s snapshotFile) ID() raft.OffsetAndEpoch { return raft.OffsetAndEpoch{} }
func (s snapshotFile) Size() int64             { return int64(len(s.b)) }
func (s snapshotFile) Close() error            { return nil }
func (s snapshotFile) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(s.b).ReadAt(p, off)
}

func TestLoaderCommits(t *testing.T) {
	l := NewLoader(Options{})
	commit(t, l, batch(t, 0, mvRec(33), topic("foo", tid(1))))
	if im := l.Image(); im.Provenance() != (Provenance{1, 2}) || im.Counts().Topics != 1 {
		t.Fatalf("image at %+v with %d topics", im.Provenance(), im.Counts().Topics)
	}
	commit(t, l, raft.CommittedBatch{BaseOffset: 2, LastOffset: 3, Epoch: 3, Control: true, Records: [][]byte{{1}, {2}}})
	if p := l.Image().Provenance(); p != (Provenance{3, 3}) {
		t.Fatalf("a control batch left the image at %+v", p)
	}
	if err := l.HandleCommit(batch(t, 3, topic("bar", tid(2)))); err == nil || !strings.Contains(err.Error(), "does not follow offset 3") {
		t.Fatalf("an overlapping batch: %v", err)
	}
}

func TestLoaderFailureIsFinal(t *testing.T) {
	l := NewLoader(Options{})
	commit(t, l, batch(t, 0, mvRec(33)))
	before := l.Image()
	err := l.HandleCommit(batch(t, 1, topic("foo", tid(1)), topic("foo", tid(1))))
	var re *ReplayError
	if !errors.As(err, &re) || re.Offset != 2 || re.Type != "TopicRecord" || re.Version != 0 {
		t.Fatalf("error %v", err)
	}
	if l.Image() != before || l.Err() == nil {
		t.Fatal("a failed batch was published")
	}
	if err := l.HandleCommit(batch(t, 3, &metadata.NoOpRecord{})); err != l.Err() {
		t.Fatalf("a failed loader took more input: %v", err)
	}
	bad := NewLoader(Options{})
	if err := bad.HandleCommit(raft.CommittedBatch{BaseOffset: 0, LastOffset: 0, Records: [][]byte{{1, 99, 0}}}); err == nil ||
		!errors.Is(err, metadata.ErrMalformed) || !strings.Contains(err.Error(), "offset 0") {
		t.Fatalf("an undecodable record: %v", err)
	}
}

// TestLoaderTransactions: nothing inside an open transaction is published;
// End publishes it all, Abort reverts to the image before Begin.
func TestLoaderTransactions(t *testing.T) {
	for _, end := range []metadata.Record{&metadata.EndTransactionRecord{}, &metadata.AbortTransactionRecord{}} {
		t.Run(end.TypeName(), func(t *testing.T) {
			l := NewLoader(Options{})
			commit(t, l, batch(t, 0, mvRec(33)))
			commit(t, l, batch(t, 1, topic("before", tid(9)), &metadata.BeginTransactionRecord{Name: ptr("Bootstrap records")}, feature("group.version", 1)))
			if start, open := l.Transaction(); !open || start != 2 {
				t.Fatalf("transaction %d %v", start, open)
			}
			if l.Image().Provenance().Offset != 0 {
				t.Fatal("a batch holding a Begin was published")
			}
			commit(t, l, batch(t, 4, topic("foo", tid(1))))
			if l.Image().Provenance().Offset != 0 {
				t.Fatal("a batch inside the transaction was published")
			}
			commit(t, l, batch(t, 5, end, &metadata.NoOpRecord{}))
			im := l.Image()
			if im.Provenance().Offset != 6 {
				t.Fatalf("published at %d", im.Provenance().Offset)
			}
			if _, open := l.Transaction(); open {
				t.Fatal("still open")
			}
			_, hasBefore := im.TopicByName("before")
			_, hasFoo := im.TopicByName("foo")
			aborted := end.APIKey() == metadata.AbortTransactionRecordAPIKey
			if !hasBefore || hasFoo == aborted || (im.FeatureLevel("group.version") == 1) == aborted {
				t.Fatalf("after %s: before %v, foo %v, group.version %d", end.TypeName(), hasBefore, hasFoo, im.FeatureLevel("group.version"))
			}
		})
	}
	for name, recs := range map[string][]metadata.Record{
		"Begin inside a transaction": {&metadata.BeginTransactionRecord{}, &metadata.BeginTransactionRecord{}},
		"End outside":                {&metadata.EndTransactionRecord{}},
		"Abort outside":              {&metadata.AbortTransactionRecord{}},
	} {
		t.Run(name, func(t *testing.T) {
			l := NewLoader(Options{})
			err := l.HandleCommit(batch(t, 0, recs...))
			var re *ReplayError
			if !errors.As(err, &re) || re.Offset != int64(len(recs)-1) {
				t.Fatalf("error %v", err)
			}
		})
	}
}

func TestLoaderSnapshots(t *testing.T) {
	l := NewLoader(Options{})
	boot := newSnapshotFile(t, mvRec(33), feature("group.version", 1), &metadata.UserScramCredentialRecord{Name: "admin", Mechanism: 2})
	if err := l.LoadSnapshot(raft.OffsetAndEpoch{}, boot); err != nil {
		t.Fatal(err)
	}
	recs, ok := l.Bootstrap()
	if !ok || len(recs) != 3 || l.Image() != Empty() {
		t.Fatalf("bootstrap: %d records, image %+v", len(recs), l.Image().Provenance())
	}
	commit(t, l, batch(t, 0, mvRec(33), topic("old", tid(8))))
	im := everything(t)
	var recsOf []metadata.Record
	if err := im.Write(func(r metadata.Record, _ int16) error { recsOf = append(recsOf, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := l.LoadSnapshot(raft.OffsetAndEpoch{Offset: 100, Epoch: 4}, newSnapshotFile(t, recsOf...)); err != nil {
		t.Fatal(err)
	}
	got := l.Image()
	if d := Diff(im, got, 5); d != nil || got.Provenance() != (Provenance{99, 4}) {
		t.Fatalf("snapshot at %+v differs: %v", got.Provenance(), d)
	}
	if b, _ := got.Broker(1); b.RegistrationOffset != 99 {
		t.Fatalf("registration offset %d, want the snapshot's last offset", b.RegistrationOffset)
	}
	commit(t, l, batch(t, 100, &metadata.NoOpRecord{}))

	withTx := NewLoader(Options{})
	err := withTx.LoadSnapshot(raft.OffsetAndEpoch{Offset: 5, Epoch: 1}, newSnapshotFile(t, mvRec(33), &metadata.BeginTransactionRecord{}))
	if err == nil || !strings.Contains(err.Error(), "inside a snapshot") {
		t.Fatalf("a transaction marker in a snapshot: %v", err)
	}
	torn := newSnapshotFile(t, mvRec(33))
	torn.b = torn.b[:len(torn.b)-3]
	if err := NewLoader(Options{}).LoadSnapshot(raft.OffsetAndEpoch{Offset: 5, Epoch: 1}, torn); err == nil {
		t.Fatal("a torn snapshot loaded")
	}
}

// TestLoaderClone: a clone (a controller's working state) goes its own way
// and leaves the original as it was, open transaction included.
func TestLoaderClone(t *testing.T) {
	l := NewLoader(Options{})
	commit(t, l, batch(t, 0, mvRec(33), &metadata.BeginTransactionRecord{}, topic("foo", tid(1))))
	w := l.Clone()
	if err := w.Replay(3, 2, []metadata.Record{&metadata.AbortTransactionRecord{}, topic("bar", tid(2))}, []int16{0, 0}); err != nil {
		t.Fatal(err)
	}
	if _, ok := w.Image().TopicByName("foo"); ok {
		t.Fatal("the abort did not revert the clone")
	}
	if _, ok := w.Image().TopicByName("bar"); !ok {
		t.Fatal("the clone did not publish")
	}
	if _, open := l.Transaction(); !open || l.Image().Provenance().Offset != -1 {
		t.Fatal("the clone changed the original")
	}
	commit(t, l, batch(t, 3, &metadata.EndTransactionRecord{}))
	if _, ok := l.Image().TopicByName("foo"); !ok {
		t.Fatal("the original lost its transaction")
	}
}
