package protocol

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestControlValueGolden(t *testing.T) {
	// Values of docs/design/storage.md 6.3.
	if got := (SnapshotHeaderRecord{LastContainedLogTimestamp: goldenTS}).AppendTo(nil); !bytes.Equal(got, unhex(t, "00 00 00 00 01 8b cf e5 68 00 00")) {
		t.Fatalf("snapshot header %x", got)
	}
	if got := (SnapshotFooterRecord{}).AppendTo(nil); !bytes.Equal(got, []byte{0, 0, 0}) {
		t.Fatalf("snapshot footer %x", got)
	}
	if got := (KRaftVersionRecord{KRaftVersion: 1}).AppendTo(nil); !bytes.Equal(got, []byte{0, 0, 0, 1, 0}) {
		t.Fatalf("kraft version %x", got)
	}
	var h SnapshotHeaderRecord
	if err := h.ReadFrom(unhex(t, "00 00 00 00 01 8b cf e5 68 00 00")); err != nil || h.LastContainedLogTimestamp != goldenTS {
		t.Fatalf("%+v %v", h, err)
	}
	var k KRaftVersionRecord
	if err := k.ReadFrom([]byte{0, 0, 0, 1, 0}); err != nil || k.KRaftVersion != 1 {
		t.Fatalf("%+v %v", k, err)
	}
	// Unknown tags are skipped: one tag (7) of 2 bytes.
	if err := k.ReadFrom([]byte{0, 0, 0, 1, 1, 7, 2, 0xaa, 0xbb}); err != nil || k.KRaftVersion != 1 {
		t.Fatalf("tagged: %+v %v", k, err)
	}
	for _, bad := range [][]byte{{0, 0, 0}, {0, 0, 0, 1}, {0, 0, 0, 1, 0, 9}, {0, 0, 0, 1, 1, 7, 5, 0}} {
		if err := k.ReadFrom(bad); !errors.Is(err, ErrBadControlRecord) {
			t.Errorf("%x: err %v", bad, err)
		}
	}
}

func TestLeaderChangeControlBatchGolden(t *testing.T) {
	value := NewLeaderChange(1, []int32{1, 2, 3}, []int32{1, 2}).AppendTo(nil)
	got := AppendControlBatch(nil, 0, 1, goldenTS, ControlLeaderChange, value)
	if want := unhex(t, goldenLeaderChangeBatch); !bytes.Equal(got, want) {
		t.Fatalf("leader change batch:\n got %x\nwant %x", got, want)
	}
	b, _, err := DecodeBatch(got)
	if err != nil {
		t.Fatal(err)
	}
	typ, v, err := ReadControlRecord(b.Records[0])
	if err != nil || typ != ControlLeaderChange {
		t.Fatalf("type %d, %v", typ, err)
	}
	m, err := DecodeLeaderChange(v)
	if err != nil || m.LeaderID != 1 || len(m.Voters) != 3 || m.GrantingVoters[1].VoterID != 2 {
		t.Fatalf("%+v %v", m, err)
	}
}

func TestVotersRecordRoundTrip(t *testing.T) {
	r := VotersRecord{Voters: []VotersRecordVoter{
		{VoterID: 1, VoterDirectoryID: [16]byte{15: 1}, Endpoints: []VotersRecordEndpoint{{"CONTROLLER", "localhost", 9093}},
			MinSupportedVersion: 0, MaxSupportedVersion: 1},
		{VoterID: 2, Endpoints: []VotersRecordEndpoint{{"A", "h", 1}, {"B", "h2", 65535}}, MaxSupportedVersion: 1},
	}}
	enc := r.AppendTo(nil)
	// Hand-checked layout of the first voter: version, compact count 3 (2 voters), id 1.
	if !bytes.Equal(enc[:7], []byte{0, 0, 3, 0, 0, 0, 1}) {
		t.Fatalf("prefix %x", enc[:7])
	}
	var back VotersRecord
	if err := back.ReadFrom(enc); err != nil {
		t.Fatal(err)
	}
	if len(back.Voters) != 2 || back.Voters[0].Endpoints[0] != r.Voters[0].Endpoints[0] ||
		back.Voters[1].Endpoints[1].Port != 65535 || back.Voters[0].VoterDirectoryID[15] != 1 || back.Voters[0].MaxSupportedVersion != 1 {
		t.Fatalf("%+v", back)
	}
	if again := back.AppendTo(nil); !bytes.Equal(again, enc) {
		t.Fatalf("re-encode differs")
	}
	// Every truncation fails cleanly.
	for i := 0; i < len(enc); i++ {
		if err := back.ReadFrom(enc[:i]); !errors.Is(err, ErrBadControlRecord) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
	// A huge voter count in a tiny value is refused before allocating.
	if err := back.ReadFrom([]byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0x07, 0}); !errors.Is(err, ErrBadControlRecord) {
		t.Fatalf("huge count: %v", err)
	}
}

func TestControlType(t *testing.T) {
	if typ, err := ControlType(ControlKey(ControlKRaftVoters)); err != nil || typ != 6 {
		t.Fatalf("%d %v", typ, err)
	}
	for _, bad := range [][]byte{nil, {0, 0, 0}, {0xff, 0xff, 0, 2}} {
		if _, err := ControlType(bad); !errors.Is(err, ErrBadControlRecord) {
			t.Errorf("%x: %v", bad, err)
		}
	}
}

// TestJVMBatches decodes batches written by Kafka's Java raft client, decodes each control
// value with kraftd's codecs and re-encodes everything to the same bytes.
func TestJVMBatches(t *testing.T) {
	files, err := filepath.Glob("testdata/jvm-batches/*.bin")
	if err != nil || len(files) < 8 {
		t.Fatalf("%d files, %v", len(files), err)
	}
	types := map[int16]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, rest, err := DecodeBatch(data)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%s: %v (rest %d)", f, err, len(rest))
		}
		if again := AppendBatch(nil, b); !bytes.Equal(again, data) {
			t.Fatalf("%s: re-encoded batch differs:\n got %x\nwant %x", f, again, data)
		}
		if !b.Control {
			if len(b.Records) == 0 || b.Records[0].Key != nil || len(b.Records[0].Value) == 0 {
				t.Fatalf("%s: data records %+v", f, b.Records)
			}
			continue
		}
		for _, r := range b.Records {
			typ, v, err := ReadControlRecord(r)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			types[typ]++
			var again []byte
			switch typ {
			case ControlLeaderChange:
				m, err := DecodeLeaderChange(v)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if m.LeaderID < 1 || len(m.Voters) != 3 {
					t.Fatalf("%s: leader change %+v", f, m)
				}
				ids := func(vs []kmsg.LeaderChangeMessageVoter) (out []int32) {
					for _, v := range vs {
						out = append(out, v.VoterID)
					}
					return out
				}
				again = NewLeaderChange(m.LeaderID, ids(m.Voters), ids(m.GrantingVoters)).AppendTo(nil)
			case ControlSnapshotHeader:
				var h SnapshotHeaderRecord
				if err := h.ReadFrom(v); err != nil || h.LastContainedLogTimestamp <= 0 {
					t.Fatalf("%s: %+v %v", f, h, err)
				}
				again = h.AppendTo(nil)
			case ControlSnapshotFooter:
				var h SnapshotFooterRecord
				if err := h.ReadFrom(v); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				again = h.AppendTo(nil)
			case ControlKRaftVersion:
				var h KRaftVersionRecord
				if err := h.ReadFrom(v); err != nil || h.KRaftVersion != 1 {
					t.Fatalf("%s: %+v %v", f, h, err)
				}
				again = h.AppendTo(nil)
			case ControlKRaftVoters:
				var h VotersRecord
				if err := h.ReadFrom(v); err != nil || len(h.Voters) < 3 {
					t.Fatalf("%s: %+v %v", f, h, err)
				}
				e := h.Voters[0].Endpoints
				if len(e) != 1 || e[0].Name != "CONTROLLER" || e[0].Host != "127.0.0.1" || e[0].Port != 19191 ||
					h.Voters[0].MaxSupportedVersion != 1 || string(h.Voters[0].VoterDirectoryID[:6]) != "JVMPEE" {
					t.Fatalf("%s: voter %+v", f, h.Voters[0])
				}
				again = h.AppendTo(nil)
			default:
				t.Fatalf("%s: unexpected control type %d", f, typ)
			}
			if !bytes.Equal(again, v) {
				t.Fatalf("%s: type %d value re-encoded %x, want %x", f, typ, again, v)
			}
		}
	}
	for _, typ := range []int16{ControlLeaderChange, ControlSnapshotHeader, ControlSnapshotFooter, ControlKRaftVersion, ControlKRaftVoters} {
		if types[typ] == 0 {
			t.Errorf("no control record of type %d among the JVM batches", typ)
		}
	}
}
