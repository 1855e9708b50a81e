package raft

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/logging"
	"github.com/kraftd/kraftd/purgatory"
)

// Driver runs one raft replica: the role state machine, the request manager,
// the fetch purgatory, the append accumulator and the listeners. It is not
// safe for concurrent use: exactly one goroutine calls it. It starts no
// goroutines, reads no clock and uses only the rng it is given.
//
// A round is one call of Step, Poll, FlushDone or Append. Every round ends
// with endRound: the leader's fsync (or its hand-off) of what it appended,
// high-watermark and purgatory updates, then listener delivery. Step and
// Append also run the role's timers and sends; call Poll afterwards to
// learn the next deadline.
type Driver struct {
	cfg   Config
	log   Log
	store QuorumStateStore
	tr    Transport
	rng   *rand.Rand
	lg    *zap.Logger
	// remoteLg (rate-limited, logging.Remote) is for lines a peer's input
	// causes: refused requests and responses, bad records. lg stays
	// unsampled for local events.
	remoteLg *zap.Logger

	// kraft is the voter set and kraft.version history of the log;
	// voters is its latest set (committed or not), the one in force.
	kraft   kraftState
	voters  VoterSet
	isVoter bool // the latest voter set contains this node's key

	// Quorum state. Invariant: what the store holds matches these fields
	// for every role except Prospective and Resigned (memory only).
	epoch    Epoch
	leaderID NodeID // -1 when unknown
	votedID  NodeID // -1 when no vote in this epoch
	votedDir [16]byte
	// hw is the high watermark, -1 while unknown. Invariant: never
	// decreases while known; on a follower hw <= log end offset.
	hw int64

	// state is the current role (role.go): its state, timers included,
	// and its decisions. nil only until NewDriver has chosen one.
	state   roleState
	retries int // elections since a leader was last known (Candidate backoff)
	// refusedAt is when a refusing leader last shortened the fetch timer
	// (leaderUnreachable): at most once per fetch timeout, so a leader alive
	// for the others but refusing this node costs no more elections than a
	// silent one.
	refusedAt time.Time

	// badRecordsReported is the leader and epoch whose refused records were
	// last logged (once each: the leader resends them after every backoff).
	badRecordsReported LeaderAndEpoch
	// maxEpochReported: that the epoch cannot grow past MaxEpoch was logged.
	maxEpochReported bool

	// preferred are the nodes that can lead the state machine
	// (SetPreferredLeaders); noPreferredReported is the epoch in which a
	// deferring leader last logged that none of them is a voter.
	preferred           map[NodeID]bool
	noPreferredReported Epoch

	reqs    requestManager
	corrSeq uint64

	parked *purgatory.Purgatory[*parkedFetch]

	listeners   []*listenerCtx
	pendingRegs []Listener

	shuttingDown     bool
	shutdownDeadline time.Time
	done             bool

	// inRound is set while Step/Poll/Append/Resign/Shutdown run. A listener
	// callback that calls Append, Resign or Shutdown (re-entrantly) only
	// queues its work; the running round or the next one acts on it.
	inRound bool

	learned map[NodeID]Endpoint // addresses passed to an EndpointLearner

	obs           Observer  // told of events (observe.go); never nil
	electionStart time.Time // latest Prospective or Candidate entry, zero once it ended

	next  time.Time // deadline computed by the last round
	fatal error     // first log/store failure; every later call returns it
}

// NewDriver builds a driver from the persisted quorum state and the log, and
// writes the chosen initial state back (docs/design/state-machine.md 3).
// A single voter becomes leader at once.
func NewDriver(cfg Config, log Log, store QuorumStateStore, transport Transport,
	rng *rand.Rand, logger *zap.Logger, now time.Time) (*Driver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil || store == nil || transport == nil || rng == nil {
		return nil, errors.New("raft: log, store, transport and rng are required")
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	d := &Driver{
		cfg: cfg, log: log, store: store, tr: transport, rng: rng,
		lg:       logger.With(zap.Int32("node", cfg.NodeID)),
		leaderID: -1, votedID: -1, hw: -1,
		badRecordsReported:  LeaderAndEpoch{LeaderID: -1, Epoch: -1},
		noPreferredReported: -1,
		parked:              purgatory.New[*parkedFetch](),
		obs:                 cfg.Observer,
	}
	if d.obs == nil {
		d.obs = noObserver{}
	}
	d.remoteLg = logging.Remote(d.lg)
	if err := d.loadKRaftState(); err != nil {
		return nil, err
	}
	d.refreshVoters(now)
	if err := d.initialize(now); err != nil {
		return nil, err
	}
	d.endRound(now)
	if d.fatal != nil {
		return nil, d.fatal
	}
	return d, nil
}

// initialize picks the start-up state (first matching rule wins).
func (d *Driver) initialize(now time.Time) error {
	st, ok, err := d.store.Read()
	if err != nil {
		return fmt.Errorf("raft: read quorum state: %w", err)
	}
	if !ok {
		st = ElectionState{Epoch: 0, LeaderID: -1, VotedID: -1}
	}
	local := d.self()
	logEpoch := d.log.EndOffset().Epoch
	d.hw = -1
	var role Role
	switch {
	case st.VotedID >= 0 && local < 0:
		return fmt.Errorf("raft: quorum state has a vote for %d in epoch %d but this node has no id", st.VotedID, st.Epoch)
	case st.Epoch < logEpoch:
		d.lg.Warn("quorum state epoch is older than the log's last epoch; starting unattached",
			zap.Int32("stateEpoch", st.Epoch), zap.Int32("logEpoch", logEpoch))
		role = RoleUnattached
		d.setState(Epoch(logEpoch), -1, -1, [16]byte{})
	case st.LeaderID >= 0 && NodeID(st.LeaderID) == local:
		// Never lead twice in one epoch: unflushed data of the old term
		// may be lost, so (offset, epoch) pairs could repeat.
		role = RoleResigned
		d.setState(Epoch(st.Epoch), local, NodeID(st.VotedID), st.VotedDirectoryID)
	case st.VotedID >= 0 && NodeID(st.VotedID) == local && d.isVoter &&
		(st.VotedDirectoryID == [16]byte{} || st.VotedDirectoryID == d.cfg.DirectoryID):
		role = RoleCandidate
		d.setState(Epoch(st.Epoch), -1, local, st.VotedDirectoryID)
	case st.VotedID >= 0:
		role = RoleVoted
		if st.LeaderID >= 0 && NodeID(st.LeaderID) != local {
			role = RoleFollower
		}
		d.setState(Epoch(st.Epoch), NodeID(st.LeaderID), NodeID(st.VotedID), st.VotedDirectoryID)
	case st.LeaderID >= 0:
		role = RoleFollower
		d.setState(Epoch(st.Epoch), NodeID(st.LeaderID), -1, [16]byte{})
	default:
		role = RoleUnattached
		d.setState(Epoch(st.Epoch), -1, -1, [16]byte{})
	}
	if err := d.writeState(); err != nil {
		return err
	}
	d.enter(now, role)
	d.lg.Info("raft replica started", zap.Stringer("role", role), zapEpoch("epoch", d.epoch),
		zapNode("leader", d.leaderID), zapNode("voted", d.votedID), zap.Bool("voter", d.isVoter),
		zap.Int64("logEndOffset", d.log.EndOffset().Offset))
	switch {
	case role == RoleCandidate:
		d.maybeWinElection(now)
	case d.isVoter && d.voters.Len() == 1 && role == RoleResigned:
		// The only voter led this epoch before the restart: lead again in
		// the next one, at once.
		if !d.epochExhausted(now) {
			d.becomeCandidate(now)
		}
	case d.isVoter && d.voters.Len() == 1:
		d.startElection(now)
	}
	return d.fatal
}

// Step handles one Message. A non-nil error is fatal (log or quorum-state
// write failed): the caller stops the node and exits non-zero.
func (d *Driver) Step(now time.Time, m Message) error {
	if d.fatal != nil {
		return d.fatal
	}
	if d.inRound {
		return errors.New("raft: Step called from inside a listener callback")
	}
	d.inRound = true
	defer func() { d.inRound = false }()
	if m.Request != nil {
		d.handleRequest(now, m.Request, m.Ref)
	} else {
		d.handleResponse(now, m)
	}
	if d.fatal == nil {
		d.pollState(now)
	}
	d.endRound(now)
	return d.fatal
}

// Poll runs due timers (elections, fetches, linger, purgatory expiry, check
// quorum) and returns the time it next needs to be polled.
func (d *Driver) Poll(now time.Time) (time.Time, error) {
	if d.fatal != nil {
		return time.Time{}, d.fatal
	}
	if d.inRound {
		return d.next, nil
	}
	d.inRound = true
	defer func() { d.inRound = false }()
	d.expireParked(now)
	d.pollState(now)
	d.endRound(now)
	return d.next, d.fatal
}

// FlushDone reports that job, handed to Config.Flusher, ran and returned
// err. It is a round: the leader counts itself at its new flushed offset,
// which may commit, and begins its next flush. A job of an earlier term
// only wakes the driver. An error is fatal, as from Log.Flush.
func (d *Driver) FlushDone(now time.Time, job FlushJob, err error) error {
	if d.fatal != nil {
		return d.fatal
	}
	if d.inRound {
		return errors.New("raft: FlushDone called from inside a listener callback")
	}
	d.inRound = true
	defer func() { d.inRound = false }()
	if err != nil {
		d.failFlush(job.End(), err)
		return d.fatal
	}
	if l := d.asLeader(); l != nil && l.flushing == job {
		l.flushing = nil
	}
	d.pollState(now)
	d.endRound(now)
	return d.fatal
}

// Next returns the deadline computed by the last Step, Poll or Append.
func (d *Driver) Next() time.Time { return d.next }

// Append (leader only) queues records for the next batch and returns the
// offset the last record will get. The records of one call always share a
// batch. Errors: ErrNotLeader (not leader, or an older epoch),
// ErrInvalidEpoch (a newer epoch), ErrRecordTooLarge, ErrBufferFull,
// ErrShutdown, or the fatal error.
func (d *Driver) Append(now time.Time, epoch int32, records [][]byte) (int64, error) {
	if d.fatal != nil {
		return 0, d.fatal
	}
	if Epoch(epoch) > d.epoch {
		return 0, fmt.Errorf("%w: append for epoch %d, local epoch %d", ErrInvalidEpoch, epoch, d.epoch)
	}
	l := d.asLeader()
	if l == nil || Epoch(epoch) < d.epoch {
		return 0, fmt.Errorf("%w: append for epoch %d, local epoch %d is %s", ErrNotLeader, epoch, d.epoch, d.role())
	}
	if d.shuttingDown {
		return 0, ErrShutdown
	}
	acc := &l.acc
	last, err := acc.add(now, records, d.cfg, l.uncommittedBytes)
	if err != nil {
		return 0, err
	}
	if acc.shouldDrain(now) && !d.inRound {
		d.inRound = true
		defer func() { d.inRound = false }()
		d.pollState(now)
		d.endRound(now)
	} else if t, ok := acc.drainDeadline(); ok && t.Before(d.next) {
		// Cheap path: only the linger timer changed.
		if t.Before(now) {
			t = now
		}
		d.next = t
	}
	return last, d.fatal
}

// Register adds a listener. It is told the current leader, and handed the
// committed data, from the next round on.
func (d *Driver) Register(l Listener) {
	d.pendingRegs = append(d.pendingRegs, l)
}

// Resign makes the leader of epoch step down (it sends EndQuorumEpoch and
// becomes Resigned at the next round). An older epoch is ignored.
func (d *Driver) Resign(now time.Time, epoch int32) error {
	if d.fatal != nil {
		return d.fatal
	}
	l := d.asLeader()
	_, resigned := d.state.(*resignedState)
	switch {
	case Epoch(epoch) < d.epoch:
		return nil
	case Epoch(epoch) > d.epoch:
		return fmt.Errorf("%w: resign epoch %d, local epoch %d", ErrInvalidEpoch, epoch, d.epoch)
	case resigned:
		return nil
	case l == nil:
		return fmt.Errorf("%w: resign epoch %d as %s", ErrNotLeader, epoch, d.role())
	}
	l.resignRequested = true
	if !d.inRound {
		d.inRound = true
		defer func() { d.inRound = false }()
		d.pollState(now)
		d.endRound(now)
	}
	return d.fatal
}

// Shutdown begins graceful shutdown: listeners get BeginShutdown, a leader
// resigns (EndQuorumEpoch to its preferred successors), a follower stops at
// once, other voters wait for a new leader or the shutdown timeout.
func (d *Driver) Shutdown(now time.Time) {
	if d.shuttingDown {
		return
	}
	d.shuttingDown = true
	d.shutdownDeadline = now.Add(d.cfg.ShutdownTimeout)
	d.lg.Info("raft shutdown requested", zap.Stringer("role", d.role()), zapEpoch("epoch", d.epoch))
	for _, lc := range d.listeners {
		lc.call(d, "BeginShutdown", func() { lc.l.BeginShutdown() })
	}
	if d.fatal == nil && !d.inRound {
		d.inRound = true
		defer func() { d.inRound = false }()
		d.pollState(now)
		d.endRound(now)
	}
}

// Done reports whether a graceful shutdown has finished (or a fatal error
// stopped the driver).
func (d *Driver) Done() bool { return d.done || d.fatal != nil }

// Status returns the replica's current quorum view.
func (d *Driver) Status() Status {
	end := d.log.EndOffset()
	st := Status{
		NodeID: int32(d.self()), Role: d.role(), Epoch: int32(d.epoch), LeaderID: int32(d.leaderID),
		HighWatermark: d.hw, LogEndOffset: end.Offset, LogEndEpoch: end.Epoch, VotedID: int32(d.votedID),
		Voters: d.voters, IsVoter: d.isVoter, KRaftVersion: d.kraftVersion(), LeaderHighWatermark: -1,
	}
	switch s := d.state.(type) {
	case *leaderState:
		st.CommittedInEpoch = s.highWatermark >= 0
		st.Observers = len(s.observers)
		st.VoterChangePending = s.change != nil
	case *followerState:
		st.LastFetch, st.LeaderHighWatermark = s.lastFetched, s.leaderHW
	}
	return st
}

// learnEndpoint passes a node's address to the transport when it wants it.
func (d *Driver) learnEndpoint(id NodeID, host string, port int32) {
	el, ok := d.tr.(EndpointLearner)
	if !ok || id < 0 || host == "" || port <= 0 || id == d.self() {
		return
	}
	e := Endpoint{Name: d.cfg.ListenerName, Host: host, Port: port}
	if d.learned == nil {
		d.learned = map[NodeID]Endpoint{}
	} else if d.learned[id] == e {
		return
	}
	if len(d.learned) >= maxObservers {
		// Bounded; the addresses still in use are re-learned on the next
		// answer. Forgotten in id order so a run replays the same calls.
		ids := slices.Sorted(maps.Keys(d.learned))
		clear(d.learned)
		for _, forgotten := range ids {
			el.ForgetEndpoint(int32(forgotten))
		}
		d.learned[id] = e
		el.LearnEndpoint(int32(id), host, port)
		d.learnVoterEndpoints() // voters' addresses are always needed
		return
	}
	d.learned[id] = e
	el.LearnEndpoint(int32(id), host, port)
}

// fail records a fatal local failure. Nothing is sent or acknowledged after.
func (d *Driver) fail(err error) {
	if d.fatal == nil {
		d.fatal = err
		d.lg.Error("raft: fatal error, replica stops taking part in the quorum", zap.Error(err))
	}
}

// handleRequest answers one inbound request through its api's
// registration: refused at the edge when its fields fail the checks, else
// by the api's handler.
func (d *Driver) handleRequest(now time.Time, req kmsg.Request, ref RequestRef) {
	var resp kmsg.Response
	if a := lookupAPI(req.Key()); a != nil && a.handle != nil {
		if resp = d.refuseRequest(a, req); resp == nil {
			resp = a.handle(d, now, req, ref)
		}
	} else {
		// The network layer only passes the driver's apis; anything else
		// is a wiring bug, answered generically so the connection is not
		// stuck.
		d.lg.Warn("unexpected request api", zap.Int16("key", req.Key()))
		resp = req.ResponseKind()
	}
	if resp == nil || d.fatal != nil {
		return // parked, or a write failed: nothing is acknowledged
	}
	resp.SetVersion(req.GetVersion())
	d.tr.Reply(ref, resp)
}

// handleResponse matches a response to the single in-flight request of its
// destination and dispatches it; anything unexpected is ignored.
func (d *Driver) handleResponse(now time.Time, m Message) {
	p, ok := d.reqs.Take(NodeID(m.From), m.Corr)
	if !ok {
		d.lg.Debug("ignoring response no longer needed", zap.Int32("from", m.From), zap.Uint64("corr", m.Corr))
		return
	}
	gen := d.reqs.Generation()
	var success bool
	if m.Err != nil || m.Response == nil {
		success = d.handleSendError(now, p, m.Err)
	} else {
		success = d.dispatchResponse(now, p, m.Response)
	}
	if gen == d.reqs.Generation() && !success {
		d.reqs.Backoff(NodeID(m.From), now.Add(d.cfg.RetryBackoff))
	}
}

// dispatchResponse checks a response and hands it to the registration of
// the request it answers. It reports whether the destination is ready again.
func (d *Driver) dispatchResponse(now time.Time, p pending, resp kmsg.Response) bool {
	a := lookupAPI(resp.Key())
	if a == nil || a.onResponse == nil {
		d.remoteLg.Warn("unexpected response api", zap.Int16("key", resp.Key()))
		return false
	}
	if a.checkResponse != nil {
		if why := a.checkResponse(resp); why != "" {
			d.remoteLg.Warn("dropping invalid response: "+why, zapNode("from", p.to), zap.String("api", p.key.Name()))
			return false
		}
	}
	return a.Key == p.key && a.onResponse(d, now, p, resp)
}

// handleSendError handles a request the transport could not complete
// (timeout, disconnect, unsupported version). Returns whether it counts as
// handled (no backoff).
func (d *Driver) handleSendError(now time.Time, p pending, err error) bool {
	if f := d.asFollower(); f != nil && p.to == d.leaderID && isFetch(p) {
		f.leaderUnreachable(d, now, err)
	}
	if a := lookupAPI(int16(p.key)); a != nil && a.onSendError != nil {
		return a.onSendError(d, now, p, err)
	}
	return d.requestFailed(p, err)
}

// requestFailed logs a failed request; its destination backs off.
func (d *Driver) requestFailed(p pending, err error) bool {
	d.lg.Debug("request failed", zapNode("to", p.to), zap.String("api", p.key.Name()), zap.Error(err))
	return false
}

func isUnsupportedVersion(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, kerr.UnsupportedVersion) {
		return true
	}
	var ke *kerr.Error
	return errors.As(err, &ke) && ke.Code == kerr.UnsupportedVersion.Code
}

// pollState runs the current role's timers and sends.
func (d *Driver) pollState(now time.Time) {
	// Roles may change several times (e.g. Prospective -> Candidate ->
	// Leader for a single voter); loop until stable, bounded.
	for i := 0; i < 8 && d.fatal == nil; i++ {
		role, epoch := d.role(), d.epoch
		d.state.poll(d, now)
		if d.role() == role && d.epoch == epoch {
			break
		}
	}
	d.maybeCompleteShutdown(now)
}

func (d *Driver) maybeCompleteShutdown(now time.Time) {
	if !d.shuttingDown || d.done {
		return
	}
	switch {
	case !now.Before(d.shutdownDeadline):
	case !d.isVoter, d.voters.Len() == 1:
	case d.asFollower() != nil && d.leaderID != d.self():
	default:
		return
	}
	d.done = true
	d.lg.Info("raft shutdown complete", zap.Stringer("role", d.role()), zapEpoch("epoch", d.epoch))
}

// endRound finishes a round: the leader flushes what it appended and
// updates its high watermark, woken fetches are answered, listeners are fed,
// and the next deadline is computed.
func (d *Driver) endRound(now time.Time) {
	if l := d.asLeader(); d.fatal == nil && l != nil {
		d.flushLeader(now, l)
	}
	if d.fatal == nil {
		d.pollListeners(now)
		d.pruneAppendTimes()
		d.kraft.truncateOld(d.log.StartOffset())
	}
	d.next = d.computeNext(now)
}

// computeNext is when the caller must poll again: the soonest of the
// role's deadline, parked fetch expiry, the end of a request backoff and
// the shutdown timeout, never before now and at most an hour away.
func (d *Driver) computeNext(now time.Time) time.Time {
	var shutdown time.Time
	if d.shuttingDown && !d.done {
		shutdown = d.shutdownDeadline
	}
	parked, _ := d.parked.NextDeadline()
	next := earliest(now.Add(time.Hour), d.state.deadline(d, now), parked, d.reqs.NextBackoffEnd(now), shutdown)
	if next.Before(now) {
		next = now
	}
	return next
}

// randomElectionTimeout is uniform in [T, 2T).
func (d *Driver) randomElectionTimeout() time.Duration {
	t := d.cfg.ElectionTimeout
	if t <= 0 {
		return 0
	}
	return t + time.Duration(d.rng.Int64N(int64(t)))
}

// electionBackoff is Kafka's binary exponential backoff with jitter,
// 100ms * rand[0, 2^retries), while that range stays below
// election.backoff.max. Past it Kafka's min(..., max) returns max almost
// every time, so candidates that lost together retry together and can split
// the vote forever (seen in the simulator with pre-vote off); we draw
// uniformly in [0, max) there instead.
func (d *Driver) electionBackoff() time.Duration {
	r := max(1, min(d.retries, 21))
	maxB := d.cfg.ElectionBackoffMax
	if span := 100 * time.Millisecond * time.Duration(int64(1)<<r); span > maxB {
		if maxB <= 0 {
			return 0
		}
		return time.Duration(d.rng.Int64N(int64(maxB)))
	}
	return 100 * time.Millisecond * time.Duration(d.rng.Int64N(int64(1)<<r))
}

// voterDir is a voter's directory id, zero for a static voter (or an
// unknown id).
func (d *Driver) voterDir(id NodeID) [16]byte {
	v, _ := d.voters.Voter(id)
	return v.Key.DirectoryID
}

// lastFetched is (log end offset, epoch of the last record): the position
// compared by the vote up-to-date rule.
func (d *Driver) lastFetched() OffsetAndEpoch { return d.log.EndOffset() }

func (d *Driver) nextCorr() uint64 {
	d.corrSeq++
	return d.corrSeq
}

// send issues a request to a destination whose connection is ready.
func (d *Driver) send(now time.Time, to NodeID, req kmsg.Request, preVote bool) {
	corr := d.nextCorr()
	d.reqs.Sent(to, corr, pending{to: to, corr: corr, key: kmsg.Key(req.Key()), preVote: preVote, epoch: d.epoch})
	d.tr.Send(Outbound{To: int32(to), Corr: corr, Request: req})
}
