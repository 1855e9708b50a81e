package partitionchange

import (
	"slices"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/uuid"
)

// Kafka's reserved directory ids that are not real directories.
var (
	dirMigrating  = uuid.UUID{}
	dirUnassigned = uuid.UUID{15: 1}
	dirLost       = uuid.UUID{15: 2}
)

// IsActive reports whether broker may lead (ClusterControlManager.isActive):
// registered, unfenced and not in controlled shutdown.
func IsActive(im *image.Image, broker int32) bool {
	b, ok := im.Broker(broker)
	return ok && !b.Fenced && !b.InControlledShutdown
}

// DirOnline reports whether dir counts as online on broker b
// (DirectoryId.isOnline): MIGRATING and UNASSIGNED do, LOST does not, and a
// broker that registered no directories (from before directory assignment)
// is taken to have every directory online. A broker not registered (nil)
// has none.
func DirOnline(b *image.Broker, dir uuid.UUID) bool {
	switch {
	case b == nil:
		return false
	case dir == dirMigrating || dir == dirUnassigned:
		return true
	case dir == dirLost:
		return false
	case len(b.LogDirs) == 0:
		return true
	}
	return slices.Contains(b.LogDirs, dir)
}

// Acceptor is Kafka's LeaderAcceptor: a broker may lead p when acceptable
// says so and the directory holding its replica is online. A broker that is
// not one of p's replicas is refused (Kafka throws).
func Acceptor(im *image.Image, p Partition, acceptable func(int32) bool) func(int32) bool {
	return func(broker int32) bool {
		if !acceptable(broker) {
			return false
		}
		i := slices.Index(p.Replicas, broker)
		if i < 0 {
			return false
		}
		dir := dirMigrating
		if p.Directories != nil {
			dir = p.Directories[i]
		}
		b, _ := im.Broker(broker)
		return DirOnline(b, dir)
	}
}
