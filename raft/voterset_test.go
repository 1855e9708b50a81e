package raft

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol"
)

func dirOf(b byte) [16]byte { return [16]byte{0: b, 15: 1} }

func voterNode(id NodeID, dir byte, port int32) VoterNode {
	var d [16]byte
	if dir != 0 {
		d = dirOf(dir)
	}
	return VoterNode{
		Key:           ReplicaKey{ID: id, DirectoryID: d},
		Endpoints:     []Endpoint{{Name: "CONTROLLER", Host: "localhost", Port: port}},
		KRaftVersions: VersionRange{0, 1},
	}
}

func mustVoters(t *testing.T, nodes ...VoterNode) VoterSet {
	t.Helper()
	vs, err := NewVoterSet(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestVoterSetMembershipFollowsKafkasDirectoryRule(t *testing.T) {
	vs := mustVoters(t, voterNode(3, 3, 9003), voterNode(1, 0, 9001), voterNode(2, 2, 9002))
	if got := vs.IDs(); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Fatalf("ids %v: want sorted [1 2 3]", got)
	}
	if vs.Majority() != 2 {
		t.Fatalf("majority %d, want 2", vs.Majority())
	}
	cases := []struct {
		key  ReplicaKey
		want bool
	}{
		{ReplicaKey{ID: 1}, true},                         // no recorded directory: any matches
		{ReplicaKey{ID: 1, DirectoryID: dirOf(9)}, true},  // ditto
		{ReplicaKey{ID: 2, DirectoryID: dirOf(2)}, true},  // exact
		{ReplicaKey{ID: 2}, false},                        // directory required
		{ReplicaKey{ID: 2, DirectoryID: dirOf(7)}, false}, // another directory
		{ReplicaKey{ID: 4, DirectoryID: dirOf(4)}, false}, // unknown id
		{ReplicaKey{ID: -1}, false},
	}
	for _, c := range cases {
		if got := vs.Contains(c.key); got != c.want {
			t.Errorf("Contains(%v) = %v, want %v", c.key, got, c.want)
		}
	}
	if e, ok := vs.Endpoint(2, "CONTROLLER"); !ok || e.Port != 9002 {
		t.Fatalf("endpoint of 2: %v %v", e, ok)
	}
	if _, ok := vs.Endpoint(2, "OTHER"); ok {
		t.Fatal("endpoint of an unknown listener found")
	}
	if _, err := NewVoterSet([]VoterNode{voterNode(1, 1, 1), voterNode(1, 2, 2)}); err == nil {
		t.Fatal("duplicate id accepted")
	}
}

func TestVoterSetChangesReturnNewSets(t *testing.T) {
	vs := mustVoters(t, voterNode(1, 1, 9001), voterNode(2, 2, 9002))
	added, ok := vs.Add(voterNode(3, 3, 9003))
	if !ok || added.Len() != 3 || vs.Len() != 2 {
		t.Fatalf("add: ok=%v len=%d (orig %d)", ok, added.Len(), vs.Len())
	}
	if _, ok := vs.Add(voterNode(2, 9, 1)); ok {
		t.Fatal("added an id that is already a voter")
	}
	if _, ok := added.Remove(ReplicaKey{ID: 2, DirectoryID: dirOf(9)}); ok {
		t.Fatal("removed with another directory id")
	}
	removed, ok := added.Remove(ReplicaKey{ID: 2, DirectoryID: dirOf(2)})
	if !ok || removed.ContainsID(2) || !added.ContainsID(2) {
		t.Fatal("remove did not return a new set without 2")
	}
	one := mustVoters(t, voterNode(1, 1, 9001))
	if _, ok := one.Remove(ReplicaKey{ID: 1, DirectoryID: dirOf(1)}); ok {
		t.Fatal("removed the last voter")
	}
	moved := voterNode(1, 1, 9101)
	if !vs.NeedsUpdate(moved) {
		t.Fatal("a new port needs no update")
	}
	if vs.NeedsUpdate(voterNode(1, 1, 9001)) {
		t.Fatal("the same node needs an update")
	}
	upd, ok := vs.Update(moved)
	if !ok || upd.Nodes()[0].Endpoints[0].Port != 9101 || vs.Nodes()[0].Endpoints[0].Port != 9001 {
		t.Fatal("update did not return a new set with the new port")
	}
	if _, ok := vs.Update(voterNode(1, 5, 1)); ok {
		t.Fatal("updated a voter under another directory id")
	}
}

func TestVoterSetOverlappingMajority(t *testing.T) {
	a := mustVoters(t, voterNode(1, 1, 1), voterNode(2, 2, 2), voterNode(3, 3, 3))
	plusOne, added := a.Add(voterNode(4, 4, 4))
	minusOne, removed := a.Remove(ReplicaKey{ID: 3, DirectoryID: dirOf(3)})
	if !added || plusOne.Len() != 4 || !removed || minusOne.Len() != 2 {
		t.Fatalf("add: %v %v; remove: %v %v", added, plusOne, removed, minusOne)
	}
	swapped := mustVoters(t, voterNode(1, 1, 1), voterNode(2, 2, 2), voterNode(4, 4, 4))
	twoNew := mustVoters(t, voterNode(1, 1, 1), voterNode(4, 4, 4), voterNode(5, 5, 5))
	newDir := mustVoters(t, voterNode(1, 1, 1), voterNode(2, 2, 2), voterNode(3, 9, 3))
	for name, c := range map[string]struct {
		b    VoterSet
		want bool
	}{
		"same": {a, true}, "add": {plusOne, true}, "remove": {minusOne, true},
		"swap one": {swapped, true}, "two new": {twoNew, false}, "new directory": {newDir, true},
	} {
		if got := a.OverlappingMajority(c.b); got != c.want {
			t.Errorf("%s: overlapping = %v, want %v", name, got, c.want)
		}
	}
}

func TestVoterSetRecordRoundTrip(t *testing.T) {
	vs := mustVoters(t, voterNode(2, 2, 9002), voterNode(1, 1, 9001))
	rec := vs.Record()
	enc := rec.AppendTo(nil)
	var back protocol.VotersRecord
	if err := back.ReadFrom(enc); err != nil {
		t.Fatal(err)
	}
	got, err := voterSetFromRecord(&back)
	if err != nil || !got.Equal(vs) {
		t.Fatalf("round trip: %v %v, want %v", got, err, vs)
	}
	if back.Voters[0].VoterID != 1 {
		t.Fatal("voters are not written in id order")
	}
}

func TestKRaftStateCheckRefusesNonOverlappingChanges(t *testing.T) {
	boot := mustVoters(t, voterNode(1, 1, 1))
	k := kraftState{}
	if err := k.resetTo(0, []controlChange{{offset: -1, kraft: 1}, {offset: -1, voters: &boot}}); err != nil {
		t.Fatal(err)
	}
	// From a bootstrap set anything goes (it was never replicated).
	three := mustVoters(t, voterNode(1, 1, 1), voterNode(2, 2, 2), voterNode(3, 3, 3))
	ch := []controlChange{{offset: 5, voters: &three}}
	if err := k.check(ch); err != nil {
		t.Fatal(err)
	}
	if err := k.apply(ch); err != nil {
		t.Fatal(err)
	}
	other := mustVoters(t, voterNode(1, 1, 1), voterNode(4, 4, 4), voterNode(5, 5, 5))
	if err := k.check([]controlChange{{offset: 9, voters: &other}}); err == nil {
		t.Fatal("accepted a set that replaces two voters at once")
	}
	if vs, off := k.latestVoters(); off != 5 || !vs.Equal(three) || k.latestVersion() != 1 {
		t.Fatalf("latest %v at %d, version %d", vs, off, k.latestVersion())
	}
	if !k.votersAt(4).Equal(boot) {
		t.Fatal("set at offset 4 is not the bootstrap set")
	}
	k.truncateNew(5)
	if vs, off := k.latestVoters(); off != -1 || !vs.Equal(boot) {
		t.Fatalf("after truncation latest %v at %d", vs, off)
	}
}

// The Voters records kraftd writes list voters and endpoints in the order
// Kafka 4.4's VoterSet (a HashMap of ids, copied on every change) and
// Endpoints (a HashMap sized for its listeners) give them; the expected
// orders were printed by Kafka 4.4's VoterSet.toVotersRecord after the same
// history.
func TestVoterSetRecordInKafkaOrder(t *testing.T) {
	node := func(id NodeID, names ...string) VoterNode {
		n := VoterNode{Key: ReplicaKey{ID: id}, KRaftVersions: VersionRange{0, 1}}
		if len(names) == 0 {
			names = []string{"CONTROLLER"}
		}
		for _, name := range names {
			n.Endpoints = append(n.Endpoints, Endpoint{Name: name, Host: "h", Port: 9000 + int32(id)})
		}
		return n
	}
	fromIDs := func(ids ...NodeID) VoterSet {
		var r protocol.VotersRecord
		for _, id := range ids {
			r.Voters = append(r.Voters, protocol.VotersRecordVoter{VoterID: int32(id), MaxSupportedVersion: 1,
				Endpoints: []protocol.VotersRecordEndpoint{{Name: "CONTROLLER", Host: "h", Port: uint16(9000 + id)}}})
		}
		vs, err := voterSetFromRecord(&r)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	order := func(vs VoterSet) string {
		var b strings.Builder
		for _, v := range vs.Record().Voters {
			fmt.Fprint(&b, v.VoterID)
			if len(v.Endpoints) > 1 {
				b.WriteString("(")
				for _, e := range v.Endpoints {
					b.WriteString(e.Name + " ")
				}
				b.WriteString(")")
			}
			b.WriteString(",")
		}
		return b.String()
	}
	check := func(what string, vs VoterSet, want string) {
		t.Helper()
		if got := order(vs); got != want {
			t.Errorf("%s: %s, Kafka writes %s", what, got, want)
		}
	}
	check("record 2,3,4", fromIDs(2, 3, 4), "4,2,3,")
	check("record 4,3,2", fromIDs(4, 3, 2), "4,2,3,")
	check("record 1,9,2", fromIDs(1, 9, 2), "1,9,2,")
	check("record 100,7,3000", fromIDs(100, 7, 3000), "100,3000,7,")
	vs := fromIDs(1, 2, 3)
	steps := []struct {
		what string
		next func(VoterSet) (VoterSet, bool)
		want string
	}{
		{"+9", func(s VoterSet) (VoterSet, bool) { return s.Add(node(9)) }, "1,9,2,3,"},
		{"+17", func(s VoterSet) (VoterSet, bool) { return s.Add(node(17)) }, "1,9,17,2,3,"},
		{"+5", func(s VoterSet) (VoterSet, bool) { return s.Add(node(5)) }, "1,9,17,2,3,5,"},
		{"-2", func(s VoterSet) (VoterSet, bool) { return s.Remove(ReplicaKey{ID: 2}) }, "1,17,3,5,9,"},
		{"update 9", func(s VoterSet) (VoterSet, bool) { return s.Update(node(9, "SSL", "CONTROLLER", "PLAINTEXT")) },
			"1,17,9(CONTROLLER SSL PLAINTEXT ),3,5,"},
		{"+33", func(s VoterSet) (VoterSet, bool) { return s.Add(node(33, "B", "A")) }, "1,17,9(CONTROLLER SSL PLAINTEXT ),33(A B ),3,5,"},
	}
	for _, st := range steps {
		var ok bool
		if vs, ok = st.next(vs); !ok {
			t.Fatalf("%s refused", st.what)
		}
		check("1,2,3 then "+st.what, vs, st.want)
	}
	static, err := staticVoterSet([]Voter{{ID: 3}, {ID: 2}, {ID: 4}, {ID: 20}})
	if err != nil {
		t.Fatal(err)
	}
	check("static 3,2,4,20", static, "2,3,4,20,")
}
