package cluster

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// State is where a broker stands in the heartbeat state machine (Kafka's
// BrokerControlState).
type State int8

const (
	Fenced State = iota
	Unfenced
	ControlledShutdown
	ShutdownNow
)

func (s State) String() string {
	switch s {
	case Fenced:
		return "FENCED"
	case Unfenced:
		return "UNFENCED"
	case ControlledShutdown:
		return "CONTROLLED_SHUTDOWN"
	case ShutdownNow:
		return "SHUTDOWN_NOW"
	}
	return "State(?)"
}

// fenced is what the broker is told (IsFenced): FENCED and SHUTDOWN_NOW.
func (s State) fenced() bool { return s == Fenced || s == ShutdownNow }

// session is a broker's heartbeat state (BrokerHeartbeatState).
type session struct {
	fenced bool
	// metadataOffset is the last metadata offset the broker reported, -1
	// before it reported one.
	metadataOffset int64
	// shutdownOffset is the end offset of the heartbeat that put the broker
	// in controlled shutdown, -1 when it is not shutting down.
	shutdownOffset int64
}

func (s *session) shuttingDown() bool { return s.shutdownOffset >= 0 }

// active: unfenced and not shutting down (Kafka's "active" set, which
// decides when a shutting-down broker may go).
func (s *session) active() bool { return !s.fenced && !s.shuttingDown() }

// contactKey is a tracker entry: a broker id with the epoch it heartbeated
// at (BrokerIdAndEpoch).
type contactKey struct {
	id    int32
	epoch int64
}

// Manager is the active controller's broker lifecycle state that is not in
// the image: the heartbeat sessions and the last contact of each (id,
// epoch). It lives while the controller is active: Activate builds it, and a
// controller that stops being active drops it. It is not safe for
// concurrent use; the controller's event loop owns it.
type Manager struct {
	settings Settings
	sessions map[int32]*session
	contacts contacts
}

// Activate builds the lifecycle state of a newly active controller
// (ClusterControlManager.activate): a session for each registered broker
// with its fenced flag, and for each unfenced broker a contact at now, so
// that a broker that never heartbeats again is fenced one session timeout
// later.
func Activate(s Settings, im *image.Image, now time.Duration) *Manager {
	m := &Manager{settings: s, sessions: map[int32]*session{}}
	for b := range im.Brokers() { // Kafka's order is its registration map's
		m.register(b.ID, b.Fenced)
		if !b.Fenced {
			m.contacts.put(contactKey{b.ID, b.Epoch}, now)
		}
	}
	return m
}

// Settings returns the settings the manager was built with.
func (m *Manager) Settings() Settings { return m.settings }

// TrackHeartbeat records contact from broker id at epoch. The controller
// calls it when a heartbeat arrives, before the heartbeat waits for its turn
// (Kafka does it outside its event queue), whatever the epoch: a wrong
// epoch's entry expires on its own later.
func (m *Manager) TrackHeartbeat(id int32, epoch int64, now time.Duration) {
	m.contacts.put(contactKey{id, epoch}, now)
}

// expired is BrokerHeartbeatTracker.isExpired.
func (m *Manager) expired(contact, now time.Duration) bool {
	return now > contact && contact+m.settings.SessionTimeout < now
}

func (m *Manager) hasValidSession(id int32, epoch int64, now time.Duration) bool {
	c, ok := m.contacts.get(contactKey{id, epoch})
	return ok && !m.expired(c, now)
}

// ExpireSession takes the first expired entry out of the tracker, in the
// order of Kafka's map, and returns it: one step of the stale-broker task,
// which FenceStaleBroker goes on with.
func (m *Manager) ExpireSession(now time.Duration) (id int32, epoch int64, ok bool) {
	e, ok := m.contacts.firstWhere(func(e contactEntry) bool { return m.expired(e.at, now) })
	if !ok {
		return 0, 0, false
	}
	m.contacts.remove(e.key)
	return e.key.id, e.key.epoch, true
}

// register is BrokerHeartbeatManager.register: a new session, or for a
// known broker a touch that keeps its metadata offset only when the fenced
// flag changes (Kafka resets it to -1 otherwise).
func (m *Manager) register(id int32, fenced bool) {
	s, ok := m.sessions[id]
	offset := int64(-1)
	if !ok {
		s = &session{fenced: fenced, metadataOffset: -1, shutdownOffset: -1}
		m.sessions[id] = s
	} else if s.fenced != fenced {
		offset = s.metadataOffset
	}
	m.touch(id, fenced, offset)
}

// touch is BrokerHeartbeatManager.touch: a fenced broker is no longer
// shutting down.
func (m *Manager) touch(id int32, fenced bool, metadataOffset int64) {
	s := m.sessions[id]
	if s == nil {
		return
	}
	s.fenced, s.metadataOffset = fenced, metadataOffset
	if fenced {
		s.shutdownOffset = -1
	}
}

func (m *Manager) fence(id int32) {
	if s := m.sessions[id]; s != nil {
		s.fenced = true
	}
}

func (m *Manager) remove(id int32) { delete(m.sessions, id) }

// Replayed keeps the sessions in step with a record the controller has just
// replayed into its working image (after), as Kafka's ClusterControlManager
// replay does while active: a registration starts a new session, an
// unregistration ends it, and a registration change registers the broker
// again with its fenced flag, which resets its reported metadata offset to
// -1 unless the flag changed. The controller calls it for every record it
// replays while active, its own included.
func (m *Manager) Replayed(rec metadata.Record, after *image.Image) {
	switch r := rec.(type) {
	case *metadata.RegisterBrokerRecord:
		m.remove(r.BrokerId)
		m.register(r.BrokerId, r.Fenced)
	case *metadata.UnregisterBrokerRecord:
		m.remove(r.BrokerId)
	case *metadata.BrokerRegistrationChangeRecord:
		if b, ok := after.Broker(r.BrokerId); ok {
			m.register(r.BrokerId, b.Fenced)
		}
	}
}

// lowestActiveOffset is the lowest metadata offset among active brokers,
// MaxInt64 without one.
func (m *Manager) lowestActiveOffset() int64 {
	low := int64(math.MaxInt64)
	for _, s := range m.sessions {
		if s.active() {
			low = min(low, s.metadataOffset)
		}
	}
	return low
}

// current is the broker's state as the heartbeat manager sees it
// (currentBrokerState): shutting down first, so a broker fenced by session
// expiry in the middle of a controlled shutdown still reads as shutting
// down. A broker without a session is FENCED, where Kafka throws.
func (m *Manager) current(id int32) State {
	s := m.sessions[id]
	switch {
	case s == nil:
		return Fenced
	case s.shuttingDown():
		return ControlledShutdown
	case s.fenced:
		return Fenced
	}
	return Unfenced
}

// next is BrokerHeartbeatManager.calculateNextBrokerState.
func (m *Manager) next(id int32, cur State, wantFence, wantShutdown bool, offset, registrationOffset int64, leads func() bool) State {
	switch cur {
	case Fenced:
		switch {
		case wantShutdown:
			return ShutdownNow
		case !wantFence && offset >= registrationOffset:
			return Unfenced
		}
		return Fenced
	case Unfenced:
		switch {
		case wantFence && wantShutdown:
			return ShutdownNow
		case wantFence:
			return Fenced
		case wantShutdown && leads():
			return ControlledShutdown
		case wantShutdown:
			return ShutdownNow
		}
		return Unfenced
	case ControlledShutdown:
		if leads() {
			return ControlledShutdown
		}
		if m.sessions[id].shutdownOffset <= m.lowestActiveOffset() {
			return ShutdownNow
		}
		return ControlledShutdown
	}
	return ShutdownNow
}

// ShuttingDown reports whether broker b is in controlled shutdown as the
// sessions see it, which is what Kafka's placement asks
// (placement.UsableBrokers' shuttingDown).
func (m *Manager) ShuttingDown(b *image.Broker) bool {
	s := m.sessions[b.ID]
	return s != nil && s.shuttingDown()
}

// SessionState describes one broker's session, for inspection and tests.
type SessionState struct {
	ID             int32
	State          State
	MetadataOffset int64
	ShutdownOffset int64 // -1: not shutting down
}

// Sessions lists the brokers' sessions by id.
func (m *Manager) Sessions() []SessionState {
	out := make([]SessionState, 0, len(m.sessions))
	for id, s := range m.sessions {
		out = append(out, SessionState{id, m.current(id), s.metadataOffset, s.shutdownOffset})
	}
	slices.SortFunc(out, func(a, b SessionState) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
