package raft_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// standaloneDriver starts node 1 of a log formatted --standalone (a
// bootstrap snapshot naming node 1 with directory testDir(1)), configured
// with bootstrap servers only and the given directory id.
func standaloneDriver(t *testing.T, dir [16]byte) (*raft.Driver, *rafttest.MemLog, *rafttest.MemStateStore) {
	t.Helper()
	l := rafttest.NewMemLog()
	writeTestBootstrapSnapshot(t, l, []int32{1})
	cfg := raft.DefaultConfig()
	cfg.NodeID, cfg.DirectoryID, cfg.ClusterID = 1, dir, testCluster
	cfg.ListenerName = "CONTROLLER"
	cfg.Endpoints = []raft.Endpoint{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 9101}} // not what format recorded
	cfg.Bootstrap = []raft.Endpoint{{Host: "127.0.0.1", Port: 9001}}
	store := rafttest.NewMemStateStore()
	d, err := raft.NewDriver(cfg, l, store, &fakeTransport{}, rand.New(rand.NewPCG(1, 1)), zaptest.NewLogger(t), time.Unix(100, 0))
	if err != nil {
		t.Fatal(err)
	}
	return d, l, store
}

// A standalone voter leads at once; its first batch holds LeaderChange,
// KRaftVersion 1 and a Voters record with its own current endpoint (the
// set came from the bootstrap snapshot), and its quorum state is written
// with data_version 1 (no voter list).
func TestStandaloneLeaderWritesVoterSet(t *testing.T) {
	d, l, store := standaloneDriver(t, testDir(1))
	st := d.Status()
	if st.Role != raft.RoleLeader || st.Epoch != 1 {
		t.Fatalf("status %+v: want leader of epoch 1", st)
	}
	if es, _ := store.State(); es.Voters != nil {
		t.Fatalf("quorum state voters %v: want none (data_version 1)", es.Voters)
	}
	data, err := l.Read(0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := protocol.DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	var types []int16
	var voters protocol.VotersRecord
	for _, r := range b.Records {
		typ, value, err := protocol.ReadControlRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
		if typ == protocol.ControlKRaftVoters {
			if err := voters.ReadFrom(value); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []int16{protocol.ControlLeaderChange, protocol.ControlKRaftVersion, protocol.ControlKRaftVoters}
	if len(types) != len(want) || types[0] != want[0] || types[1] != want[1] || types[2] != want[2] {
		t.Fatalf("first batch control types %v, want %v", types, want)
	}
	if len(voters.Voters) != 1 || voters.Voters[0].VoterDirectoryID != testDir(1) ||
		voters.Voters[0].Endpoints[0].Port != 9101 || voters.Voters[0].MaxSupportedVersion != 1 {
		t.Fatalf("voters record %+v", voters)
	}
	if !st.Voters.Contains(raft.ReplicaKey{ID: 1, DirectoryID: testDir(1)}) {
		t.Fatalf("voter set in force %v lacks node 1", st.Voters)
	}
}

// A node whose directory id is not the one the voter set records is not
// a voter: it never elects itself (Kafka's VoterSet.isVoter).
func TestDirectoryMismatchMakesAnObserver(t *testing.T) {
	d, _, store := standaloneDriver(t, testDir(9))
	if st := d.Status(); st.Role != raft.RoleUnattached || st.Epoch != 0 {
		t.Fatalf("status %+v: want an unattached observer", st)
	}
	next, err := d.Poll(time.Unix(200, 0))
	if err != nil || d.Status().Role != raft.RoleUnattached {
		t.Fatalf("after 100s: role %v (%v), next %v", d.Status().Role, err, next)
	}
	// kraft.version is 1 (from the bootstrap snapshot): data_version 1.
	if es, _ := store.State(); es.Voters != nil {
		t.Fatalf("quorum state voters %v: want none (data_version 1)", es.Voters)
	}
}
