package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/topics"
)

func strp(s string) *string { return &s }

// sampleBatches is a small cluster's log, one batch a slice: features,
// brokers, a controller, topics, configs, quotas, producer ids, SCRAM, ACLs,
// then changes.
func sampleBatches() [][]metadata.Record {
	reg := func(id int32, rack *string) *metadata.RegisterBrokerRecord {
		r := metadata.NewRegisterBrokerRecord()
		r.BrokerId, r.BrokerEpoch, r.IncarnationId, r.Rack = id, 10+int64(id), [16]byte{1, byte(id)}, rack
		r.EndPoints = []metadata.RegisterBrokerRecordBrokerEndpoint{{Name: "PLAINTEXT", Host: "localhost", Port: uint16(9090 + id)}}
		r.Features = []metadata.RegisterBrokerRecordBrokerFeature{{Name: "metadata.version", MinSupportedVersion: 7, MaxSupportedVersion: 33}}
		r.LogDirs = [][16]byte{{0x80, byte(id), 15: 1}}
		return r
	}
	unfence := func(id int32) *metadata.BrokerRegistrationChangeRecord {
		r := metadata.NewBrokerRegistrationChangeRecord()
		r.BrokerId, r.BrokerEpoch, r.Fenced = id, 10+int64(id), -1
		return r
	}
	part := func(tid [16]byte, pid int32, reps ...int32) *metadata.PartitionRecord {
		r := metadata.NewPartitionRecord()
		r.TopicId, r.PartitionId, r.Replicas, r.Isr, r.Leader = tid, pid, reps, slices.Clone(reps), reps[0]
		r.RemovingReplicas, r.AddingReplicas = []int32{}, []int32{}
		r.LeaderEpoch, r.PartitionEpoch = 0, 0
		for _, b := range reps {
			r.Directories = append(r.Directories, [16]byte{0x80, byte(b), 15: 1})
		}
		return r
	}
	ctl := metadata.NewRegisterControllerRecord()
	ctl.ControllerId, ctl.IncarnationId = 3000, [16]byte{2, 1}
	ctl.EndPoints = []metadata.RegisterControllerRecordControllerEndpoint{{Name: "CONTROLLER", Host: "localhost", Port: 9093}}
	t1, t2 := [16]byte{0x40, 1, 15: 1}, [16]byte{0x40, 2, 15: 2}
	change := metadata.NewPartitionChangeRecord()
	change.TopicId, change.PartitionId, change.Isr = t1, 0, []int32{1, 2}
	user, def := "alice", (*string)(nil)
	return [][]metadata.Record{
		{&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33},
			&metadata.FeatureLevelRecord{Name: "eligible.leader.replicas.version", FeatureLevel: 1},
			&metadata.FeatureLevelRecord{Name: "group.version", FeatureLevel: 1}},
		{reg(1, strp("r1")), reg(2, nil), reg(3, strp("r3")), ctl},
		{unfence(1), unfence(2), unfence(3)},
		{&metadata.TopicRecord{Name: "orders", TopicId: t1}, part(t1, 0, 1, 2, 3), part(t1, 1, 2, 3, 1)},
		{&metadata.ConfigRecord{ResourceType: 2, ResourceName: "orders", Name: "retention.ms", Value: strp("1000")},
			&metadata.ConfigRecord{ResourceType: 4, ResourceName: "", Name: "log.cleaner.threads", Value: strp("2")},
			&metadata.ProducerIdsRecord{BrokerId: 1, BrokerEpoch: 11, NextProducerId: 1000}},
		{&metadata.ClientQuotaRecord{Entity: []metadata.ClientQuotaRecordEntityData{{EntityType: "user", EntityName: &user}, {EntityType: "client-id", EntityName: def}}, Key: "producer_byte_rate", Value: 1024},
			&metadata.UserScramCredentialRecord{Name: "alice", Mechanism: 1, Salt: []byte("salty"), StoredKey: []byte("stored"), ServerKey: []byte("server"), Iterations: 4096},
			&metadata.AccessControlEntryRecord{Id: [16]byte{9, 9}, ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}},
		// offset 19 on: changes after the snapshot the tests take at 19
		{&metadata.TopicRecord{Name: "events", TopicId: t2}, part(t2, 0, 3, 1, 2), change},
		{&metadata.RemoveTopicRecord{TopicId: t1}},
	}
}

func encodeBatch(t *testing.T, recs []metadata.Record) []byte {
	t.Helper()
	b := protocol.Batch{}
	for _, rec := range recs {
		_, hi := rec.ValidVersions()
		v, err := metadata.Append(nil, rec, hi)
		if err != nil {
			t.Fatal(err)
		}
		b.Records = append(b.Records, protocol.Record{Value: v})
	}
	return protocol.AppendBatch(nil, b)
}

// writeSampleLog writes sampleBatches as a metadata.log.dir and, when snapAt
// > 0, a snapshot of the image at snapAt-1 (Image.Write's records); it
// returns the log dir.
func writeSampleLog(t *testing.T, snapAt int64) string {
	t.Helper()
	logDir := t.TempDir()
	l, err := metadatalog.Open(metadatalog.Options{Dir: topics.PartitionDir(logDir, topics.ClusterMetadata)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ld := image.NewLoader(image.Options{})
	var snapImage *image.Image
	for _, recs := range sampleBatches() {
		base := l.EndOffset().Offset
		if _, err := l.AppendAsLeader(encodeBatch(t, recs), 1); err != nil {
			t.Fatal(err)
		}
		vs := make([]int16, len(recs))
		for i, r := range recs {
			_, vs[i] = r.ValidVersions()
		}
		if err := ld.Replay(base, 1, recs, vs); err != nil {
			t.Fatal(err)
		}
		if l.EndOffset().Offset == snapAt {
			snapImage = ld.Image()
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if snapAt > 0 {
		if snapImage == nil {
			t.Fatalf("no batch ends at %d", snapAt)
		}
		var b protocol.Batch
		snapImage.Write(func(rec metadata.Record, v int16) error {
			val, err := metadata.Append(nil, rec, v)
			b.Records = append(b.Records, protocol.Record{Value: val})
			return err
		})
		w, err := l.CreateSnapshot(raft.OffsetAndEpoch{Offset: snapAt, Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(protocol.AppendBatch(nil, b)); err != nil {
			t.Fatal(err)
		}
		if err := w.Freeze(); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	return logDir
}

func metadataJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"metadata"}, append(args, "--json")...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

func TestMetadataViews(t *testing.T) {
	dir := writeSampleLog(t, 0)
	var sum struct {
		Offset  int64       `json:"offset"`
		Summary jsonSummary `json:"summary"`
	}
	metadataJSON(t, &sum, "summary", "--dir", dir)
	want := jsonSummary{MetadataVersion: "4.4-IV2", Topics: 1, Partitions: 1, Brokers: 3, ActiveBrokers: 3, Controllers: 1,
		Configs: 1, ClientQuotas: 1, ACLs: 1, ScramCredentials: 1, NextProducerID: 1000}
	if sum.Offset != 22 || sum.Summary != want {
		t.Errorf("summary at %d: %+v\nwant %+v", sum.Offset, sum.Summary, want)
	}

	// As of offset 21: the batch removing "orders" (offset 22) is not in.
	var parts struct {
		Offset     int64           `json:"offset"`
		Partitions []jsonPartition `json:"partitions"`
	}
	metadataJSON(t, &parts, "partitions", "--dir", dir, "--offset", "21")
	if parts.Offset != 21 || len(parts.Partitions) != 3 {
		t.Fatalf("partitions at %d: %+v", parts.Offset, parts.Partitions)
	}
	p := parts.Partitions[1] // events-0, then orders-0 and -1 by name
	if p.Topic != "orders" || p.Partition != 0 || !slices.Equal(p.ISR, []int32{1, 2}) || p.PartitionEpoch != 1 || p.LeaderEpoch != 0 ||
		!slices.Equal(p.Replicas, []int32{1, 2, 3}) || len(p.Directories) != 3 || len(p.ELR) != 0 {
		t.Errorf("orders-0: %+v", p)
	}
	metadataJSON(t, &parts, "partitions", "--dir", dir, "--offset", "21", "--topic", "events")
	if len(parts.Partitions) != 1 || parts.Partitions[0].Topic != "events" {
		t.Errorf("--topic events: %+v", parts.Partitions)
	}

	var brokers struct {
		Brokers []jsonBroker `json:"brokers"`
	}
	metadataJSON(t, &brokers, "brokers", "--dir", topics.PartitionDir(dir, topics.ClusterMetadata))
	if len(brokers.Brokers) != 3 {
		t.Fatalf("brokers: %+v", brokers)
	}
	b := brokers.Brokers[0]
	if b.ID != 1 || b.Epoch != 11 || b.Fenced || *b.Rack != "r1" || brokers.Brokers[1].Rack != nil ||
		len(b.Endpoints) != 1 || b.Endpoints[0] != (jsonEndpoint{"PLAINTEXT", "localhost", 9091, "PLAINTEXT"}) {
		t.Errorf("broker 1: %+v", b)
	}

	var feats struct {
		Features jsonFeatures `json:"features"`
	}
	metadataJSON(t, &feats, "features", "--dir", dir)
	if feats.Features.MetadataVersion != "4.4-IV2" || feats.Features.MetadataVersionLevel != 33 ||
		!slices.Equal(feats.Features.Finalized, []jsonFeature{{"eligible.leader.replicas.version", 1}, {"group.version", 1}}) {
		t.Errorf("features: %+v", feats.Features)
	}

	var acls struct {
		ACLs []jsonACL `json:"acls"`
	}
	metadataJSON(t, &acls, "acls", "--dir", dir)
	if len(acls.ACLs) != 1 || acls.ACLs[0].Operation != "READ" || acls.ACLs[0].PatternType != "LITERAL" ||
		acls.ACLs[0].ResourceType != "TOPIC" || acls.ACLs[0].PermissionType != "ALLOW" {
		t.Errorf("acls: %+v", acls.ACLs)
	}
	var quotas struct {
		Quotas []jsonQuota `json:"quotas"`
	}
	metadataJSON(t, &quotas, "quotas", "--dir", dir)
	if len(quotas.Quotas) != 1 || quotas.Quotas[0].Value != 1024 || len(quotas.Quotas[0].Entity) != 2 {
		t.Errorf("quotas: %+v", quotas.Quotas)
	}
	var configs struct {
		Configs []jsonConfig `json:"configs"`
	}
	metadataJSON(t, &configs, "configs", "--dir", dir, "--offset", "18")
	if len(configs.Configs) != 2 || configs.Configs[0] != (jsonConfig{"TOPIC", "orders", "retention.ms", "1000"}) ||
		configs.Configs[1] != (jsonConfig{"BROKER", "", "log.cleaner.threads", "2"}) {
		t.Errorf("configs: %+v", configs.Configs)
	}

	// SCRAM: names and mechanisms, never salts or keys, in any output.
	for _, args := range [][]string{{"scram", "--dir", dir}, {"scram", "--dir", dir, "--json"}, {"--records", "--dir", dir}, {"records", "--dir", dir, "--json"}} {
		code, out, errs := runCmd(t, append([]string{"metadata"}, args...)...)
		if code != 0 || strings.Contains(out, "salty") || strings.Contains(out, hex.EncodeToString([]byte("salty"))) ||
			strings.Contains(out, "c2FsdHk") || !strings.Contains(out, "alice") {
			t.Errorf("%v: exit %d %s\n%s", args, code, errs, out)
		}
	}
	code, out, errs := runCmd(t, "metadata", "summary", "--dir", dir, "--memory")
	if code != 0 || !strings.Contains(errs, "loaded offset=22 partitions=1 brokers=3 load_seconds=") || !strings.Contains(errs, "heap_after_gc_bytes=") {
		t.Errorf("--memory: %q", errs)
	}
	code, out, _ = runCmd(t, "metadata", "scram", "--dir", dir)
	if code != 0 || !strings.Contains(out, "alice  SCRAM-SHA-256") {
		t.Errorf("scram text:\n%s", out)
	}
	code, out, _ = runCmd(t, "metadata", "brokers", "--dir", dir)
	if code != 0 || !strings.HasPrefix(out, "# image at offset 22, epoch 1\nID  EPOCH") || !strings.Contains(out, "PLAINTEXT://localhost:9092(PLAINTEXT)") || !strings.Contains(out, `"r1"`) {
		t.Errorf("brokers text:\n%s", out)
	}
}

type recordsOut struct {
	Offset  int64 `json:"offset"`
	Epoch   int32 `json:"epoch"`
	Records []struct {
		Type    string          `json:"type"`
		APIKey  int16           `json:"apiKey"`
		Version int16           `json:"version"`
		Value   string          `json:"value"`
		Data    json.RawMessage `json:"data"`
	} `json:"records"`
}

// A dir read through its snapshot and one read from its segments alone give
// the same image, equal to the snapshot file's own.
func TestMetadataSnapshotAndOffsets(t *testing.T) {
	withSnap := writeSampleLog(t, 19)
	plain := writeSampleLog(t, 0)
	snapFile := filepath.Join(topics.PartitionDir(withSnap, topics.ClusterMetadata), metadatalog.SnapshotFileName(raft.OffsetAndEpoch{Offset: 19, Epoch: 1}))
	var a, b, c recordsOut
	metadataJSON(t, &a, "--records", "--dir", withSnap, "--offset", "18", "--show-secrets")
	metadataJSON(t, &b, "--records", "--dir", plain, "--offset", "18", "--show-secrets")
	metadataJSON(t, &c, "--records", "--snapshot", snapFile, "--show-secrets")
	if a.Offset != 18 || b.Offset != 18 || c.Offset != 18 || len(a.Records) == 0 {
		t.Fatalf("offsets %d %d %d, %d records", a.Offset, b.Offset, c.Offset, len(a.Records))
	}
	for _, o := range []recordsOut{b, c} {
		if len(o.Records) != len(a.Records) {
			t.Fatalf("%d records, want %d", len(o.Records), len(a.Records))
		}
		for i := range a.Records {
			if o.Records[i].Value != a.Records[i].Value {
				t.Errorf("record %d: %s, want %s", i, o.Records[i].Value, a.Records[i].Value)
			}
		}
	}
	for _, r := range a.Records {
		v, _ := hex.DecodeString(r.Value)
		rec, ver, err := metadata.Decode(v)
		if err != nil || rec.TypeName() != r.Type || ver != r.Version || rec.APIKey() != r.APIKey || !json.Valid(r.Data) {
			t.Errorf("%+v: %v", r, err)
		}
	}
	// Past the snapshot, the dir with a snapshot replays its segments on.
	metadataJSON(t, &a, "--records", "--dir", withSnap)
	metadataJSON(t, &b, "--records", "--dir", plain)
	if a.Offset != 22 || len(a.Records) != len(b.Records) {
		t.Errorf("at the end: offset %d, %d and %d records", a.Offset, len(a.Records), len(b.Records))
	}
	// Offset 1 is inside the first batch (0-2): the image before any batch.
	var sum struct {
		Offset  int64       `json:"offset"`
		Summary jsonSummary `json:"summary"`
	}
	metadataJSON(t, &sum, "summary", "--dir", plain, "--offset", "1")
	if sum.Offset != -1 || sum.Summary.MetadataVersion != "" {
		t.Errorf("offset 1: %+v", sum)
	}
}

func TestMetadataBadInput(t *testing.T) {
	dir := writeSampleLog(t, 19)
	pd := topics.PartitionDir(dir, topics.ClusterMetadata)
	snap := filepath.Join(pd, metadatalog.SnapshotFileName(raft.OffsetAndEpoch{Offset: 19, Epoch: 1}))

	// A record replay refuses: a partition of a topic that does not exist.
	bad := t.TempDir()
	l, err := metadatalog.Open(metadatalog.Options{Dir: bad})
	if err != nil {
		t.Fatal(err)
	}
	p := metadata.NewPartitionRecord()
	p.TopicId, p.Replicas, p.Isr = [16]byte{7}, []int32{1}, []int32{1}
	for _, recs := range [][]metadata.Record{{&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 33}}, {p}} {
		if _, err := l.AppendAsLeader(encodeBatch(t, recs), 1); err != nil {
			t.Fatal(err)
		}
	}
	l.Flush()
	l.Close()

	// A snapshot whose record does not decode (the api key byte replaced
	// by an unknown type; the batch CRC recomputed).
	corrupt := filepath.Join(t.TempDir(), "00000000000000000005-0000000001.checkpoint")
	batch := protocol.AppendBatch(nil, protocol.Batch{Records: []protocol.Record{{Value: []byte{1, 99, 0}}}})
	os.WriteFile(corrupt, batch, 0o644)
	torn := filepath.Join(t.TempDir(), "00000000000000000005-0000000001.checkpoint")
	data, _ := os.ReadFile(snap)
	os.WriteFile(torn, data[:len(data)-3], 0o644)

	// A segment with a flipped byte in its second batch, valid ones after it.
	flipped := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	os.MkdirAll(flipped, 0o755)
	seg, _ := os.ReadFile(filepath.Join(pd, "00000000000000000000.log"))
	h, _ := protocol.ParseBatchHeader(seg)
	seg[h.Size()+70] ^= 0xff
	os.WriteFile(filepath.Join(flipped, "00000000000000000000.log"), seg, 0o644)

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"summary", "--dir", flipped}, []string{filepath.Join(flipped, "00000000000000000000.log"), "position " + strconv.Itoa(h.Size())}},
		{[]string{"summary", "--dir", bad}, []string{filepath.Join(bad, "00000000000000000000.log"), "batch at offset 1", "offset 1", "PartitionRecord"}},
		{[]string{"summary", "--snapshot", corrupt}, []string{corrupt, "record type 99"}},
		{[]string{"summary", "--snapshot", torn}, []string{torn, "runs past the end"}},
		{[]string{"summary", "--snapshot", filepath.Join(dir, "nope.checkpoint")}, []string{"nope.checkpoint", "<offset>-<epoch>.checkpoint"}},
		{[]string{"summary", "--snapshot", snap, "--offset", "3"}, []string{"--offset goes with --dir"}},
		{[]string{"summary"}, []string{"--dir DIR or --snapshot FILE is required"}},
		{[]string{"nonsense", "--dir", dir}, []string{`unknown view "nonsense"`}},
		{[]string{"brokers", "--dir", dir, "--topic", "x"}, []string{"--topic goes with the partitions view"}},
		{[]string{"partitions", "--dir", dir, "--topic", "nope"}, []string{`no topic "nope"`}},
		{[]string{"summary", "--dir", filepath.Join(dir, "missing")}, []string{"missing"}},
	} {
		code, out, errs := runCmd(t, append([]string{"metadata"}, tc.args...)...)
		if code != 1 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: %q does not say %q", tc.args, errs, w)
			}
		}
	}
	if code, _, errs := runCmd(t, "metadata"); code != 2 || !strings.Contains(errs, "partitions") {
		t.Errorf("no view: exit %d %q", code, errs)
	}
}
