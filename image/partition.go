package image

import (
	"encoding/binary"
	"slices"

	"github.com/kraftd/kraftd/uuid"
)

// Partition is one partition's registration (Kafka's PartitionRegistration).
// It is a value around one int32 slice that holds everything, so a partition
// costs one allocation and no pointers beyond it:
//
//	v[0] leader, v[1] leader epoch, v[2] partition epoch
//	v[3] bits 0-7 leader recovery state, bit 8 directories present,
//	     bit 9 wide lengths
//	narrow: v[4] the lengths of replicas, ISR, removing and adding, a byte
//	        each; v[5] those of the ELR and the last-known ELR
//	wide:   v[4..9] the six lengths, a word each
//	then the six lists back to back, then (when present) one directory id
//	per replica, four words each (big endian). Absent directories are all
//	MIGRATING (the zero id), the common case before directory assignment.
//
// A Partition is immutable: the slices its methods return alias it and must
// not be modified.
type Partition struct{ v []int32 }

const (
	pLeader = iota
	pLeaderEpoch
	pPartitionEpoch
	pMeta
	pLens

	metaDirs = 1 << 8
	metaWide = 1 << 9
)

// The lists, in storage order.
const (
	listReplicas = iota
	listISR
	listRemoving
	listAdding
	listELR
	listLastKnownELR
	numLists
)

// partitionFields is a partition spelled out, to build one from.
type partitionFields struct {
	lists                               [numLists][]int32
	dirs                                []uuid.UUID // nil or all MIGRATING: none stored
	leader, leaderEpoch, partitionEpoch int32
	lrs                                 int8
}

func makePartition(f *partitionFields) Partition {
	wide := false
	total := 0
	for _, l := range f.lists {
		wide = wide || len(l) > 0xff
		total += len(l)
	}
	dirs := f.dirs
	if allMigrating(dirs) {
		dirs = nil
	}
	head := pLens + 2
	if wide {
		head = pLens + numLists
	}
	v := make([]int32, head, head+total+4*len(dirs))
	v[pLeader], v[pLeaderEpoch], v[pPartitionEpoch] = f.leader, f.leaderEpoch, f.partitionEpoch
	meta := int32(uint8(f.lrs))
	if dirs != nil {
		meta |= metaDirs
	}
	if wide {
		meta |= metaWide
		for i, l := range f.lists {
			v[pLens+i] = int32(len(l))
		}
	} else {
		for i, l := range f.lists {
			v[pLens+i/4] |= int32(len(l)) << (8 * (i % 4))
		}
	}
	v[pMeta] = meta
	for _, l := range f.lists {
		v = append(v, l...)
	}
	for _, d := range dirs {
		for w := 0; w < 16; w += 4 {
			v = append(v, int32(binary.BigEndian.Uint32(d[w:])))
		}
	}
	return Partition{v}
}

func allMigrating(dirs []uuid.UUID) bool {
	for _, d := range dirs {
		if d != uuid.Zero {
			return false
		}
	}
	return true
}

// spell returns the partition's fields (the lists alias p).
func (p Partition) spell() *partitionFields {
	f := &partitionFields{
		leader: p.Leader(), leaderEpoch: p.LeaderEpoch(), partitionEpoch: p.PartitionEpoch(),
		lrs: p.LeaderRecoveryState(),
	}
	for i := range f.lists {
		f.lists[i] = p.list(i)
	}
	if p.v[pMeta]&metaDirs != 0 {
		f.dirs = p.Directories()
	}
	return f
}

// bounds returns where list i starts and ends in v.
func (p Partition) bounds(i int) (int, int) {
	start := pLens + 2
	length := func(j int) int { return int(uint8(p.v[pLens+j/4] >> (8 * (j % 4)))) }
	if p.v[pMeta]&metaWide != 0 {
		start = pLens + numLists
		length = func(j int) int { return int(p.v[pLens+j]) }
	}
	for j := 0; j < i; j++ {
		start += length(j)
	}
	return start, start + length(i)
}

func (p Partition) list(i int) []int32 {
	s, e := p.bounds(i)
	return p.v[s:e:e]
}

func (p Partition) Leader() int32         { return p.v[pLeader] }
func (p Partition) LeaderEpoch() int32    { return p.v[pLeaderEpoch] }
func (p Partition) PartitionEpoch() int32 { return p.v[pPartitionEpoch] }

// LeaderRecoveryState is 0 (recovered) or 1 (recovering after an unclean
// election).
func (p Partition) LeaderRecoveryState() int8 { return int8(uint8(p.v[pMeta])) }

// Replicas are in preferred order: the first is the preferred leader.
func (p Partition) Replicas() []int32         { return p.list(listReplicas) }
func (p Partition) ISR() []int32              { return p.list(listISR) }
func (p Partition) RemovingReplicas() []int32 { return p.list(listRemoving) }
func (p Partition) AddingReplicas() []int32   { return p.list(listAdding) }
func (p Partition) ELR() []int32              { return p.list(listELR) }
func (p Partition) LastKnownELR() []int32     { return p.list(listLastKnownELR) }

// Directories returns a new slice with each replica's log directory, in
// replica order (MIGRATING, the zero id, when none was assigned).
func (p Partition) Directories() []uuid.UUID {
	n := len(p.Replicas())
	out := make([]uuid.UUID, n)
	if p.v[pMeta]&metaDirs == 0 {
		return out
	}
	_, d := p.bounds(numLists - 1)
	for i := range out {
		for w := range 4 {
			binary.BigEndian.PutUint32(out[i][4*w:], uint32(p.v[d+4*i+w]))
		}
	}
	return out
}

// HasLeader: Kafka counts a partition whose leader is not -1 as online.
func (p Partition) HasLeader() bool { return p.Leader() != noLeader }

// PreferredReplica is the first replica, or -1 when there are none.
func (p Partition) PreferredReplica() int32 {
	if r := p.Replicas(); len(r) > 0 {
		return r[0]
	}
	return noLeader
}

// HasPreferredLeader reports whether the leader is the preferred replica.
func (p Partition) HasPreferredLeader() bool { return p.Leader() == p.PreferredReplica() }

// Equal compares every field. The encoding is canonical (the width and the
// directories' presence follow from the content), so equal partitions have
// equal words.
func (p Partition) Equal(o Partition) bool { return slices.Equal(p.v, o.v) }

// noLeader is Kafka's LeaderConstants.NO_LEADER; noLeaderChange (-2) in a
// PartitionChangeRecord leaves the leader as it is.
const (
	noLeader       int32 = -1
	noLeaderChange int32 = -2
)
