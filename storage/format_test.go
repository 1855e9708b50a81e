package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/uuid"
)

const kafkaMetaProperties = `#
#Fri Oct 25 10:00:00 UTC 2024
node.id=1
directory.id=J8aAPcfLQt2bqs1JT_rMgQ
version=1
cluster.id=MkU3OEVBNTcwNTJENDM2Qg
`

func TestParseKafkaMetaProperties(t *testing.T) {
	mp, err := ParseMetaProperties("x", []byte(kafkaMetaProperties))
	if err != nil {
		t.Fatal(err)
	}
	want := MetaProperties{Version: 1, ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", NodeID: 1, DirectoryID: mustParse(t, "J8aAPcfLQt2bqs1JT_rMgQ")}
	if mp != want {
		t.Fatalf("got %+v, want %+v", mp, want)
	}
	// Java Properties syntax variants: ':' and whitespace separators, CRLF,
	// '!' comments, continuation lines, escapes.
	text := "! comment\r\nversion : 1\r\nnode.id   7\r\ncluster.id=Mk\\\n    U3OEVBNTcwNTJENDM2Qg\r\n"
	mp, err = ParseMetaProperties("x", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if mp.NodeID != 7 || mp.ClusterID != "MkU3OEVBNTcwNTJENDM2Qg" || mp.Version != 1 || !mp.DirectoryID.IsZero() {
		t.Fatalf("variants: %+v", mp)
	}
	// Version 0 reads broker.id.
	mp, err = ParseMetaProperties("x", []byte("broker.id=3\ncluster.id=abc\n"))
	if err != nil || mp.Version != 0 || mp.NodeID != 3 {
		t.Fatalf("v0: %+v %v", mp, err)
	}
}

func TestParseMetaPropertiesErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"version=1\ncluster.id=abc\n", "node.id was not found"},
		{"version=1\nnode.id=1\n", "cluster.id was not found"},
		{"version=2\nnode.id=1\ncluster.id=a\n", "invalid meta.properties version"},
		{"version=x\n", "invalid meta.properties version"},
		{"version=1\nnode.id=99999999999\ncluster.id=a\n", "not an int32"},
		{"version=1\nnode.id=1\ncluster.id=a\ndirectory.id=zz\n", "directory.id"},
	} {
		_, err := ParseMetaProperties("/d/meta.properties", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/d/meta.properties") {
			t.Errorf("%q: error %v, want %q and the file name", tc.text, err, tc.want)
		}
	}
}

func TestParseClusterID(t *testing.T) {
	if _, err := ParseClusterID("AAAAAAAAAAAAAAAAAAAAAA"); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("zero cluster id: %v", err)
	}
	if _, err := ParseClusterID("not-an-id"); err == nil || !strings.Contains(err.Error(), "cluster id must be 22 base64url characters") {
		t.Errorf("bad cluster id: %v", err)
	}
}

func TestMetaPropertiesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, mp := range []MetaProperties{
		{Version: 1, ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", NodeID: 1, DirectoryID: uuid.Random()},
		{Version: 1, ClusterID: "weird id=with:chars #!", NodeID: 0},
		{Version: 0, ClusterID: "c", NodeID: 5},
		{Version: 0, NodeID: -1},
	} {
		if err := WriteMetaProperties(dir, mp); err != nil {
			t.Fatal(err)
		}
		got, err := ReadMetaProperties(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got != mp {
			t.Fatalf("round trip: got %+v, want %+v", got, mp)
		}
		if _, err := os.Stat(Path(dir) + ".tmp"); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("temp file left behind: %v", err)
		}
	}
	data, _ := os.ReadFile(Path(dir))
	if !bytes.HasPrefix(data, []byte("#\n#")) {
		t.Fatalf("missing Kafka's comment lines: %q", data)
	}
	if err := WriteMetaProperties(dir, MetaProperties{Version: 1, NodeID: 1}); err == nil {
		t.Fatal("v1 without cluster.id must be refused")
	}
	if _, err := ReadMetaProperties(t.TempDir()); !errors.Is(err, ErrNotFormatted) {
		t.Fatalf("missing file: %v", err)
	}
}

func mustParse(t *testing.T, s string) uuid.UUID {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

const testClusterID = "MkU3OEVBNTcwNTJENDM2Qg"

func TestFormat(t *testing.T) {
	root := t.TempDir()
	meta, data := filepath.Join(root, "meta"), filepath.Join(root, "data")
	now := time.UnixMilli(1700000000000)
	var out bytes.Buffer
	// 3.9-IV0 turns no feature on by default, so the records are exactly
	// metadata.version and the one requested (kraft.version 0 and a zero
	// level write none).
	opts := FormatOptions{Dirs: []string{data}, MetadataDir: meta, ClusterID: testClusterID, NodeID: 2,
		MetadataVersion: features.MetadataVersion{Name: "3.9-IV0", Level: 21},
		Features:        map[string]int16{"group.version": 1, "kraft.version": 0, "share.version": 0}, Out: &out, Now: func() time.Time { return now }}
	if err := Format(opts); err != nil {
		t.Fatal(err)
	}
	wantOut := "Bootstrap metadata: BootstrapMetadata(records=[ApiMessageAndVersion(FeatureLevelRecord(name='metadata.version', featureLevel=21) at version 0), " +
		"ApiMessageAndVersion(FeatureLevelRecord(name='group.version', featureLevel=1) at version 0)], metadataVersionLevel=21, source=format command)\n" +
		"Formatting data directory " + data + " with metadata.version 3.9-IV0.\n" +
		"Formatting metadata directory " + meta + " with metadata.version 3.9-IV0.\n"
	if dirsInKafkaOrder([]string{data, meta})[0] == meta {
		wantOut = wantOut[:strings.Index(wantOut, "Formatting")] +
			"Formatting metadata directory " + meta + " with metadata.version 3.9-IV0.\n" +
			"Formatting data directory " + data + " with metadata.version 3.9-IV0.\n"
	}
	if out.String() != wantOut {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), wantOut)
	}
	n, err := Load([]string{data}, meta, 2)
	if err != nil {
		t.Fatal(err)
	}
	if n.ClusterID != testClusterID || n.DirectoryID.IsZero() || n.DirectoryID != n.Props[meta].DirectoryID {
		t.Fatalf("Load: %+v", n)
	}
	if n.Props[meta].DirectoryID == n.Props[data].DirectoryID {
		t.Fatal("dirs share a directory id")
	}

	// As Kafka 4.4, no bootstrap.checkpoint: the data dir holds only
	// meta.properties, and the metadata dir's bootstrap snapshot holds the
	// header, the FeatureLevelRecords and the footer.
	if names, err := os.ReadDir(data); err != nil || len(names) != 1 || names[0].Name() != MetaPropertiesFile {
		t.Fatalf("data dir holds %v (%v), want only %s", names, err, MetaPropertiesFile)
	}
	raw, err := os.ReadFile(filepath.Join(meta, "__cluster_metadata-0", BootstrapSnapshotName))
	if err != nil {
		t.Fatal(err)
	}
	var batches []protocol.Batch
	for len(raw) > 0 {
		b, rest, err := protocol.DecodeBatch(raw)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
		raw = rest
	}
	if len(batches) != 3 || !batches[0].Control || batches[1].Control || !batches[2].Control {
		t.Fatalf("want header, data, footer batches; got %+v", batches)
	}
	if k := batches[0].Records[0].Key; !bytes.Equal(k, []byte{0, 0, 0, 3}) {
		t.Fatalf("header key %x", k)
	}
	if k := batches[2].Records[0].Key; !bytes.Equal(k, []byte{0, 0, 0, 4}) || batches[2].BaseOffset != 3 {
		t.Fatalf("footer key %x at %d", k, batches[2].BaseOffset)
	}
	recs := batches[1].Records
	if len(recs) != 2 || batches[1].BaseOffset != 1 || batches[1].BaseTimestamp != now.UnixMilli() {
		t.Fatalf("data batch: %+v", batches[1])
	}
	name, level := decodeFeatureLevel(t, recs[0].Value)
	if name != "metadata.version" || level != 21 {
		t.Fatalf("first record %s=%d", name, level)
	}
	if name, level = decodeFeatureLevel(t, recs[1].Value); name != "group.version" || level != 1 {
		t.Fatalf("second record %s=%d", name, level)
	}

	// Formatting again needs --ignore-formatted.
	err = Format(opts)
	if err == nil || !strings.Contains(err.Error(), "already formatted") || !strings.Contains(err.Error(), "--ignore-formatted") {
		t.Fatalf("reformat: %v", err)
	}
	out.Reset()
	opts.IgnoreFormatted = true
	if err := Format(opts); err != nil || out.String() != "All of the log directories are already formatted.\n" {
		t.Fatalf("ignore-formatted: %v %q", err, out.String())
	}
	// A new dir is formatted, the old ones are kept with their ids.
	extra := filepath.Join(root, "extra")
	opts.Dirs = append(opts.Dirs, extra)
	if err := Format(opts); err != nil {
		t.Fatal(err)
	}
	n2, err := Load(opts.Dirs, meta, 2)
	if err != nil || n2.DirectoryID != n.DirectoryID {
		t.Fatalf("reload: %+v %v", n2, err)
	}
	// Another cluster id is refused even with --ignore-formatted.
	opts.ClusterID = uuid.Random().String()
	if err := Format(opts); err == nil || !strings.Contains(err.Error(), "invalid cluster.id") {
		t.Fatalf("other cluster id: %v", err)
	}
	opts.ClusterID = "bad"
	if err := Format(opts); err == nil {
		t.Fatal("invalid cluster id accepted")
	}
}

func decodeFeatureLevel(t *testing.T, v []byte) (string, int16) {
	t.Helper()
	// frame version 1, api key 12, version 0, compact string, int16, tags
	if len(v) < 4 || v[0] != 1 || v[1] != 12 || v[2] != 0 {
		t.Fatalf("record framing %x", v)
	}
	n := int(v[3]) - 1
	name := string(v[4 : 4+n])
	level := int16(binary.BigEndian.Uint16(v[4+n:]))
	if len(v) != 4+n+3 || v[len(v)-1] != 0 {
		t.Fatalf("record length %x", v)
	}
	return name, level
}

func TestLoadConsistency(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		os.MkdirAll(d, 0o755)
	}
	write := func(d string, mp MetaProperties) {
		t.Helper()
		if err := WriteMetaProperties(d, mp); err != nil {
			t.Fatal(err)
		}
	}
	write(a, MetaProperties{Version: 1, ClusterID: testClusterID, NodeID: 1, DirectoryID: uuid.Random()})
	write(b, MetaProperties{Version: 1, ClusterID: "other", NodeID: 1, DirectoryID: uuid.Random()})
	_, err := Load([]string{a, b}, a, 1)
	if err == nil || !strings.Contains(err.Error(), Path(a)) || !strings.Contains(err.Error(), Path(b)) {
		t.Fatalf("mismatched cluster.id: %v (must name both files)", err)
	}
	write(b, MetaProperties{Version: 1, ClusterID: testClusterID, NodeID: 4, DirectoryID: uuid.Random()})
	_, err = Load([]string{a, b}, a, -1)
	if err == nil || !strings.Contains(err.Error(), Path(a)) || !strings.Contains(err.Error(), Path(b)) {
		t.Fatalf("mismatched node.id: %v (must name both files)", err)
	}
	_, err = Load([]string{a}, a, 9)
	if err == nil || !strings.Contains(err.Error(), "stored node id 1") {
		t.Fatalf("node.id vs config: %v", err)
	}
	same := uuid.Random()
	write(a, MetaProperties{Version: 1, ClusterID: testClusterID, NodeID: 1, DirectoryID: same})
	write(b, MetaProperties{Version: 1, ClusterID: testClusterID, NodeID: 1, DirectoryID: same})
	if _, err = Load([]string{a, b}, a, 1); err == nil || !strings.Contains(err.Error(), "duplicate directory id") {
		t.Fatalf("duplicate directory id: %v", err)
	}
	// A missing directory.id is generated and written back.
	write(b, MetaProperties{Version: 1, ClusterID: testClusterID, NodeID: 1})
	n, err := Load([]string{a, b}, b, 1)
	if err != nil || n.DirectoryID.IsZero() {
		t.Fatalf("add directory.id: %+v %v", n, err)
	}
	mp, _ := ReadMetaProperties(b)
	if mp.DirectoryID != n.DirectoryID {
		t.Fatal("generated directory.id not persisted")
	}
	if _, err := Load([]string{a, filepath.Join(root, "nope")}, a, 1); !errors.Is(err, ErrNotFormatted) {
		t.Fatalf("unformatted dir: %v", err)
	}
}

func TestInfo(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	id := mustParse(t, "J8aAPcfLQt2bqs1JT_rMgQ")
	if err := WriteMetaProperties(a, MetaProperties{Version: 1, ClusterID: testClusterID, NodeID: 1, DirectoryID: id}); err != nil {
		t.Fatal(err)
	}
	text, err := Info([]string{a})
	want := "Found log directory:\n  " + a + "\n\nFound metadata: {cluster.id=" + testClusterID +
		", directory.id=J8aAPcfLQt2bqs1JT_rMgQ, node.id=1, version=1}\n\n"
	if err != nil || text != want {
		t.Fatalf("Info = %q, %v\nwant %q", text, err, want)
	}
	text, err = Info([]string{b, a, filepath.Join(root, "missing")})
	want = "Found log directories:\n  " + a + "\n  " + b + "\n\nFound metadata: {cluster.id=" + testClusterID +
		", directory.id=J8aAPcfLQt2bqs1JT_rMgQ, node.id=1, version=1}\n\nFound problems:\n  " +
		b + " is not formatted.\n  " + filepath.Join(root, "missing") + " does not exist\n\n"
	if !errors.Is(err, ErrInfoProblems) || text != want {
		t.Fatalf("Info = %q, %v\nwant %q", text, err, want)
	}
	if err := WriteMetaProperties(b, MetaProperties{Version: 1, ClusterID: "other", NodeID: 1}); err != nil {
		t.Fatal(err)
	}
	text, err = Info([]string{a, b})
	if !errors.Is(err, ErrInfoProblems) || !strings.Contains(text, "Found problem:\n  Mismatched cluster IDs between storage directories.\n") {
		t.Fatalf("mismatch: %q %v", text, err)
	}
	if text, err := Info(nil); err != nil || text != "No directories specified.\n" {
		t.Fatalf("no dirs: %q %v", text, err)
	}
}
