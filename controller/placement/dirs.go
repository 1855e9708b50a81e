package placement

import (
	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/uuid"
)

// Kafka's reserved directory ids (DirectoryId).
var (
	// DirMigrating: the replica's directory is not known (a broker from
	// before directory assignment).
	DirMigrating = uuid.UUID{}
	// DirUnassigned: the broker has several directories and has not said
	// which holds the replica yet.
	DirUnassigned = uuid.UUID{15: 1}
	// DirLost: the directory went offline and nothing else is known.
	DirLost = uuid.UUID{15: 2}
)

// DefaultDir is the directory a new replica on broker b starts in
// (ClusterControlManager.defaultDir): its only log directory; UNASSIGNED
// when it has several (the broker picks one and tells the controller) or is
// not registered (b nil); MIGRATING when it registered none.
func DefaultDir(b *image.Broker) uuid.UUID {
	switch {
	case b == nil:
		return DirUnassigned
	case len(b.LogDirs) == 0:
		return DirMigrating
	case len(b.LogDirs) == 1:
		return b.LogDirs[0]
	}
	return DirUnassigned
}

// DefaultDirs returns, for each replica, its DefaultDir on the brokers of
// im (Kafka's PartitionAssignment directories).
func DefaultDirs(im *image.Image, replicas []int32) []uuid.UUID {
	out := make([]uuid.UUID, len(replicas))
	for i, r := range replicas {
		b, _ := im.Broker(r)
		out[i] = DefaultDir(b)
	}
	return out
}

// HasUncordonedDir reports whether b may take new replicas
// (BrokerRegistration.hasUncordonedDirs): it registered no directories, has
// never reported cordoned ones, or has a directory that is not cordoned.
func HasUncordonedDir(b *image.Broker) bool {
	if len(b.LogDirs) == 0 || b.CordonedLogDirs == nil {
		return true
	}
	for _, d := range b.LogDirs {
		cordoned := false
		for _, c := range b.CordonedLogDirs {
			if c == d {
				cordoned = true
				break
			}
		}
		if !cordoned {
			return true
		}
	}
	return false
}

// UsableBrokers lists the brokers of im that may take new replicas, as
// Kafka's ClusterControlManager.usableBrokers does: every registered broker
// that is not shutting down and has a log directory that is not cordoned,
// fenced ones flagged. shuttingDown says which brokers are in controlled
// shutdown (Kafka asks its heartbeat tracker); nil uses the registrations'
// InControlledShutdown.
//
// The order is the one Kafka's heartbeat manager, a HashMap<Integer>, gives
// when the brokers were added in id order: by id modulo the table size, then
// by id. It matters only for rack names whose hashes collide (the order in
// which racks draw their offsets); Kafka's own follows the order in which
// the brokers registered or its controller took over.
func UsableBrokers(im *image.Image, shuttingDown func(*image.Broker) bool) []Broker {
	if shuttingDown == nil {
		shuttingDown = func(b *image.Broker) bool { return b.InControlledShutdown }
	}
	byID := map[int32]*image.Broker{}
	order := jvmorder.NewHashMap[int32]()
	for b := range im.Brokers() { // in id order
		byID[b.ID] = b
		order.Put(b.ID, b.ID)
	}
	var out []Broker
	for _, id := range order.Keys() {
		b := byID[id]
		if shuttingDown(b) || !HasUncordonedDir(b) {
			continue
		}
		out = append(out, Broker{ID: b.ID, Rack: b.Rack, Fenced: b.Fenced})
	}
	return out
}
