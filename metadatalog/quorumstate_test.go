package metadatalog

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/vfs"
	"github.com/kraftd/kraftd/vfs/faultfs"
)

// Files written by Kafka's FileQuorumStateStore (testdata/quorum-state).
func TestQuorumStateKafkaFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		want raft.ElectionState
	}{
		{"static-kraftv0-follower-or-leader.json", raft.ElectionState{Epoch: 2, LeaderID: 1, VotedID: -1, Voters: []int32{1, 2, 3}}},
		{"dynamic-observer-node4.json", raft.ElectionState{Epoch: 1, LeaderID: 3, VotedID: -1, Voters: []int32{}}},
		{"dynamic-kraftv1-voter.json", raft.ElectionState{Epoch: 1, LeaderID: 3, VotedID: -1}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "quorum-state", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, QuorumStateFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s := NewQuorumStateStore(nil, dir)
		st, ok, err := s.Read()
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", tc.file, ok, err)
		}
		if !reflect.DeepEqual(st, tc.want) {
			t.Fatalf("%s: got %+v, want %+v", tc.file, st, tc.want)
		}
		// Written back byte for byte as Kafka wrote it.
		if err := s.Write(st); err != nil {
			t.Fatal(err)
		}
		out, _ := os.ReadFile(s.Path())
		if string(out) != string(data) {
			t.Fatalf("%s: rewrite\n%s\nwant\n%s", tc.file, out, data)
		}
	}
}

func TestQuorumStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := NewQuorumStateStore(nil, dir)
	if _, ok, err := s.Read(); ok || err != nil {
		t.Fatalf("missing file must mean a fresh node: %v %v", ok, err)
	}
	for _, st := range []raft.ElectionState{
		{Epoch: 7, LeaderID: -1, VotedID: 2, VotedDirectoryID: [16]byte{1, 2, 3, 15: 9}},
		{Epoch: 8, LeaderID: 1, VotedID: -1, Voters: []int32{1, 2, 3}},
		{Epoch: 2147483646, LeaderID: 2147483647, VotedID: -1, Voters: []int32{}},
		{Epoch: 0, LeaderID: -1, VotedID: -1},
	} {
		if err := s.Write(st); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Read()
		if err != nil || !ok || !reflect.DeepEqual(got, st) {
			t.Fatalf("round trip: %+v %v %v, want %+v", got, ok, err, st)
		}
		if _, err := os.Stat(s.Path() + ".tmp"); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("temp file left behind")
		}
	}
	data, _ := os.ReadFile(s.Path())
	if string(data) != `{"leaderId":-1,"leaderEpoch":0,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}` {
		t.Fatalf("v1 text %s", data)
	}
	// Version 0 has no voted directory id: dropped, as Kafka does.
	if err := s.Write(raft.ElectionState{Epoch: 3, LeaderID: -1, VotedID: 2, Voters: []int32{1, 2}, VotedDirectoryID: [16]byte{1}}); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(s.Path())
	if string(data) != `{"clusterId":"","leaderId":-1,"leaderEpoch":3,"votedId":2,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2}],"data_version":0}` {
		t.Fatalf("v0 text %s", data)
	}
}

func TestQuorumStateCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"empty", "", "empty"},
		{"truncated", `{"leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOf`, "JSON"},
		{"not json", "hello", "JSON"},
		{"array", "[1,2]", "JSON"},
		{"null", "null", "JSON object"},
		{"no version", `{"leaderId":1,"leaderEpoch":2,"votedId":-1}`, "data_version"},
		{"unknown version", `{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":2}`, "data_version (2)"},
		{"missing field v1", `{"leaderId":1,"leaderEpoch":2,"votedId":-1,"data_version":1}`, "votedDirectoryId"},
		{"missing field v0", `{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"data_version":0}`, "currentVoters"},
		{"epoch not int", `{"leaderId":1,"leaderEpoch":"2","votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`, "leaderEpoch"},
		{"epoch overflow", `{"leaderId":1,"leaderEpoch":2147483648,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`, "leaderEpoch"},
		{"bad uuid", `{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"xyz","data_version":1}`, "votedDirectoryId"},
		{"bad voter", `{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{"id":1}],"data_version":0}`, "voterId"},
		{"second line", "{\"leaderId\":1,\"leaderEpoch\":2,\"votedId\":-1,\"votedDirectoryId\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"data_version\":1}\ngarbage", "after the first line"},
		{"binary", "\x00\x01\x02", "JSON"},
		// Well-formed, but no node can start from these values.
		{"negative epoch", `{"leaderId":1,"leaderEpoch":-1,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`, `"leaderEpoch" is -1`},
		{"last epoch", `{"leaderId":1,"leaderEpoch":2147483647,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`, `"leaderEpoch" is 2147483647`},
		{"leader id", `{"leaderId":-2,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`, `"leaderId" is -2`},
		{"voted id", `{"clusterId":"","leaderId":-1,"leaderEpoch":2,"votedId":-7,"appliedOffset":0,"currentVoters":[],"data_version":0}`, `"votedId" is -7`},
		{"voter id", `{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":-1}],"data_version":0}`, "voterId of entry 1 is -1"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, QuorumStateFile), []byte(tc.text), 0o644)
		s := NewQuorumStateStore(nil, dir)
		_, ok, err := s.Read()
		if err == nil || ok {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), s.Path()) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (want the file name and %q)", tc.name, err, tc.want)
		}
	}
	// v0 with currentVoters null is Kafka-legal.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, QuorumStateFile), []byte(`{"clusterId":"","leaderId":-1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,"currentVoters":null,"data_version":0}`), 0o644)
	if st, ok, err := NewQuorumStateStore(nil, dir).Read(); err != nil || !ok || st.Voters == nil || st.Epoch != 3 {
		t.Fatalf("null voters: %+v %v", st, err)
	}
}

// A state that Read would refuse is not written, so the node keeps a file
// it can start from.
func TestQuorumStateWriteRefusesUnusableState(t *testing.T) {
	dir := t.TempDir()
	s := NewQuorumStateStore(nil, dir)
	old := raft.ElectionState{Epoch: 4, LeaderID: 1, VotedID: -1}
	if err := s.Write(old); err != nil {
		t.Fatal(err)
	}
	for _, st := range []raft.ElectionState{
		{Epoch: math.MaxInt32, LeaderID: -1, VotedID: 2},
		{Epoch: -3, LeaderID: -1, VotedID: -1},
		{Epoch: 5, LeaderID: -5, VotedID: -1},
		{Epoch: 5, LeaderID: -1, VotedID: -2},
		{Epoch: 5, LeaderID: -1, VotedID: -1, Voters: []int32{1, -4}},
	} {
		err := s.Write(st)
		if err == nil || !strings.Contains(err.Error(), s.Path()) || !strings.Contains(err.Error(), "field") {
			t.Fatalf("write %+v: %v", st, err)
		}
	}
	if st, ok, err := s.Read(); err != nil || !ok || !reflect.DeepEqual(st, old) {
		t.Fatalf("after refused writes: %+v %v", st, err)
	}
}

// Every step of a write can fail; the file then still holds the old state.
func TestQuorumStateWriteFailures(t *testing.T) {
	dir := t.TempDir()
	ffs := faultfs.Wrap(vfs.OS)
	s := NewQuorumStateStore(ffs, dir)
	old := raft.ElectionState{Epoch: 4, LeaderID: 1, VotedID: -1}
	if err := s.Write(old); err != nil {
		t.Fatal(err)
	}
	ffs.Inject(faultfs.DiskFull(10))
	err := s.Write(raft.ElectionState{Epoch: 5, LeaderID: -1, VotedID: 2})
	if err == nil || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), s.Path()) {
		t.Fatalf("disk full: %v", err)
	}
	ffs.Reset()
	ffs.Inject(faultfs.Fail(syscall.EIO, faultfs.OpSync))
	if err := s.Write(raft.ElectionState{Epoch: 5, LeaderID: -1, VotedID: 2}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("fsync failure: %v", err)
	}
	ffs.Reset()
	st, ok, err := s.Read()
	if err != nil || !ok || !reflect.DeepEqual(st, old) {
		t.Fatalf("after failed writes: %+v %v", st, err)
	}
	// A stale temp file from a crash mid-write does not matter.
	os.WriteFile(s.Path()+".tmp", []byte("{garbage"), 0o644)
	if st, _, err := s.Read(); err != nil || st.Epoch != 4 {
		t.Fatalf("stale tmp: %+v %v", st, err)
	}
	if err := s.Write(raft.ElectionState{Epoch: 6, LeaderID: -1, VotedID: -1}); err != nil {
		t.Fatal(err)
	}
}

// FuzzDecodeQuorumState: any file content decodes without panicking, and a
// state that decodes is one a node can start from and survives a write and
// a read unchanged.
func FuzzDecodeQuorumState(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "quorum-state", "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no Kafka quorum-state files: %v", err)
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		`{"leaderId":1,"leaderEpoch":2147483647,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`,
		`{"leaderId":-2,"leaderEpoch":-1,"votedId":-3,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}`,
		`{"clusterId":"","leaderId":-1,"leaderEpoch":3,"votedId":2,"appliedOffset":0,"currentVoters":null,"data_version":0}`,
		`{"clusterId":"x","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":-9,"currentVoters":[{"voterId":-1}],"data_version":0}`,
		`{"leaderId":1e3,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}` + "\n",
		`{"data_version":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := DecodeQuorumState(data)
		if err != nil {
			return
		}
		if err := checkElectionState(st); err != nil {
			t.Fatalf("decoded an unusable state %+v: %v", st, err)
		}
		enc, err := EncodeQuorumState(st)
		if err != nil {
			t.Fatalf("decoded state %+v does not encode: %v", st, err)
		}
		back, err := DecodeQuorumState(enc)
		if err != nil || !reflect.DeepEqual(back, st) {
			t.Fatalf("round trip of %+v: %+v %v", st, back, err)
		}
	})
}
