// Package placement places the replicas of new partitions on brokers as
// Kafka 4.4.0's StripedReplicaPlacer does: spread over racks first, then over
// brokers, leaders on unfenced brokers only, fenced brokers used only once
// the unfenced ones run out. Given the same brokers in the same order and a
// JavaRandom with the same seed as a JVM's java.util.Random, it returns the
// replica lists Kafka returns. It is deterministic: the random source is
// injected. See docs/design/controller-replication.md.
package placement

import (
	"fmt"
	"slices"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Broker is a broker replicas may go to (Kafka's UsableBroker): registered,
// not shutting down, with a log directory that is not cordoned. Fenced
// brokers take replicas only when the unfenced ones are too few, and never
// a leader.
type Broker struct {
	ID     int32
	Rack   *string // nil: no rack (a rack of its own, sorted first)
	Fenced bool
}

// Spec is what to place (Kafka's PlacementSpec). StartPartition is the first
// new partition's index; the striped placer does not use it.
type Spec struct {
	StartPartition int32
	NumPartitions  int32
	NumReplicas    int16
}

// Error is a placement refused, with the Kafka error code a controller
// answers with (INVALID_REPLICATION_FACTOR) and Kafka's message.
type Error struct {
	Code    int16
	Message string
}

func (e *Error) Error() string { return e.Message }

// Unwrap lets errors.Is match the kerr error of the code.
func (e *Error) Unwrap() error { return kerr.ErrorForCode(e.Code) }

func invalidRF(format string, args ...any) *Error {
	return &Error{Code: kerr.InvalidReplicationFactor.Code, Message: fmt.Sprintf(format, args...)}
}

// Kafka 4.4.0's messages (StripedReplicaPlacer). The cordoned-directory
// wording is new in 4.3.
func errNonPositive(rf int) *Error {
	return invalidRF("Invalid replication factor %d: the replication factor must be positive.", rf)
}

var errAllFenced = invalidRF("All brokers are currently fenced, or have all their log directories cordoned.")

func errTooFew(rf, total int) *Error {
	return invalidRF("The target replication factor of %d cannot be reached because only %d broker(s) "+
		"are registered or some brokers have all their log directories cordoned.", rf, total)
}

// CreateTopicsMessage is the message CreateTopics and CreatePartitions answer
// a placement error with (ReplicationControlManager prefixes the placer's).
func CreateTopicsMessage(rf int16, err *Error) string {
	return fmt.Sprintf("Unable to replicate the partition %d time(s): %s", rf, err.Message)
}

// NoActiveReplicasMessage is CreateTopics' message when a placed partition
// has no active replica to start its ISR with.
func NoActiveReplicasMessage(rf int16) string {
	return fmt.Sprintf("Unable to replicate the partition %d time(s): All brokers are currently fenced or in controlled shutdown.", rf)
}

// Place returns the replica lists of spec.NumPartitions partitions, the
// leader first, drawing from rnd as Kafka's placer draws from its Random.
// brokers are taken in the order given, which matters (with the random
// draws) only to rack names whose hashes collide; Kafka iterates its broker
// heartbeat map. A refusal is an *Error.
func Place(spec Spec, brokers []Broker, rnd Random) ([][]int32, error) {
	racks := newRackList(brokers, rnd)
	rf := int(spec.NumReplicas)
	switch {
	case rf <= 0:
		return nil, errNonPositive(rf)
	case racks.unfenced == 0:
		return nil, errAllFenced
	case rf > racks.total:
		return nil, errTooFew(rf, racks.total)
	}
	// The caller bounds the count (CreateTopics' 10,000 partitions a
	// request); the capacity is bounded here too.
	out := make([][]int32, 0, min(max(spec.NumPartitions, 0), 1024))
	for range spec.NumPartitions {
		out = append(out, racks.place(rf))
	}
	return out, nil
}

// brokerList is a rack's brokers of one kind, taken round-robin from a
// rotating start. Each partition is an iteration epoch: a list hands out
// each broker at most once per epoch, and a new epoch moves its start on.
type brokerList struct {
	ids    []int32
	taken  int // brokers handed out in this epoch
	offset int // where this epoch's round starts
	epoch  int
}

func (l *brokerList) initialize(rnd Random) {
	if len(l.ids) > 0 {
		slices.Sort(l.ids)
		l.offset = int(rnd.NextInt(int32(len(l.ids))))
	}
}

// next hands out the next broker of the epoch, or -1 when all were.
func (l *brokerList) next(epoch int) int32 {
	if len(l.ids) == 0 {
		return -1
	}
	if l.epoch != epoch {
		l.epoch, l.taken = epoch, 0
		l.offset = (l.offset + 1) % len(l.ids)
	}
	if l.taken >= len(l.ids) {
		return -1
	}
	id := l.ids[(l.taken+l.offset)%len(l.ids)]
	l.taken++
	return id
}

type rack struct{ unfenced, fenced brokerList }

// next prefers an unfenced broker.
func (r *rack) next(epoch int) int32 {
	if id := r.unfenced.next(epoch); id >= 0 {
		return id
	}
	return r.fenced.next(epoch)
}

// rackKey names a rack; hasName false is the no-rack group.
type rackKey struct {
	name    string
	hasName bool
}

func (k rackKey) hash() int32 {
	if !k.hasName {
		return 0 // Optional.empty().hashCode()
	}
	return jvmorder.StringHash(k.name)
}

type rackList struct {
	rnd      Random
	racks    map[rackKey]*rack
	byHash   []rackKey // the racks in the JVM's HashMap order
	names    []rackKey // sorted: no rack first, then by name
	total    int
	unfenced int
	epoch    int
	offset   int
}

func newRackList(brokers []Broker, rnd Random) *rackList {
	rl := &rackList{rnd: rnd, racks: make(map[rackKey]*rack)}
	order := jvmorder.NewHashMap[rackKey]()
	for _, b := range brokers {
		k := rackKey{}
		if b.Rack != nil {
			k = rackKey{*b.Rack, true}
		}
		r := rl.racks[k]
		if r == nil {
			r = &rack{}
			rl.racks[k] = r
			rl.names = append(rl.names, k)
			order.Put(k, k.hash())
		}
		if b.Fenced {
			r.fenced.ids = append(r.fenced.ids, b.ID)
		} else {
			r.unfenced.ids = append(r.unfenced.ids, b.ID)
			rl.unfenced++
		}
		rl.total++
	}
	// The draws happen in the JVM's map order, fenced before unfenced.
	rl.byHash = order.Keys()
	for _, k := range rl.byHash {
		r := rl.racks[k]
		r.fenced.initialize(rnd)
		r.unfenced.initialize(rnd)
	}
	slices.SortStableFunc(rl.names, compareRacks)
	if len(rl.names) > 0 {
		rl.offset = int(rnd.NextInt(int32(len(rl.names))))
	}
	return rl
}

// compareRacks is Kafka's OptionalStringComparator: no rack first, then
// String.compareTo.
func compareRacks(a, b rackKey) int {
	switch {
	case !a.hasName && !b.hasName:
		return 0
	case !a.hasName:
		return -1
	case !b.hasName:
		return 1
	}
	return jvmorder.CompareStrings(a.name, b.name)
}

// place picks one partition's replicas. The leader is the first unfenced
// broker found going round the racks from the current offset; the followers
// go round the racks from the same offset, skipping the leader's rack the
// first time by. Callers checked rf against the broker counts, so the loops
// end.
func (rl *rackList) place(rf int) []int32 {
	// After as many partitions as there are unfenced brokers, reshuffle so
	// the same assignments do not repeat (not with one: it would never end).
	if rl.epoch == rl.unfenced && rl.unfenced > 1 {
		rl.shuffle()
		rl.epoch = 0
	}
	if rl.offset == len(rl.names) {
		rl.offset = 0
	}
	replicas := make([]int32, 0, rf)
	first := rl.offset
	for {
		if id := rl.racks[rl.names[first]].unfenced.next(rl.epoch); id >= 0 {
			replicas = append(replicas, id)
			break
		}
		first = (first + 1) % len(rl.names)
	}
	at := rl.offset
	for len(replicas) < rf {
		id := int32(-1)
		if at == first {
			first = -1 // skip the leader's rack once
		} else {
			id = rl.racks[rl.names[at]].next(rl.epoch)
		}
		at = (at + 1) % len(rl.names)
		if id >= 0 {
			replicas = append(replicas, id)
		}
	}
	rl.epoch++
	rl.offset++
	return replicas
}

// shuffle reorders the rack names, then each rack's lists (fenced first) in
// the JVM's map order.
func (rl *rackList) shuffle() {
	shuffle(rl.names, rl.rnd)
	for _, k := range rl.byHash {
		r := rl.racks[k]
		shuffle(r.fenced.ids, rl.rnd)
		shuffle(r.unfenced.ids, rl.rnd)
	}
}
