package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/uuid"
)

func TestParseInitialControllers(t *testing.T) {
	got, err := ParseInitialControllers("1@localhost:9093:J8aAPcfLQt2bqs1JT_rMgQ, 2@[::1]:9094:MkU3OEVBNTcwNTJENDM2Qg,")
	if err != nil {
		t.Fatal(err)
	}
	want := []InitialController{
		{NodeID: 1, Host: "localhost", Port: 9093, DirectoryID: mustParse(t, "J8aAPcfLQt2bqs1JT_rMgQ")},
		{NodeID: 2, Host: "::1", Port: 9094, DirectoryID: mustParse(t, "MkU3OEVBNTcwNTJENDM2Qg")},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "No voters given"},
		{"localhost:9093:J8aAPcfLQt2bqs1JT_rMgQ", "No @ found"},
		{"@localhost:9093:J8aAPcfLQt2bqs1JT_rMgQ", "Invalid @ at beginning"},
		{"-1@h:1:J8aAPcfLQt2bqs1JT_rMgQ", "Invalid negative node id -1"},
		{"x@h:1:J8aAPcfLQt2bqs1JT_rMgQ", "Failed to parse node id"},
		{"1@", "No hostname found"},
		{"1@[::1:9093:J8aAPcfLQt2bqs1JT_rMgQ", "no right bracket"},
		{"1@host", "No colon following hostname"},
		{"1@h:70000:J8aAPcfLQt2bqs1JT_rMgQ", "Invalid port 70000"},
		{"1@h:p:J8aAPcfLQt2bqs1JT_rMgQ", "Failed to parse port"},
		{"1@h:9093", "No colon following port"},
		{"1@h:9093:nope", "Failed to parse directory ID"},
		{"1@h:9093:AAAAAAAAAAAAAAAAAAAAAQ", "reserved"},
		{"1@h:1:J8aAPcfLQt2bqs1JT_rMgQ,1@h:2:MkU3OEVBNTcwNTJENDM2Qg", "Node id 1 was specified more than once."},
	} {
		if _, err := ParseInitialControllers(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	// Kafka's DynamicVoters checks node ids only: two voters may share a
	// directory id.
	if _, err := ParseInitialControllers("1@h:1:J8aAPcfLQt2bqs1JT_rMgQ,2@h:2:J8aAPcfLQt2bqs1JT_rMgQ"); err != nil {
		t.Errorf("shared directory id: %v", err)
	}
}

func TestFormatDynamicQuorum(t *testing.T) {
	root := t.TempDir()
	voters, err := ParseInitialControllers("1@localhost:9093:J8aAPcfLQt2bqs1JT_rMgQ,2@localhost:9094:MkU3OEVBNTcwNTJENDM2Qg")
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1700000000000)
	for _, tc := range []struct {
		node int32
		kind string
	}{{1, "dynamic metadata voter directory"}, {4, "dynamic metadata directory"}} {
		dir := filepath.Join(root, "n"+string(rune('0'+tc.node)))
		var out bytes.Buffer
		err := Format(FormatOptions{Dirs: []string{dir}, MetadataDir: dir, ClusterID: testClusterID, NodeID: tc.node,
			InitialControllers: voters, ControllerListener: "controller", Out: &out, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out.String(), "\n")
		if !strings.HasPrefix(lines[0], "Bootstrap metadata: BootstrapMetadata(records=[") || !strings.HasPrefix(lines[1], "Formatting "+tc.kind+" "+dir) {
			t.Fatalf("output %q", out.String())
		}
		mp, _ := ReadMetaProperties(dir)
		if tc.node == 1 && mp.DirectoryID != voters[0].DirectoryID {
			t.Fatalf("voter dir id %s, want %s", mp.DirectoryID, voters[0].DirectoryID)
		}
		if tc.node == 4 && (mp.DirectoryID == voters[0].DirectoryID || mp.DirectoryID == voters[1].DirectoryID) {
			t.Fatal("an observer must get its own directory id")
		}
		data, err := os.ReadFile(filepath.Join(dir, "__cluster_metadata-0", BootstrapSnapshotName))
		if err != nil {
			t.Fatal(err)
		}
		first, rest, err := protocol.DecodeBatch(data)
		if err != nil {
			t.Fatal(err)
		}
		recs, rest, err := protocol.DecodeBatch(rest)
		if err != nil || recs.Control || recs.BaseOffset != 3 || len(recs.Records) != 6 {
			t.Fatalf("bootstrap records batch %+v: %v", recs, err)
		}
		footer, rest, err := protocol.DecodeBatch(rest)
		if err != nil || len(rest) != 0 {
			t.Fatalf("footer: %v, %d trailing bytes", err, len(rest))
		}
		if !first.Control || first.BaseOffset != 0 || first.PartitionLeaderEpoch != 0 || len(first.Records) != 3 {
			t.Fatalf("first batch %+v", first)
		}
		var types []int16
		for _, r := range first.Records {
			typ, _, err := protocol.ReadControlRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			types = append(types, typ)
		}
		if types[0] != 3 || types[1] != 5 || types[2] != 6 {
			t.Fatalf("control types %v", types)
		}
		var hdr protocol.SnapshotHeaderRecord
		if err := hdr.ReadFrom(first.Records[0].Value); err != nil || hdr.LastContainedLogTimestamp != now.UnixMilli() {
			t.Fatalf("header %+v %v", hdr, err)
		}
		var kv protocol.KRaftVersionRecord
		if err := kv.ReadFrom(first.Records[1].Value); err != nil || kv.KRaftVersion != 1 {
			t.Fatalf("kraft.version %+v %v", kv, err)
		}
		var vr protocol.VotersRecord
		if err := vr.ReadFrom(first.Records[2].Value); err != nil || len(vr.Voters) != 2 {
			t.Fatalf("voters %+v %v", vr, err)
		}
		v := vr.Voters[1]
		if v.VoterID != 2 || uuid.UUID(v.VoterDirectoryID) != voters[1].DirectoryID || len(v.Endpoints) != 1 ||
			v.Endpoints[0] != (protocol.VotersRecordEndpoint{Name: "CONTROLLER", Host: "localhost", Port: 9094}) || v.MaxSupportedVersion != 1 {
			t.Fatalf("voter %+v", v)
		}
		if !footer.Control || footer.BaseOffset != 9 {
			t.Fatalf("footer %+v", footer)
		}
		if typ, _, _ := protocol.ReadControlRecord(footer.Records[0]); typ != 4 {
			t.Fatalf("footer type %d", typ)
		}
	}
}
