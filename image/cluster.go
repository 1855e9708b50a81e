package image

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Broker is a broker's registration (Kafka's BrokerRegistration). It is
// immutable: replay replaces it whole.
type Broker struct {
	ID            int32
	Epoch         int64
	IncarnationID uuid.UUID
	// Endpoints and Features are keyed by name as Kafka keeps them (a
	// record naming one twice keeps the last), sorted by name.
	Endpoints            []Endpoint
	Features             []FeatureRange
	Rack                 *string // nil: none
	Fenced               bool
	InControlledShutdown bool
	MigratingZkBroker    bool
	// LogDirs are the online log directories, sorted as Kafka sorts them.
	LogDirs []uuid.UUID
	// CordonedLogDirs are the cordoned ones as last reported, nil until the
	// broker reports any (the record's null).
	CordonedLogDirs []uuid.UUID
	// RegistrationOffset is the offset of the RegisterBrokerRecord (the
	// snapshot's last offset when it came from a snapshot), the controller's
	// catch-up threshold for the broker. It is not image content: snapshots
	// do not carry it and Diff ignores it.
	RegistrationOffset int64
}

// Controller is a controller's registration (Kafka's ControllerRegistration).
type Controller struct {
	ID               int32
	IncarnationID    uuid.UUID
	ZkMigrationReady bool
	Endpoints        []Endpoint     // by name, sorted
	Features         []FeatureRange // by name, sorted
}

// Endpoint is a listener a node advertises.
type Endpoint struct {
	Name, Host       string
	Port             uint16
	SecurityProtocol int16 // PLAINTEXT 0, SSL 1, SASL_PLAINTEXT 2, SASL_SSL 3
}

// FeatureRange is the range of a feature's levels a node supports.
type FeatureRange struct {
	Name     string
	Min, Max int16
}

// knownSecurityProtocol: Kafka's SecurityProtocol.forId knows 0 to 3, and
// replaying a registration that names another fails.
func knownSecurityProtocol(p int16) bool { return 0 <= p && p <= 3 }

// byName keeps the last element of each name, sorted by name: Kafka keys
// endpoints and features by name.
func byName[T any](in []T, name func(*T) string) []T {
	out := slices.Clone(in)
	if out == nil {
		out = []T{}
	}
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(name(&a), name(&b)) })
	kept := out[:0]
	for i := range out {
		if i+1 < len(out) && name(&out[i]) == name(&out[i+1]) {
			continue // a later one of the name follows
		}
		kept = append(kept, out[i])
	}
	return kept
}

func sortedDirs(dirs [][16]byte) []uuid.UUID {
	out := make([]uuid.UUID, len(dirs))
	for i, d := range dirs {
		out[i] = d
	}
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

func dirList(dirs [][16]byte) []uuid.UUID {
	if dirs == nil {
		return nil
	}
	out := make([]uuid.UUID, len(dirs))
	for i, d := range dirs {
		out[i] = d
	}
	return out
}

// uuids converts back to the records' form.
func uuids(in []uuid.UUID) [][16]byte {
	out := make([][16]byte, len(in))
	for i, u := range in {
		out[i] = u
	}
	return out
}

func (b *Builder) registerBroker(offset int64, r *metadata.RegisterBrokerRecord) error {
	eps := make([]Endpoint, len(r.EndPoints))
	for i, e := range r.EndPoints {
		if !knownSecurityProtocol(e.SecurityProtocol) {
			return fmt.Errorf("unknown security protocol %d in listener %q", e.SecurityProtocol, clip(e.Name))
		}
		eps[i] = Endpoint{e.Name, e.Host, e.Port, e.SecurityProtocol}
	}
	eps = byName(eps, func(e *Endpoint) string { return e.Name })
	if len(eps) > 0 && eps[0].Name == "" {
		return fmt.Errorf("broker listeners must be named")
	}
	feats := make([]FeatureRange, len(r.Features))
	for i, f := range r.Features {
		feats[i] = FeatureRange{f.Name, f.MinSupportedVersion, f.MaxSupportedVersion}
	}
	next := &Broker{
		ID: r.BrokerId, Epoch: r.BrokerEpoch, IncarnationID: r.IncarnationId,
		Endpoints: eps, Features: byName(feats, func(f *FeatureRange) string { return f.Name }),
		Rack: r.Rack, Fenced: r.Fenced, InControlledShutdown: r.InControlledShutdown,
		MigratingZkBroker: r.IsMigratingZkBroker, LogDirs: sortedDirs(r.LogDirs),
		CordonedLogDirs: dirList(r.CordonedLogDirs), RegistrationOffset: offset,
	}
	prev, _ := b.st.brokers.get(r.BrokerId)
	var prevDirs []uuid.UUID
	if prev != nil {
		prevDirs = prev.LogDirs
	}
	if err := b.checkDirs(r.BrokerId, prevDirs, next.LogDirs); err != nil {
		return err
	}
	b.putBroker(prev, next)
	return nil
}

func (b *Builder) unregisterBroker(r *metadata.UnregisterBrokerRecord) error {
	cur, err := b.brokerAt(r.BrokerId, r.BrokerEpoch)
	if err != nil {
		return err
	}
	if err := b.checkDirs(r.BrokerId, cur.LogDirs, nil); err != nil {
		return err
	}
	b.putBroker(cur, nil)
	return nil
}

// brokerAt returns the registration of id, which must have epoch.
func (b *Builder) brokerAt(brokerID int32, epoch int64) (*Broker, error) {
	cur, ok := b.st.brokers.get(brokerID)
	if !ok {
		return nil, fmt.Errorf("no broker registration found for broker %d", brokerID)
	}
	if cur.Epoch != epoch {
		return nil, fmt.Errorf("broker %d is registered with epoch %d, not %d", brokerID, cur.Epoch, epoch)
	}
	return cur, nil
}

// brokerChange is what a registration change record changes; nil fields
// stay.
type brokerChange struct {
	fenced, shutdown *bool
	dirs, cordoned   []uuid.UUID // nil: unchanged
	cordonedSet      bool        // cordoned present (it may be empty)
}

func (b *Builder) brokerRegistrationChange(r *metadata.BrokerRegistrationChangeRecord) error {
	var c brokerChange
	switch r.Fenced {
	case -1:
		c.fenced = ptr(false)
	case 0:
	case 1:
		c.fenced = ptr(true)
	default:
		return fmt.Errorf("unknown value %d for the fenced field", r.Fenced)
	}
	switch r.InControlledShutdown {
	case 0:
	case 1:
		c.shutdown = ptr(true)
	default:
		return fmt.Errorf("unknown value %d for the inControlledShutdown field", r.InControlledShutdown)
	}
	if len(r.LogDirs) > 0 { // null and [] both leave the directories as they are
		c.dirs = sortedDirs(r.LogDirs)
	}
	if r.CordonedLogDirs != nil {
		c.cordoned, c.cordonedSet = dirList(r.CordonedLogDirs), true
	}
	return b.changeBroker(r.BrokerId, r.BrokerEpoch, c)
}

// changeBroker applies a fence, unfence or registration change to the
// registration of id at epoch. A change that changes nothing is kept out of
// the image, as Kafka ignores it, but its directories are checked all the
// same (Kafka re-registers them on every change).
func (b *Builder) changeBroker(brokerID int32, epoch int64, c brokerChange) error {
	cur, err := b.brokerAt(brokerID, epoch)
	if err != nil {
		return err
	}
	next := *cur
	if c.fenced != nil {
		next.Fenced = *c.fenced
	}
	if c.shutdown != nil {
		next.InControlledShutdown = *c.shutdown
	}
	if c.dirs != nil {
		next.LogDirs = c.dirs
	}
	if c.cordonedSet {
		next.CordonedLogDirs = c.cordoned
	}
	if err := b.checkDirs(brokerID, cur.LogDirs, next.LogDirs); err != nil {
		return err
	}
	if next.Fenced == cur.Fenced && next.InControlledShutdown == cur.InControlledShutdown &&
		slices.Equal(next.LogDirs, cur.LogDirs) && dirsEqual(next.CordonedLogDirs, cur.CordonedLogDirs) {
		return nil
	}
	b.putBroker(cur, &next)
	return nil
}

// checkDirs checks a broker's log directories moving from prev to next as
// Kafka's ClusterControlManager.updateDirectories does: each of prev must be
// registered to the broker (a directory listed twice is released once, so
// the second release fails, as it does in Kafka), and none of next may be
// another broker's.
func (b *Builder) checkDirs(brokerID int32, prev, next []uuid.UUID) error {
	released := make(map[uuid.UUID]bool, len(prev))
	for _, d := range prev {
		if holder, ok := b.st.dirOwners.get(idKey(d)); !ok || holder != brokerID || released[d] {
			return fmt.Errorf("directory %v is not registered to broker %d", d, brokerID)
		}
		released[d] = true
	}
	for _, d := range next {
		if holder, ok := b.st.dirOwners.get(idKey(d)); ok && holder != brokerID && !released[d] {
			return fmt.Errorf("directory %v is already registered to broker %d", d, holder)
		}
	}
	return nil
}

// putBroker replaces prev (nil: none) with next (nil: none), moving their
// log directories in the directory index and the broker counts.
func (b *Builder) putBroker(prev, next *Broker) {
	if prev != nil {
		for _, d := range prev.LogDirs {
			b.st.dirOwners.delete(b.own, idKey(d))
		}
		b.countBroker(prev, -1)
	}
	if next == nil {
		b.st.brokers.delete(b.own, prev.ID)
		return
	}
	for _, d := range next.LogDirs {
		b.st.dirOwners.set(b.own, idKey(d), next.ID)
	}
	b.countBroker(next, 1)
	b.st.brokers.set(b.own, next.ID, next)
}

func (b *Builder) countBroker(br *Broker, delta int) {
	if br.Fenced {
		b.st.fenced += delta
	}
	if br.InControlledShutdown {
		b.st.shutting += delta
	}
}

func (b *Builder) registerController(r *metadata.RegisterControllerRecord) error {
	eps := make([]Endpoint, len(r.EndPoints))
	for i, e := range r.EndPoints {
		if !knownSecurityProtocol(e.SecurityProtocol) {
			return fmt.Errorf("unknown security protocol %d", e.SecurityProtocol)
		}
		eps[i] = Endpoint{e.Name, e.Host, e.Port, e.SecurityProtocol}
	}
	feats := make([]FeatureRange, len(r.Features))
	for i, f := range r.Features {
		feats[i] = FeatureRange{f.Name, f.MinSupportedVersion, f.MaxSupportedVersion}
	}
	b.st.controllers.set(b.own, r.ControllerId, &Controller{
		ID: r.ControllerId, IncarnationID: r.IncarnationId, ZkMigrationReady: r.ZkMigrationReady,
		Endpoints: byName(eps, func(e *Endpoint) string { return e.Name }),
		Features:  byName(feats, func(f *FeatureRange) string { return f.Name }),
	})
	return nil
}

// clip bounds what a hostile record can put in an error message.
func clip(s string) string {
	if len(s) > 128 {
		return s[:128] + "..."
	}
	return s
}

// dirsEqual compares two directory lists, null and empty apart.
func dirsEqual(a, b []uuid.UUID) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}
