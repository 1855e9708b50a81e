package raft

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftd/kraftd/internal/javamap"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft/quorum"
)

// ReplicaKey names a replica: its node id and, when known, its directory id.
// The zero directory id means "none" (Kafka's ReplicaKey.NO_DIRECTORY_ID):
// static voters and old request versions carry none.
type ReplicaKey struct {
	ID          NodeID
	DirectoryID [16]byte
}

// HasDirectory reports whether the key carries a directory id.
func (k ReplicaKey) HasDirectory() bool { return k.DirectoryID != [16]byte{} }

func (k ReplicaKey) String() string {
	if !k.HasDirectory() {
		return fmt.Sprintf("%d", k.ID)
	}
	return fmt.Sprintf("%d:%x", k.ID, k.DirectoryID)
}

// VersionRange is a supported feature-level range (inclusive).
type VersionRange struct{ Min, Max int16 }

// Supported kraft.version levels: kraftd reads and writes both.
var kraftVersionsSupported = VersionRange{Min: 0, Max: 1}

// VoterNode is one member of a voter set.
type VoterNode struct {
	Key ReplicaKey
	// Endpoints are the voter's controller listeners, by upper-cased name.
	Endpoints []Endpoint
	// KRaftVersions is the kraft.version range the voter supports (0-0 for
	// a static voter, which never said).
	KRaftVersions VersionRange
}

// isVoter is Kafka's matching rule: same id, and the same directory id when
// the voter records one (a voter without one matches any directory).
func (n *VoterNode) isVoter(k ReplicaKey) bool {
	return n.Key.ID == k.ID && (!n.Key.HasDirectory() || n.Key.DirectoryID == k.DirectoryID)
}

// normalized is n with its own copy of its endpoints, one per name (a
// repeated name keeps its first place and its last address, as a map put
// does) in the order Kafka's Endpoints, a HashMap sized for them, iterates
// them: the order Kafka writes them in a Voters record and describes them.
func (n VoterNode) normalized() VoterNode {
	at := map[string]int{}
	var eps []Endpoint
	for _, e := range n.Endpoints {
		if i, ok := at[e.Name]; ok {
			eps[i] = e
			continue
		}
		at[e.Name] = len(eps)
		eps = append(eps, e)
	}
	n.Endpoints = javamap.Order(eps, func(e Endpoint) int32 { return javamap.StringHash(e.Name) },
		javamap.PresizedCapacity(len(n.Endpoints), len(eps)))
	return n
}

// equal compares two voters; endpoints as sets, as Kafka's Endpoints.equals
// compares maps.
func (n *VoterNode) equal(o *VoterNode) bool {
	byName := func(a, b Endpoint) int { return strings.Compare(a.Name, b.Name) }
	return n.Key == o.Key && n.KRaftVersions == o.KRaftVersions &&
		slices.Equal(slices.SortedFunc(slices.Values(n.Endpoints), byName), slices.SortedFunc(slices.Values(o.Endpoints), byName))
}

// endpoint is the voter's listener named name.
func (n *VoterNode) endpoint(name string) (Endpoint, bool) {
	for _, e := range n.Endpoints {
		if e.Name == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// VoterSet is an immutable set of voters sorted by id. Methods that change
// it return a new set; the zero value is the empty set.
//
// It also remembers the order Kafka's VoterSet, a HashMap of ids, would
// iterate the same voters after the same history (built from a record, then
// copied and changed one voter at a time), so that the Voters records
// kraftd writes are Kafka's bytes whatever the ids.
type VoterSet struct {
	voters []VoterNode
	java   javaOrder
}

// javaOrder is a HashMap<Integer, _>'s iteration order and table size.
type javaOrder struct {
	ids      []NodeID
	capacity int
}

func nodeHash(id NodeID) int32 { return javamap.IntHash(int32(id)) }

// put is the order after new HashMap(this) and then a put of each id in
// added (a new key goes last in its bucket; an existing one keeps its place).
func (o javaOrder) put(added ...NodeID) javaOrder {
	c := javamap.CopyCapacity(len(o.ids))
	ids := javamap.Order(o.ids, nodeHash, c)
	for _, id := range added {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	c = javamap.Grow(c, len(ids))
	return javaOrder{ids: javamap.Order(ids, nodeHash, c), capacity: c}
}

// remove is the order after new HashMap(this) and then a remove of id.
func (o javaOrder) remove(id NodeID) javaOrder {
	c := javamap.CopyCapacity(len(o.ids))
	ids := slices.DeleteFunc(javamap.Order(o.ids, nodeHash, c), func(x NodeID) bool { return x == id })
	return javaOrder{ids: ids, capacity: c}
}

// NewVoterSet builds a set from nodes (any order). Ids must be >= 0 and
// distinct. The Java order is that of VoterSet.fromVotersRecord for a
// record listing nodes in the given order.
func NewVoterSet(nodes []VoterNode) (VoterSet, error) {
	vs := make([]VoterNode, len(nodes))
	order := make([]NodeID, len(nodes))
	for i, n := range nodes {
		if n.Key.ID < 0 {
			return VoterSet{}, fmt.Errorf("voter id %d is negative", n.Key.ID)
		}
		vs[i] = n.normalized()
		order[i] = n.Key.ID
	}
	slices.SortFunc(vs, func(a, b VoterNode) int { return int(a.Key.ID) - int(b.Key.ID) })
	for i := 1; i < len(vs); i++ {
		if vs[i].Key.ID == vs[i-1].Key.ID {
			return VoterSet{}, fmt.Errorf("voter id %d listed twice", vs[i].Key.ID)
		}
	}
	c := javamap.PresizedCapacity(len(order), len(order))
	return VoterSet{voters: vs, java: javaOrder{ids: javamap.Order(order, nodeHash, c), capacity: c}}, nil
}

// staticVoterSet is the set controller.quorum.voters describes (kraft.version
// 0): ids with their configured address, directory ids as configured (none).
func staticVoterSet(voters []Voter) (VoterSet, error) {
	nodes := make([]VoterNode, len(voters))
	for i, v := range voters {
		nodes[i] = VoterNode{Key: ReplicaKey{ID: NodeID(v.ID), DirectoryID: v.DirectoryID}, Endpoints: v.Endpoints}
	}
	vs, err := NewVoterSet(nodes)
	// Kafka parses the config into a HashMap sized for it (NewVoterSet's
	// order) and collects that into a default HashMap.
	c := javamap.GrownCapacity(len(nodes))
	vs.java = javaOrder{ids: javamap.Order(vs.java.ids, nodeHash, c), capacity: c}
	return vs, err
}

// voterSetFromRecord decodes a VotersRecord. Listener names are upper-cased,
// as Kafka's ListenerName normalises them.
func voterSetFromRecord(r *protocol.VotersRecord) (VoterSet, error) {
	nodes := make([]VoterNode, len(r.Voters))
	for i, v := range r.Voters {
		n := VoterNode{
			Key:           ReplicaKey{ID: NodeID(v.VoterID), DirectoryID: v.VoterDirectoryID},
			KRaftVersions: VersionRange{Min: v.MinSupportedVersion, Max: v.MaxSupportedVersion},
		}
		for _, e := range v.Endpoints {
			n.Endpoints = append(n.Endpoints, Endpoint{Name: strings.ToUpper(e.Name), Host: e.Host, Port: int32(e.Port)})
		}
		nodes[i] = n
	}
	return NewVoterSet(nodes)
}

// Record encodes the set as a VotersRecord v0, voters and their endpoints
// in Kafka's order.
func (s VoterSet) Record() protocol.VotersRecord {
	r := protocol.VotersRecord{Voters: make([]protocol.VotersRecordVoter, 0, len(s.voters))}
	for _, id := range s.java.ids {
		v, _ := s.Voter(id)
		rv := protocol.VotersRecordVoter{
			VoterID:             int32(v.Key.ID),
			VoterDirectoryID:    v.Key.DirectoryID,
			MinSupportedVersion: v.KRaftVersions.Min,
			MaxSupportedVersion: v.KRaftVersions.Max,
		}
		for _, e := range v.Endpoints {
			rv.Endpoints = append(rv.Endpoints, protocol.VotersRecordEndpoint{Name: e.Name, Host: e.Host, Port: uint16(e.Port)})
		}
		r.Voters = append(r.Voters, rv)
	}
	return r
}

// Len is the number of voters.
func (s VoterSet) Len() int { return len(s.voters) }

// Majority is how many voters make a majority of the set.
func (s VoterSet) Majority() int { return quorum.Majority(len(s.voters)) }

// Nodes returns the voters in id order (do not modify).
func (s VoterSet) Nodes() []VoterNode { return s.voters }

// IDs returns the voter ids in order.
func (s VoterSet) IDs() []int32 {
	ids := make([]int32, len(s.voters))
	for i, v := range s.voters {
		ids[i] = int32(v.Key.ID)
	}
	return ids
}

// Voter returns the voter with id.
func (s VoterSet) Voter(id NodeID) (VoterNode, bool) {
	i, ok := slices.BinarySearchFunc(s.voters, id, func(v VoterNode, id NodeID) int { return int(v.Key.ID) - int(id) })
	if !ok {
		return VoterNode{}, false
	}
	return s.voters[i], true
}

// ContainsID reports whether some voter has id (whatever its directory).
func (s VoterSet) ContainsID(id NodeID) bool {
	_, ok := s.Voter(id)
	return ok
}

// Contains reports whether k is a voter by Kafka's rule (VoterNode.isVoter).
func (s VoterSet) Contains(k ReplicaKey) bool {
	v, ok := s.Voter(k.ID)
	return ok && v.isVoter(k)
}

// IsOnlyVoter reports whether k is the set's single voter.
func (s VoterSet) IsOnlyVoter(k ReplicaKey) bool { return len(s.voters) == 1 && s.Contains(k) }

// Endpoint is voter id's listener named listener.
func (s VoterSet) Endpoint(id NodeID, listener string) (Endpoint, bool) {
	v, ok := s.Voter(id)
	if !ok {
		return Endpoint{}, false
	}
	return v.endpoint(listener)
}

// Add returns the set with n added; false when its id is already a voter.
func (s VoterSet) Add(n VoterNode) (VoterSet, bool) {
	if s.ContainsID(n.Key.ID) {
		return s, false
	}
	out, err := NewVoterSet(append(slices.Clone(s.voters), n))
	if err != nil {
		return s, false
	}
	out.java = s.java.put(n.Key.ID)
	return out, true
}

// Remove returns the set without k; false when k is not exactly a voter's
// key or is the last voter.
func (s VoterSet) Remove(k ReplicaKey) (VoterSet, bool) {
	v, ok := s.Voter(k.ID)
	if !ok || v.Key != k || len(s.voters) <= 1 {
		return s, false
	}
	voters := slices.DeleteFunc(slices.Clone(s.voters), func(v VoterNode) bool { return v.Key.ID == k.ID })
	return VoterSet{voters: voters, java: s.java.remove(k.ID)}, true
}

// Update returns the set with the voter matching n.Key replaced by n; false
// when n.Key is not a voter.
func (s VoterSet) Update(n VoterNode) (VoterSet, bool) {
	if !s.Contains(n.Key) {
		return s, false
	}
	out := slices.Clone(s.voters)
	for i := range out {
		if out[i].Key.ID == n.Key.ID {
			out[i] = n.normalized()
		}
	}
	return VoterSet{voters: out, java: s.java.put(n.Key.ID)}, true
}

// NeedsUpdate reports whether n names a voter of the set whose recorded
// endpoints or kraft.version range differ from n's.
func (s VoterSet) NeedsUpdate(n VoterNode) bool {
	v, ok := s.Voter(n.Key.ID)
	if !ok || !v.isVoter(n.Key) {
		return false
	}
	n = n.normalized()
	return !v.equal(&n)
}

// OverlappingMajority is Kafka's check that two consecutive voter sets
// differ by at most one added and at most one removed replica key, so any
// majority of one intersects any majority of the other.
func (s VoterSet) OverlappingMajority(o VoterSet) bool {
	return keysMissing(s, o) <= 1 && keysMissing(o, s) <= 1
}

// keysMissing counts the voter keys of a not in b.
func keysMissing(a, b VoterSet) int {
	n := 0
	for _, v := range a.voters {
		if w, ok := b.Voter(v.Key.ID); !ok || w.Key != v.Key {
			n++
		}
	}
	return n
}

// Equal reports whether two sets hold the same voters.
func (s VoterSet) Equal(o VoterSet) bool {
	return slices.EqualFunc(s.voters, o.voters, func(a, b VoterNode) bool { return a.equal(&b) })
}

func (s VoterSet) String() string {
	parts := make([]string, len(s.voters))
	for i, v := range s.voters {
		parts[i] = v.Key.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}
