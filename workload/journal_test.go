package workload

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
)

// TestJournalRecordsOwnCommittedBatches: only batches of the node's own
// leader epoch are journaled, and only once a tick flushed them.
func TestJournalRecordsOwnCommittedBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	w := New(Config{Throughput: 1000, RecordSize: 32, MaxInFlight: 100, Journal: j}, 1, true, &bytes.Buffer{}, zap.NewNop(), t0)
	d := &fakeDriver{next: 10}
	w.Tick(t0, leaderStatus(3), d)
	w.Tick(t0.Add(5*time.Millisecond), leaderStatus(3), d)
	recs := d.calls[0]
	w.HandleCommit([]raft.CommittedBatch{
		{BaseOffset: 5, LastOffset: 9, Epoch: 2, Records: [][]byte{{1}}}, // an older leader's batch
		{BaseOffset: 10, LastOffset: 10, Epoch: 3, Control: true},
		{BaseOffset: 11, LastOffset: 10 + int64(len(recs)), Epoch: 3, Records: recs},
	})
	if b, _ := os.ReadFile(path); len(b) != 0 {
		t.Fatalf("journal written before its flush: %q", b)
	}
	next := w.Tick(t0.Add(6*time.Millisecond), leaderStatus(3), d)
	if want := t0.Add(5*time.Millisecond + journalFlushEvery); next.After(want) {
		t.Errorf("next wake %v, want by the journal's flush at %v", next.Sub(t0), want.Sub(t0))
	}
	w.Tick(t0.Add(30*time.Millisecond), leaderStatus(3), d)
	f, _ := os.Open(path)
	defer f.Close()
	got, err := ReadJournal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := JournalEntry{Base: 11, Last: 10 + int64(len(recs)), Epoch: 3, CRC: RecordsCRC(recs)}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("journal %v, want [%v]", got, want)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReadJournal(t *testing.T) {
	got, err := ReadJournal(strings.NewReader("0 4 1 0000abcd\n5 5 2 ffffffff\n6 9 2 00"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != (JournalEntry{Base: 5, Last: 5, Epoch: 2, CRC: 0xffffffff}) {
		t.Fatalf("got %v (the unterminated last line must be ignored)", got)
	}
	for _, bad := range []string{"1 2 3\n", "5 4 1 00\n", "a 4 1 00\n", "0 4 -1 00\n", "0 4 1 xyz\n"} {
		if _, err := ReadJournal(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestRecordsCRCSeesBoundaries(t *testing.T) {
	if RecordsCRC([][]byte{{1, 2}, {3}}) == RecordsCRC([][]byte{{1}, {2, 3}}) {
		t.Fatal("moving a byte between records kept the CRC")
	}
}
