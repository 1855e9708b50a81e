package clusterid

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/protocol"
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
		{"", "no voters"},
		{"localhost:9093:J8aAPcfLQt2bqs1JT_rMgQ", "no @"},
		{"@localhost:9093:J8aAPcfLQt2bqs1JT_rMgQ", "beginning"},
		{"-1@h:1:J8aAPcfLQt2bqs1JT_rMgQ", "node id"},
		{"1@", "no hostname"},
		{"1@[::1:9093:J8aAPcfLQt2bqs1JT_rMgQ", "no ']'"},
		{"1@host", "no colon after the hostname"},
		{"1@h:70000:J8aAPcfLQt2bqs1JT_rMgQ", "invalid port"},
		{"1@h:9093", "no colon after the port"},
		{"1@h:9093:nope", "directory id"},
		{"1@h:9093:AAAAAAAAAAAAAAAAAAAAAQ", "reserved"},
		{"1@h:1:J8aAPcfLQt2bqs1JT_rMgQ,1@h:2:MkU3OEVBNTcwNTJENDM2Qg", "node id 1 was specified more than once"},
		{"1@h:1:J8aAPcfLQt2bqs1JT_rMgQ,2@h:2:J8aAPcfLQt2bqs1JT_rMgQ", "more than once"},
	} {
		if _, err := ParseInitialControllers(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
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
		if !strings.HasPrefix(out.String(), "Formatting "+tc.kind+" "+dir) {
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
		if v.VoterID != 2 || UUID(v.VoterDirectoryID) != voters[1].DirectoryID || len(v.Endpoints) != 1 ||
			v.Endpoints[0] != (protocol.VotersRecordEndpoint{Name: "CONTROLLER", Host: "localhost", Port: 9094}) || v.MaxSupportedVersion != 1 {
			t.Fatalf("voter %+v", v)
		}
		if !footer.Control || footer.BaseOffset != 3 {
			t.Fatalf("footer %+v", footer)
		}
		if typ, _, _ := protocol.ReadControlRecord(footer.Records[0]); typ != 4 {
			t.Fatalf("footer type %d", typ)
		}
	}
}
