package interop

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
)

// metadataTopicID is __cluster_metadata's topic id, Uuid(0,1).
var metadataTopicID = [16]byte{15: 1}

// noOpRecord is a metadata NoOpRecord value as Kafka's controller writes it (frame version 1,
// record type 20, version 0, no tagged fields), copied from a Kafka 4.4.0 segment.
var noOpRecord = []byte{1, 20, 0, 0}

// dumpedBatches runs kafka-dump-log on every segment of a partition dir, in offset order.
func dumpedBatches(t *testing.T, env *kafkatest.Env, dir string) ([]kafkatest.DumpBatch, string) {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no segments in %s (%v)", dir, err)
	}
	sort.Strings(segs) // 20-digit zero-padded base offsets sort numerically
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{ClusterMetadataDecoder: true}, segs...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		t.Fatal(err)
	}
	var all []kafkatest.DumpBatch
	for _, f := range files {
		all = append(all, f.Batches...)
	}
	return all, out
}

// checkBatchAgainstDump compares a batch kraftd decoded with the line kafka-dump-log printed
// for it.
func checkBatchAgainstDump(t *testing.T, i int, raw []byte, d kafkatest.DumpBatch) {
	t.Helper()
	h, err := protocol.CheckBatch(raw)
	if err != nil {
		t.Errorf("batch %d: kraftd rejects it: %v", i, err)
		return
	}
	want := map[string]string{
		"baseOffset":           strconv.FormatInt(h.BaseOffset, 10),
		"lastOffset":           strconv.FormatInt(h.LastOffset(), 10),
		"count":                strconv.Itoa(int(h.RecordCount)),
		"partitionLeaderEpoch": strconv.Itoa(int(h.PartitionLeaderEpoch)),
		"isControl":            strconv.FormatBool(h.IsControl()),
		"size":                 strconv.Itoa(h.Size()),
		"crc":                  strconv.FormatUint(uint64(h.CRC), 10),
		"magic":                "2",
		"isvalid":              "true",
		"producerId":           strconv.FormatInt(h.ProducerID, 10),
	}
	for k, v := range want {
		if d.Fields[k] != v {
			t.Errorf("batch %d: %s: kraftd %s, kafka-dump-log %s (%v)", i, k, v, d.Fields[k], d.Fields)
		}
	}
	b, _, err := protocol.DecodeBatch(raw)
	if err != nil {
		t.Errorf("batch %d: decode: %v", i, err)
		return
	}
	if len(b.Records) != len(d.Records) {
		t.Errorf("batch %d: kraftd decodes %d records, kafka-dump-log prints %d", i, len(b.Records), len(d.Records))
		return
	}
	for j, r := range b.Records {
		dr := d.Records[j]
		if dr.Fields["offset"] != strconv.FormatInt(b.BaseOffset+int64(j), 10) || dr.Fields["valueSize"] != strconv.Itoa(sizeOf(r.Value)) ||
			dr.Fields["keySize"] != strconv.Itoa(sizeOf(r.Key)) {
			t.Errorf("batch %d record %d: kraftd offset %d key %d value %d bytes, kafka-dump-log %v", i, j, b.BaseOffset+int64(j), sizeOf(r.Key), sizeOf(r.Value), dr.Fields)
		}
		if !b.Control {
			continue
		}
		typ, value, err := protocol.ReadControlRecord(r)
		if err != nil {
			t.Errorf("batch %d record %d: control record: %v", i, j, err)
			continue
		}
		name := map[int16]string{protocol.ControlLeaderChange: "LeaderChange: ", protocol.ControlSnapshotHeader: "SnapshotHeader ",
			protocol.ControlSnapshotFooter: "SnapshotFooter ", protocol.ControlKRaftVersion: "KRaftVersion ", protocol.ControlKRaftVoters: "KRaftVoters "}[typ]
		if name == "" || !strings.HasPrefix(dr.Rest, name) {
			t.Errorf("batch %d record %d: kraftd reads control type %d, kafka-dump-log prints %q", i, j, typ, dr.Rest)
		}
		if typ == protocol.ControlLeaderChange {
			lc, err := protocol.DecodeLeaderChange(value)
			if err != nil {
				t.Errorf("batch %d: LeaderChange: %v", i, err)
			} else if !strings.Contains(dr.Rest, fmt.Sprintf(`"leaderId":%d`, lc.LeaderID)) {
				t.Errorf("batch %d: kraftd reads leader %d, kafka-dump-log prints %s", i, lc.LeaderID, dr.Rest)
			}
		}
	}
}

func sizeOf(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// copyDir copies the regular files of src into a fresh dir (so kraftd's recovery works on
// its own copy and Kafka's files stay as Kafka left them).
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// readKafkaLogWithMetadatalog opens (and recovers) a copy of a partition dir a Kafka
// controller wrote, reads every batch through raft.Log and compares each with what
// kafka-dump-log prints for Kafka's own files.
func readKafkaLogWithMetadatalog(t *testing.T, env *kafkatest.Env, partitionDir string) {
	t.Helper()
	dumped, out := dumpedBatches(t, env, partitionDir)
	if len(dumped) < 2 {
		t.Fatalf("Kafka wrote fewer than 2 batches:\n%s", out)
	}
	l, err := metadatalog.Open(metadatalog.Options{Dir: copyDir(t, partitionDir)})
	if err != nil {
		t.Fatalf("metadatalog cannot open Kafka's log: %v", err)
	}
	defer l.Close()
	var log raft.Log = l
	last := dumped[len(dumped)-1]
	lastOff, _ := last.Int("lastOffset")
	lastEpoch, _ := last.Int("partitionLeaderEpoch")
	if end := log.EndOffset(); end.Offset != lastOff+1 || int64(end.Epoch) != lastEpoch {
		t.Errorf("metadatalog end offset %+v, Kafka's log ends at offset %d epoch %d", end, lastOff+1, lastEpoch)
	}
	if log.StartOffset() != 0 {
		t.Errorf("metadatalog start offset %d, want 0", log.StartOffset())
	}
	if oe, ok := log.EndOffsetForEpoch(int32(lastEpoch)); !ok || oe.Offset != lastOff+1 || int64(oe.Epoch) != lastEpoch {
		t.Errorf("EndOffsetForEpoch(%d) = %+v %v, want offset %d", lastEpoch, oe, ok, lastOff+1)
	}
	i := 0
	for off := log.StartOffset(); off < log.EndOffset().Offset; {
		data, err := log.Read(off, 64<<10)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if len(data) == 0 {
			t.Fatalf("empty read at %d before the end offset %d", off, log.EndOffset().Offset)
		}
		for len(data) > 0 {
			h, err := protocol.ParseBatchHeader(data)
			if err != nil || h.Size() > len(data) {
				t.Fatalf("read at %d returned a partial batch: %v", off, err)
			}
			if i >= len(dumped) {
				t.Fatalf("metadatalog returns more batches than kafka-dump-log prints (%d)", len(dumped))
			}
			checkBatchAgainstDump(t, i, data[:h.Size()], dumped[i])
			i++
			off = h.NextOffset()
			data = data[h.Size():]
		}
	}
	if i != len(dumped) {
		t.Errorf("metadatalog read %d batches, kafka-dump-log prints %d", i, len(dumped))
	}
	t.Logf("metadatalog read %d batches (offsets 0-%d, epoch %d) of Kafka's log intact", i, lastOff, lastEpoch)
}

// TestKafkaCrashedLogReadByMetadatalog: a real Kafka controller elects itself, writes its
// bootstrap and NoOp records, and is killed (SIGKILL: no clean shutdown, index files left
// preallocated). metadatalog opens, recovers and reads the log with every batch intact.
func TestKafkaCrashedLogReadByMetadatalog(t *testing.T) {
	env := kafkatest.Require(t)
	ctrl := env.StartController(t, kafkatest.ControllerConfig{NodeID: 1})
	if err := ctrl.WaitLog("Completed transition to Leader", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.WaitLog("Replayed a FeatureLevelRecord", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	waitHighWatermarkGrows(t, ctrl.Addr) // a few NoOpRecords (metadata.max.idle.interval.ms = 500)
	ctrl.Kill()
	readKafkaLogWithMetadatalog(t, env, ctrl.PartitionDir)

	// Kafka's format wrote the bootstrap snapshot 0-0; metadatalog lists it.
	l, err := metadatalog.Open(metadatalog.Options{Dir: copyDir(t, ctrl.PartitionDir)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if id, ok := l.LatestSnapshot(); !ok || id != (raft.OffsetAndEpoch{}) {
		t.Errorf("LatestSnapshot = %+v %v, want Kafka's bootstrap snapshot 0-0", id, ok)
	}
}

// TestMetadatalogFilesReadByKafkaDump: kafka-dump-log reads a segment and a snapshot that
// metadatalog wrote and prints the batches, offsets, epochs and control records kraftd wrote.
func TestMetadatalogFilesReadByKafkaDump(t *testing.T) {
	env := kafkatest.Require(t)
	dir := topics.PartitionDir(t.TempDir(), "__cluster_metadata")
	l, err := metadatalog.Open(metadatalog.Options{Dir: dir, TopicID: metadataTopicID})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ts := time.Now().UnixMilli()
	lc := protocol.NewLeaderChange(1, []int32{1, 2, 3}, []int32{1, 3})
	var written [][]byte
	appendBatch := func(b []byte) {
		t.Helper()
		if _, err := l.Append(b); err != nil {
			t.Fatal(err)
		}
		written = append(written, b)
	}
	appendBatch(protocol.AppendControlBatch(nil, 0, 1, ts, protocol.ControlLeaderChange, lc.AppendTo(nil)))
	appendBatch(protocol.AppendBatch(nil, protocol.Batch{BaseOffset: 1, PartitionLeaderEpoch: 1, BaseTimestamp: ts, MaxTimestamp: ts,
		Records: []protocol.Record{{Value: noOpRecord}, {Value: noOpRecord}, {Value: noOpRecord}}}))
	lc2 := protocol.NewLeaderChange(3, []int32{1, 2, 3}, []int32{2, 3})
	appendBatch(protocol.AppendControlBatch(nil, 4, 2, ts+1, protocol.ControlLeaderChange, lc2.AppendTo(nil)))
	appendBatch(protocol.AppendBatch(nil, protocol.Batch{BaseOffset: 5, PartitionLeaderEpoch: 2, BaseTimestamp: ts + 2, MaxTimestamp: ts + 2,
		Records: []protocol.Record{{Value: noOpRecord}}}))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}

	// A snapshot at offset 5, epoch 2: header, the state (NoOps stand in for it), footer.
	snapID := raft.OffsetAndEpoch{Offset: 5, Epoch: 2}
	w, err := l.CreateSnapshot(snapID)
	if err != nil {
		t.Fatal(err)
	}
	var snap []byte
	snap = protocol.AppendControlBatch(snap, 0, 2, ts, protocol.ControlSnapshotHeader, protocol.SnapshotHeaderRecord{LastContainedLogTimestamp: ts}.AppendTo(nil))
	snap = protocol.AppendBatch(snap, protocol.Batch{BaseOffset: 1, PartitionLeaderEpoch: 2, BaseTimestamp: ts, MaxTimestamp: ts,
		Records: []protocol.Record{{Value: noOpRecord}, {Value: noOpRecord}}})
	snap = protocol.AppendControlBatch(snap, 3, 2, ts, protocol.ControlSnapshotFooter, protocol.SnapshotFooterRecord{}.AppendTo(nil))
	if _, err := w.Write(snap); err != nil {
		t.Fatal(err)
	}
	if err := w.Freeze(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	dumped, out := dumpedBatches(t, env, dir)
	if len(dumped) != len(written) {
		t.Fatalf("kafka-dump-log prints %d batches, metadatalog wrote %d:\n%s", len(dumped), len(written), out)
	}
	for i, b := range written {
		checkBatchAgainstDump(t, i, b, dumped[i])
	}
	for _, want := range []string{`LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2},{"voterId":3}],"grantingVoters":[{"voterId":1},{"voterId":3}]}`,
		`payload: {"type":"NO_OP_RECORD","version":0,"data":{}}`} {
		if !strings.Contains(out, want) {
			t.Errorf("kafka-dump-log output lacks %s:\n%s", want, out)
		}
	}

	snapFile := filepath.Join(dir, fmt.Sprintf("%020d-%010d.checkpoint", snapID.Offset, snapID.Epoch))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sout, err := env.DumpLog(ctx, kafkatest.DumpOptions{ClusterMetadataDecoder: true}, snapFile)
	if err != nil {
		t.Fatalf("kafka-dump-log rejects kraftd's snapshot: %v", err)
	}
	files, err := kafkatest.ParseDumpLog(sout)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || len(files[0].Header) == 0 || files[0].Header[0] != "Snapshot end offset: 5, epoch: 2" {
		t.Fatalf("kafka-dump-log does not see snapshot 5-2:\n%s", sout)
	}
	var snapBatches [][]byte
	for rest := snap; len(rest) > 0; {
		h, err := protocol.ParseBatchHeader(rest)
		if err != nil {
			t.Fatal(err)
		}
		snapBatches = append(snapBatches, rest[:h.Size()])
		rest = rest[h.Size():]
	}
	if len(files[0].Batches) != len(snapBatches) {
		t.Fatalf("kafka-dump-log prints %d snapshot batches, kraftd wrote %d:\n%s", len(files[0].Batches), len(snapBatches), sout)
	}
	for i, b := range snapBatches {
		checkBatchAgainstDump(t, i, b, files[0].Batches[i])
	}
	if !strings.Contains(sout, fmt.Sprintf(`SnapshotHeader {"version":0,"lastContainedLogTimestamp":%d}`, ts)) || !strings.Contains(sout, `SnapshotFooter {"version":0}`) {
		t.Errorf("snapshot header/footer not printed as written:\n%s", sout)
	}
}
