package raft

import "time"

// Observer is told of events the Status cannot show: it is how a node
// counts them for its metrics while the driver stays free of any metrics
// library. Calls come from the driver's goroutine inside a round, with
// durations from the driver's injected clock; an Observer must be cheap and
// must not call the driver.
type Observer interface {
	// ElectionFinished: this replica learned the winner of an election it
	// took part in; took runs from its latest Prospective or Candidate entry
	// to Leader or Follower (Kafka's election-latency).
	ElectionFinished(took time.Duration)
	// Committed: a batch the leader appended in its epoch reached the high
	// watermark, took after its append (Kafka's commit latency).
	Committed(records int, took time.Duration)
	// Appended: the leader appended records (Kafka's append-records).
	Appended(records int)
	// Fetched: a follower appended records from its leader (Kafka's
	// fetch-records).
	Fetched(records int)
	// SnapshotFetched: a follower installed a snapshot of size bytes it
	// downloaded from its leader.
	SnapshotFetched(size int64)
	// ParkedFetchExpired: a fetch waiting in the leader's purgatory reached
	// its MaxWaitMs and was answered without new records.
	ParkedFetchExpired()
}

type noObserver struct{}

func (noObserver) ElectionFinished(time.Duration) {}
func (noObserver) Committed(int, time.Duration)   {}
func (noObserver) Appended(int)                   {}
func (noObserver) Fetched(int)                    {}
func (noObserver) SnapshotFetched(int64)          {}
func (noObserver) ParkedFetchExpired()            {}

// ParkedFetches is how many fetches wait in the leader's purgatory.
func (d *Driver) ParkedFetches() int { return d.parked.Len() }

// appendedBatch is a leader batch awaiting its commit, for Committed.
type appendedBatch struct {
	last    int64
	records int
	bytes   int
	at      time.Time
}

// noteLeaderAppend tells the observer of a batch the leader appended and
// remembers it until it commits.
func (d *Driver) noteLeaderAppend(now time.Time, base, last int64, size int) {
	l := d.asLeader()
	n := int(last - base + 1)
	l.uncommitted = append(l.uncommitted, appendedBatch{last: last, records: n, bytes: size, at: now})
	l.uncommittedBytes += size
	d.obs.Appended(n)
}

// noteCommitted reports the leader's batches the high watermark passed.
func (d *Driver) noteCommitted(now time.Time) {
	l := d.asLeader()
	i := 0
	for ; i < len(l.uncommitted) && l.uncommitted[i].last < d.hw; i++ {
		b := l.uncommitted[i]
		l.uncommittedBytes -= b.bytes
		d.obs.Committed(b.records, now.Sub(b.at))
	}
	if i > 0 {
		l.uncommitted = append(l.uncommitted[:0], l.uncommitted[i:]...)
	}
}

// noteRoleEntered times elections for ElectionFinished: started by the
// latest Prospective or Candidate entry, ended by Leader or Follower.
func (d *Driver) noteRoleEntered(now time.Time) {
	switch d.role() {
	case RoleProspective, RoleCandidate:
		d.electionStart = now
	case RoleLeader, RoleFollower:
		if !d.electionStart.IsZero() {
			d.obs.ElectionFinished(now.Sub(d.electionStart))
			d.electionStart = time.Time{}
		}
	}
}

// ReplicaProgress is what a leader knows of a voter's replication.
type ReplicaProgress struct {
	ID int32
	// EndOffset is the voter's log end offset from its last fetch, -1
	// while unknown; the leader's own is its log end offset.
	EndOffset int64
	LastFetch time.Time // zero while unknown
}

// VoterProgress lists, on the leader, each voter's replication progress in
// voter id order; nil on any other role.
func (d *Driver) VoterProgress(now time.Time) []ReplicaProgress {
	l := d.asLeader()
	if l == nil {
		return nil
	}
	var out []ReplicaProgress
	for _, v := range d.voters.Nodes() {
		r := l.voters[v.Key.ID]
		if r == nil {
			continue
		}
		p := ReplicaProgress{ID: int32(r.id), EndOffset: r.endOffset, LastFetch: r.lastFetch}
		if r.id == d.self() {
			p.EndOffset, p.LastFetch = d.log.EndOffset().Offset, now
		}
		out = append(out, p)
	}
	return out
}
