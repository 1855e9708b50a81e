// Package raft is kraftd's KRaft (KIP-595) replica: a deterministic state
// machine plus the Driver that runs it. Inputs are inbound requests and
// responses (Step), the passage of time (Poll), appends (Append), Resign and
// Shutdown; outputs are Outbound requests and replies through a Transport,
// log and quorum-state writes, and listener callbacks. The package reads no
// clock, starts no goroutines and touches no socket or file: the caller
// injects the time, a seeded *rand.Rand, the Log, the QuorumStateStore and
// the Transport.
//
// # Roles and legal transitions
//
// Modelled on Kafka's QuorumState. "durable" means the quorum-state file is
// written before the new role acts (e.g. before a vote reply is sent);
// Prospective and Resigned are memory only. Any other transition is a bug
// and panics with the transition in the message (packet input never causes
// one: handlers check first).
//
//	Unattached  -> Unattached (higher epoch), Voted (grant, same epoch),
//	               Prospective (election timer, pre-vote on),
//	               Candidate (election timer, pre-vote off),
//	               Follower (leader learned)
//	Voted       -> Unattached (higher epoch), Prospective, Candidate, Follower
//	Prospective -> Candidate (majority of pre-votes, or a peer without Vote v2),
//	               Follower (leader learned, or pre-vote lost with a known leader),
//	               Unattached/Voted (pre-vote lost, same epoch; keeps its vote),
//	               Unattached (higher epoch); a standard grant keeps it
//	               Prospective with the vote recorded (durable)
//	Candidate   -> Leader (majority), Prospective or Candidate(epoch+1)
//	               (after the election backoff), Follower, Unattached (higher epoch)
//	Leader      -> Resigned (Resign, Shutdown, check quorum, leadership deferral),
//	               Follower/Unattached (higher epoch only)
//	Follower    -> Prospective/Candidate (fetch timer, voters only),
//	               Follower (higher epoch), Unattached (higher epoch)
//	Resigned    -> Candidate(epoch+1) (election timer, pre-vote off),
//	               Unattached(epoch+1) (election timer, pre-vote on or not a voter),
//	               Follower/Unattached (higher epoch)
//
// Observers (no id, or not in the voter set) only move between Unattached
// and Follower; they never vote for themselves. An id-less observer never
// grants a vote.
//
// The Driver holds one current role state (role.go), its timers and data,
// which answers the decisions that differ by role; one type per role, each
// in its own file: unattached.go (Unattached, Voted), election.go
// (Prospective, Candidate), leader.go, follower.go, resigned.go.
// transition.go moves between them. The pure parts of the core are
// packages of their own: raft/quorum (majority, high-watermark offset,
// vote tally), raft/history (values by log offset) and raft/requests (the
// request manager); raft/rafttest holds the in-memory storage and the
// scripted quorum (InteractionEnv) for tests.
//
// # Voter set
//
// The voter set in force is the latest one the log records, committed or
// not (kraftstate.go, as Kafka's KRaftControlRecordStateMachine): Voters
// and KRaftVersion control records from the latest snapshot (a dynamic
// quorum's bootstrap snapshot 0-0 included), the log, and every batch
// appended; truncation and snapshot installation rewind it. Without a
// Voters record the static controller.quorum.voters set (kraft.version 0)
// is used. A node is a voter while that set holds its ReplicaKey (id, and
// directory id when the set records one); membership is re-evaluated when
// the set changes.
//
// # Voter changes
//
// As Kafka 4.4 (voter_changes.go): the leader serves AddRaftVoter,
// RemoveRaftVoter and UpdateRaftVoter once its high watermark is known at
// kraft.version 1, one Add or Remove at a time and only once the latest
// Voters record is committed. An Add first asks the new voter for
// ApiVersions (its kraft.version range must hold the finalized level) and
// needs it to be a caught-up observer. The Voters record is in force once
// appended; Add and Remove answer when it commits (Add v1 with
// AckWhenCommitted false, and Update, at append), time out after the
// request timeout and fail with NOT_LEADER_OR_FOLLOWER when leadership is
// lost. A leader that removed itself leads until the change commits, then
// resigns. A voter whose recorded endpoints or kraft.version range are stale
// sends UpdateRaftVoter every fetch.timeout; an observer controller with
// auto-join asks to be added, or to remove its id's old directory first
// (follower_changes.go).
//
// # kraft.version upgrade
//
// As Kafka 4.4 (upgrade.go): at kraft.version 0 each voter sends
// UpdateRaftVoter once to every new leader, which keeps the reported
// directory ids, endpoints and kraft.version ranges in memory
// (volatileVoters) and appends nothing. UpdateFeatures(kraft.version=1)
// (kafka-features upgrade) succeeds once every voter's range holds 1: the
// leader appends KRaftVersion(1) and the Voters record of that set as one
// control batch, in force at once like any Voters record, and answers when
// it commits. From then on the node is a kraft.version 1 node (quorum-state
// data_version 1, dynamic voter changes); truncation before the commit
// rewinds it to the static set.
//
// Start-up follows docs/design/state-machine.md 3: a node whose file says
// it led the epoch restarts Resigned; a vote for itself restarts Candidate;
// the chosen state is written back; a single voter elects itself at once.
//
// # Durability rules
//
//   - quorum state is written before a vote is answered or a new epoch acts;
//   - a follower fsyncs appended batches before its next Fetch, which is
//     what tells the leader they are durable;
//   - the leader fsyncs once per round (Step/Poll/Append) what it drained,
//     or with a Config.Flusher hands the fsync off (Log.BeginFlush, one in
//     flight, its end reported by FlushDone), and counts itself toward the
//     high watermark only at Log.FlushedOffset;
//   - the high watermark is exposed by a leader only once an entry of its
//     epoch is on a majority, and never decreases;
//   - a failed log or quorum-state write is fatal: Step/Poll return it and
//     nothing further is sent or acknowledged. A peer's input never is:
//     requests and responses are range-checked at the edge, by the checks
//     their api's registration names (apis.go, validate.go), before any
//     handler, epochs above MaxEpoch are refused, a leader's
//     records must pass protocol.ValidateBatch (the log's own rules) and a
//     refusal backs off; lines a peer causes go through logging.Remote.
//
// # Timers
//
// Each role's state owns its timers (timer.go), as in Kafka's per-role
// state classes, and is created with them armed on entry to the role:
//
//	Unattached/Voted  election, [T, 2T) (voters only; kept when the epoch
//	                  is bumped before it fires) -> election
//	Prospective       election, [T, 2T) -> pre-vote failed
//	Candidate         election, [T, 2T) -> lost; then backoff -> new election
//	Follower          fetch, fetch.timeout, reset by every successful answer
//	                  and shortened by EndQuorumEpoch -> election (voters
//	                  only: an observer asks a bootstrap server only while
//	                  requests to the leader back off, as Kafka 4.4);
//	                  update, fetch.timeout -> UpdateRaftVoter (stale voter)
//	                  or auto-join (observer)
//	Leader            check quorum, 1.5 x fetch.timeout -> resign;
//	                  BeginQuorumEpoch, fetch.timeout/2 -> resend to voters
//	                  that have not fetched within it; append linger
//	Resigned          election, [T, 2T) -> new epoch
//
// T is election.timeout. Besides the role's timers, a round's deadline
// (Poll's result) covers parked fetches' MaxWaitMs, per-destination retry
// backoffs and the shutdown timeout. A role reports only the timers it acts
// on in its current state, so an expired timer it ignores (an election
// timer while shutting down, say) never makes the caller poll in a loop.
// A node deferring leadership (deferral.go) adds T to its election, fetch
// and backoff delays while a preferred voter could lead instead.
//
// # Where kraftd departs from Kafka, and why
//
//   - Election backoff: Kafka's min(100ms * rand[0, 2^retries), max) is used
//     while its range stays below the cap; beyond it the draw is uniform in
//     [0, max), because the capped formula returns max almost always and
//     candidates that lost together retried in step forever (simulator).
//   - A leader answers parked fetches when its high watermark moves (and a
//     Fetch v18 with a stale HW at once), not only when its log end moves,
//     so followers learn commits without waiting MaxWaitMs.
//   - BeginQuorumEpoch/EndQuorumEpoch that contradict what the node knows
//     (a second leader for an epoch, this node named leader of an epoch it
//     does not lead, a higher epoch naming the leader it follows) are
//     refused with INVALID_REQUEST and logged; the JVM halts on them.
//   - Leadership deferral (Config.DeferLeadership, deferral.go) has no
//     Kafka counterpart: every Kafka voter can run the state machine.
//   - A Resigned leader whose election timer expires bumps to
//     Unattached(epoch+1) when pre-vote is on, so no Fetch answer names it
//     leader again; the next election starts from there.
//
// # Listeners and re-entrancy
//
// Listener callbacks run on the driver's goroutine inside Step/Poll. They
// may call Append, Resign and Shutdown: the work is queued and done by the
// running round or the next one (Poll's deadline says when). They must not
// call Step or Poll.
//
// # Usage
//
//	d, err := raft.NewDriver(cfg, log, store, transport, rng, logger, now)
//	for {
//		select {
//		case m := <-inbound:        // requests and answers to d's Outbounds
//			err = d.Step(clock.Now(), m)
//		case <-timer.C:
//		}
//		next, err := d.Poll(clock.Now()) // after every Step/Append too
//		timer.Reset(next.Sub(clock.Now()))
//	}
package raft
