package interop

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/internal/metadatatest/synthetic"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// The judges of kraftd's metadata image against Kafka 4.4.0's: the records a
// snapshot of an image holds, compared as sets (Kafka writes in its hash
// maps' order), after normalizing the lists Kafka keeps as maps.

// imageAt is the records of an image as a snapshot holds them (hex values),
// with the image's last contained offset.
type imageAt struct {
	offset  int64
	records []string
}

// kraftdImage is `controller metadata --records --json --show-secrets
// --dir dir --offset offset`: kraftd's image of dir as of offset.
func kraftdImage(t *testing.T, dir string, offset int64) imageAt {
	t.Helper()
	bin := kafkatest.BuildKraftd(t)
	cmd := exec.Command(bin, "metadata", "--records", "--json", "--show-secrets", "--dir", dir, "--offset", strconv.FormatInt(offset, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("controller metadata --dir %s --offset %d: %v\n%s", dir, offset, err, stderr.Bytes())
	}
	var doc struct {
		Offset  int64 `json:"offset"`
		Records []struct {
			Value string `json:"value"`
		} `json:"records"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("controller metadata output: %v", err)
	}
	im := imageAt{offset: doc.Offset}
	for _, r := range doc.Records {
		im.records = append(im.records, r.Value)
	}
	return im
}

// kafkaImages runs testdata/KafkaImageRecords.java: Kafka's MetadataDelta
// replaying dir's segments (after snapshot's records when not empty) and
// MetadataImage.write at each offset.
func kafkaImages(t *testing.T, dir, snapshot string, offsets []int64, jvmFlags ...string) []imageAt {
	t.Helper()
	args := []string{dir}
	if snapshot != "" {
		args = append(args, snapshot)
	}
	args = append(args, "--")
	for _, o := range offsets {
		args = append(args, strconv.FormatInt(o, 10))
	}
	cmd := javaProgram(t, "KafkaImageRecords")(args...)
	if len(jvmFlags) > 0 {
		cmd.Args = append(cmd.Args[:1], append(jvmFlags, cmd.Args[1:]...)...)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ims []imageAt
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	var cur *imageAt
	var lastLine string
	for sc.Scan() {
		line := sc.Text()
		lastLine = line
		switch {
		case strings.HasPrefix(line, "IMAGE "):
			f := strings.Fields(line)
			off, _ := strconv.ParseInt(f[1], 10, 64)
			ims = append(ims, imageAt{offset: off})
			cur = &ims[len(ims)-1]
		case line == "END":
			cur = nil
		case cur != nil:
			cur.records = append(cur.records, line)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("KafkaImageRecords %v: %v\n%s\n%s", args, err, lastLine, stderr.Bytes())
	}
	if len(ims) != len(offsets) {
		t.Fatalf("KafkaImageRecords: %d images for %d offsets", len(ims), len(offsets))
	}
	return ims
}

// snapshotFileRecords reads a snapshot file's data records (hex values).
func snapshotFileRecords(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var values [][]byte
	for len(data) > 0 {
		var h protocol.BatchHeader
		h, values, data, err = protocol.DecodeValues(data, values[:0])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.IsControl() {
			continue
		}
		for _, v := range values {
			out = append(out, hex.EncodeToString(v))
		}
	}
	return out
}

// normalize decodes a record value and sorts the lists Kafka keeps as maps
// (a registration's endpoints and features by name, a quota entity's parts
// by type), so one image's records compare equal whatever map order wrote
// them; it returns the value re-encoded, and Kafka's JSON form for messages.
func normalize(t *testing.T, hexValue string) (string, string) {
	t.Helper()
	v, err := hex.DecodeString(hexValue)
	if err != nil {
		t.Fatal(err)
	}
	rec, version, err := metadata.Decode(v)
	if err != nil {
		t.Fatalf("record %s: %v", hexValue, err)
	}
	switch r := rec.(type) {
	case *metadata.RegisterBrokerRecord:
		slices.SortFunc(r.EndPoints, func(a, b metadata.RegisterBrokerRecordBrokerEndpoint) int { return cmp.Compare(a.Name, b.Name) })
		slices.SortFunc(r.Features, func(a, b metadata.RegisterBrokerRecordBrokerFeature) int { return cmp.Compare(a.Name, b.Name) })
	case *metadata.RegisterControllerRecord:
		slices.SortFunc(r.EndPoints, func(a, b metadata.RegisterControllerRecordControllerEndpoint) int { return cmp.Compare(a.Name, b.Name) })
		slices.SortFunc(r.Features, func(a, b metadata.RegisterControllerRecordControllerFeature) int { return cmp.Compare(a.Name, b.Name) })
	case *metadata.ClientQuotaRecord:
		slices.SortFunc(r.Entity, func(a, b metadata.ClientQuotaRecordEntityData) int { return cmp.Compare(a.EntityType, b.EntityType) })
	}
	out, err := metadata.Append(nil, rec, version)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := metareflect.KafkaJSON(rec, version)
	return hex.EncodeToString(out), fmt.Sprintf("%s v%d %s", rec.TypeName(), version, j)
}

// diffImages returns the records (Kafka's JSON form) only kraftd's and only
// Kafka's image hold, as multisets after normalize.
func diffImages(t *testing.T, kraftd, kafka []string) (onlyKraftd, onlyKafka []string) {
	t.Helper()
	count := map[string]int{}
	text := map[string]string{}
	for _, r := range kraftd {
		n, j := normalize(t, r)
		count[n]++
		text[n] = j
	}
	for _, r := range kafka {
		n, j := normalize(t, r)
		count[n]--
		text[n] = j
	}
	for n, c := range count {
		for ; c > 0; c-- {
			onlyKraftd = append(onlyKraftd, text[n])
		}
		for ; c < 0; c++ {
			onlyKafka = append(onlyKafka, text[n])
		}
	}
	slices.Sort(onlyKraftd)
	slices.Sort(onlyKafka)
	return onlyKraftd, onlyKafka
}

// compareImages fails unless kraftd's and Kafka's records are the same set,
// naming what each side alone holds.
func compareImages(t *testing.T, label string, kraftd, kafka []string) bool {
	t.Helper()
	onlyKraftd, onlyKafka := diffImages(t, kraftd, kafka)
	if len(onlyKraftd)+len(onlyKafka) == 0 {
		return true
	}
	t.Errorf("%s: %s", label, describeDiff(len(kraftd), len(kafka), onlyKraftd, onlyKafka))
	return false
}

func describeDiff(nKraftd, nKafka int, onlyKraftd, onlyKafka []string) string {
	return fmt.Sprintf("the images differ (%d records in kraftd's, %d in Kafka's)\nonly kraftd's:\n  %s\nonly Kafka's:\n  %s",
		nKraftd, nKafka, strings.Join(first(onlyKraftd, 20), "\n  "), strings.Join(first(onlyKafka, 20), "\n  "))
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }

// reencodeControl decodes a control record with protocol's codecs and
// encodes it again; it returns the record's name and its new bytes.
func reencodeControl(typ int16, v []byte) (string, []byte, error) {
	switch typ {
	case protocol.ControlLeaderChange:
		m, err := protocol.DecodeLeaderChange(v)
		if err != nil {
			return "LeaderChange", nil, err
		}
		return "LeaderChange", m.AppendTo(nil), nil
	case protocol.ControlSnapshotHeader:
		var r protocol.SnapshotHeaderRecord
		err := r.ReadFrom(v)
		return "SnapshotHeader", r.AppendTo(nil), err
	case protocol.ControlSnapshotFooter:
		var r protocol.SnapshotFooterRecord
		err := r.ReadFrom(v)
		return "SnapshotFooter", r.AppendTo(nil), err
	case protocol.ControlKRaftVersion:
		var r protocol.KRaftVersionRecord
		err := r.ReadFrom(v)
		return "KRaftVersion", r.AppendTo(nil), err
	case protocol.ControlKRaftVoters:
		var r protocol.VotersRecord
		err := r.ReadFrom(v)
		return "Voters", r.AppendTo(nil), err
	}
	return fmt.Sprintf("control type %d", typ), nil, fmt.Errorf("unknown control record type %d", typ)
}

// reencodeAll checks that every record of every batch in every segment and
// snapshot of a partition dir decodes (metadata records with
// protocol/metadata, raft's control records with protocol's) and encodes
// back to its bytes; it returns how many records it checked.
func reencodeAll(t *testing.T, label, dir string) int {
	t.Helper()
	n := 0
	checkControl := func(where string, b []byte) {
		for len(b) > 0 {
			batch, rest, err := protocol.DecodeBatch(b)
			if err != nil {
				t.Errorf("%s: %s: %v", label, where, err)
				return
			}
			b = rest
			if !batch.Control {
				continue
			}
			for i, r := range batch.Records {
				typ, v, err := protocol.ReadControlRecord(r)
				if err != nil {
					t.Errorf("%s: %s offset %d: %v", label, where, batch.BaseOffset+int64(i), err)
					continue
				}
				name, out, err := reencodeControl(typ, v)
				if err != nil || !bytes.Equal(out, v) {
					t.Errorf("%s: %s offset %d: %s re-encodes to\n%x (%v), read\n%x", label, where, batch.BaseOffset+int64(i), name, out, err, v)
				}
				n++
			}
		}
	}
	check := func(where string, v []byte) {
		rec, version, err := metadata.Decode(v)
		if err != nil {
			t.Errorf("%s: %s: %v", label, where, err)
			return
		}
		out, err := metadata.Append(nil, rec, version)
		if err != nil || !bytes.Equal(out, v) {
			t.Errorf("%s: %s: %s v%d re-encodes to\n%x (%v), read\n%x", label, where, rec.TypeName(), version, out, err, v)
		}
		n++
	}
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	defer l.Close()
	var values [][]byte
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		h, vs, _, err := protocol.DecodeValues(b, values[:0])
		values = vs
		if err != nil {
			return err
		}
		if !h.IsControl() {
			for i, v := range vs {
				check(fmt.Sprintf("offset %d", h.BaseOffset+int64(i)), v)
			}
		} else {
			checkControl("segment batch", b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	for _, id := range l.Snapshots() {
		path := l.SnapshotPath(id)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkControl(filepath.Base(path), data)
		for i, r := range snapshotFileRecords(t, path) {
			v, _ := hex.DecodeString(r)
			check(fmt.Sprintf("%s record %d", filepath.Base(path), i), v)
		}
	}
	return n
}

// writeSyntheticLog writes records as a metadata log partition dir, batches
// of batchSize records, epoch 1; it returns each batch's last offset.
func writeSyntheticLog(t testing.TB, dir string, recs []metadata.Record, batchSize int) []int64 {
	t.Helper()
	l, err := metadatalog.Open(metadatalog.Options{Dir: dir, SegmentMinBytes: 1 << 20, SegmentBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var ends []int64
	var buf []byte
	for len(recs) > 0 {
		n := min(batchSize, len(recs))
		b := protocol.Batch{}
		for _, rec := range recs[:n] {
			_, hi := rec.ValidVersions()
			v, err := metadata.Append(nil, rec, hi)
			if err != nil {
				t.Fatal(err)
			}
			b.Records = append(b.Records, protocol.Record{Value: v})
		}
		buf = protocol.AppendBatch(buf[:0], b)
		last, err := l.AppendAsLeader(buf, 1)
		if err != nil {
			t.Fatal(err)
		}
		ends = append(ends, last)
		recs = recs[n:]
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	return ends
}

// syntheticWorkload is synthetic.Cluster(n) followed by the other
// record types an image keeps: configs, quotas, producer ids, SCRAM, ACLs,
// a fenced and a re-registered broker, a removed topic.
func syntheticWorkload(n int) []metadata.Record {
	recs := synthetic.Cluster(n)
	s := func(v string) *string { return &v }
	user := "alice"
	reg := metadata.NewRegisterBrokerRecord()
	reg.BrokerId, reg.BrokerEpoch, reg.IncarnationId, reg.Rack = 7, 5000, [16]byte{3, 7}, s("rack-b")
	reg.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "h7", Port: 9092}, {Name: "INTERNAL", Host: "h7", Port: 9093, SecurityProtocol: 1}}
	reg.Features = []metadata.RegisterBrokerRecordBrokerFeature{{Name: "metadata.version", MinSupportedVersion: 7, MaxSupportedVersion: 33}, {Name: "group.version", MaxSupportedVersion: 1}}
	reg.LogDirs = [][16]byte{{0x80, 0, 7, 15: 1}}
	return append(recs,
		&metadata.ConfigRecord{ResourceType: 2, ResourceName: "topic-1", Name: "retention.ms", Value: s("60000")},
		&metadata.ConfigRecord{ResourceType: 4, ResourceName: "3", Name: "log.cleaner.threads", Value: s("2")},
		&metadata.ConfigRecord{ResourceType: 4, ResourceName: "", Name: "num.io.threads", Value: s("4")},
		&metadata.ClientQuotaRecord{Entity: []metadata.ClientQuotaRecordEntityData{{EntityType: "user", EntityName: &user}, {EntityType: "client-id"}}, Key: "producer_byte_rate", Value: 1e6},
		&metadata.ProducerIdsRecord{BrokerId: 1, BrokerEpoch: 1, NextProducerId: 2000},
		&metadata.UserScramCredentialRecord{Name: "alice", Mechanism: 1, Salt: []byte("s"), StoredKey: []byte("k"), ServerKey: []byte("v"), Iterations: 4096},
		&metadata.AccessControlEntryRecord{Id: [16]byte{9, 1}, ResourceType: 2, ResourceName: "topic-", PatternType: 4, Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3},
		&metadata.FenceBrokerRecord{Id: 5, Epoch: 5},
		reg,
		&metadata.RemoveTopicRecord{TopicId: [16]byte{0x40, 0, 0, 2, 15: 7}},
	)
}

// TestImageAgainstKafkaSynthetic: for a synthetic log (a cluster of 3000
// partitions, then every other kind of record), kraftd's image as of several
// offsets equals the one Kafka 4.4.0's MetadataDelta builds from the same
// segments, and every record re-encodes to its bytes.
func TestImageAgainstKafkaSynthetic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	ends := writeSyntheticLog(t, dir, syntheticWorkload(3000), 97)
	if n := reencodeAll(t, "synthetic", dir); n == 0 {
		t.Fatal("no records")
	}
	last := ends[len(ends)-1]
	offsets := []int64{ends[0], ends[0] + 5, ends[len(ends)/2], last - 3, last}
	kafka := kafkaImages(t, dir, "", offsets)
	for i, off := range offsets {
		k := kraftdImage(t, dir, off)
		if k.offset != kafka[i].offset {
			t.Errorf("offset %d: kraftd's image is at %d, Kafka's at %d", off, k.offset, kafka[i].offset)
		}
		compareImages(t, fmt.Sprintf("offset %d", off), k.records, kafka[i].records)
	}

	// A snapshot of kraftd's image at a batch end, then the segments after
	// it: Kafka's delta over the snapshot and kraftd's dir agree at the end.
	snapAt := ends[len(ends)/2]
	im := kraftdImage(t, dir, snapAt)
	var b protocol.Batch
	for _, r := range im.records {
		v, _ := hex.DecodeString(r)
		b.Records = append(b.Records, protocol.Record{Value: v})
	}
	snap := filepath.Join(t.TempDir(), metadatalog.SnapshotFileName(raft.OffsetAndEpoch{Offset: snapAt + 1, Epoch: 1}))
	if err := os.WriteFile(snap, protocol.AppendBatch(nil, b), 0o644); err != nil {
		t.Fatal(err)
	}
	fromSnap := kafkaImages(t, dir, snap, []int64{last})
	compareImages(t, "over kraftd's snapshot", kraftdImage(t, dir, last).records, fromSnap[0].records)
}
