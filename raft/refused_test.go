package raft_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/raft"
)

var (
	errRefused    = fmt.Errorf("connect to node 2: %w", raft.ErrConnectionRefused)
	errDisconnect = errors.New("connection closed")
)

// failFetch answers the follower's outstanding Fetch to its leader with a
// transport error.
func (c *tctx) failFetch(err error) {
	c.t.Helper()
	c.poll()
	fetches := sentOf(c.takeSent(), int16(kmsg.Fetch))
	if len(fetches) != 1 || fetches[0].To != 2 {
		c.t.Fatalf("sent %d Fetches (%+v), want one to the leader 2", len(fetches), fetches)
	}
	if err := c.d.Step(c.now, raft.Message{From: fetches[0].To, Corr: fetches[0].Corr, Err: err}); err != nil {
		c.t.Fatal(err)
	}
}

func preVoteGranted(c *tctx) bool {
	c.t.Helper()
	_, p := votePart(c.request(voteReq(3, 3, 0, 0, true)))
	return p.VoteGranted
}

// A leader whose address refuses the connection is gone: its followers
// elect a successor without waiting out the fetch timeout, the first of the
// other voters in id order at once, the next after its position's backoff.
func TestRefusedLeaderShortensElection(t *testing.T) {
	for _, tc := range []struct {
		self int32
		want time.Duration
	}{
		{1, 0},                      // successors [1 3]: first
		{3, 500 * time.Millisecond}, // second of two: (1000 >> 1) << 0
	} {
		c := newCtx(t, tc.self, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
		c.wantRole(raft.RoleFollower, 3)
		c.failFetch(errRefused)
		c.wantElectionAfter(tc.want, 3)
	}
}

// The shortcut is taken once per fetch timeout: a leader that refuses this
// node but still leads the others (the pre-vote fails) costs no more
// elections than a silent one.
func TestRefusedLeaderShortcutOncePerFetchTimeout(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	c.wantRole(raft.RoleFollower, 3)
	c.failFetch(errRefused)
	c.poll()
	c.wantRole(raft.RoleProspective, 3)
	for _, o := range sentOf(c.takeSent(), int16(kmsg.Vote)) {
		c.respond(o, voteResp(3, 2, false))
	}
	c.wantRole(raft.RoleFollower, 3)
	c.advance(c.cfg.RetryBackoff)
	c.failFetch(errRefused)
	c.advance(c.cfg.FetchTimeout - c.cfg.RetryBackoff - time.Millisecond)
	c.wantRole(raft.RoleFollower, 3)
	c.advance(c.cfg.RetryBackoff + time.Millisecond)
	c.wantRole(raft.RoleProspective, 3)
}

// Any failed Fetch to the leader makes it count as silent for pre-votes
// (every follower's long poll fails when the leader dies), until the next
// answer; only a refusal shortens the timer.
func TestFailedFetchGrantsPreVotes(t *testing.T) {
	c := newCtx(t, 1, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	c.wantRole(raft.RoleFollower, 3)
	c.poll()
	fetches := sentOf(c.takeSent(), int16(kmsg.Fetch))
	if len(fetches) != 1 {
		t.Fatalf("sent %d Fetches, want 1", len(fetches))
	}
	c.respond(fetches[0], fetchResp(2, 3, 0, nil))
	if preVoteGranted(c) {
		t.Fatal("pre-vote granted while the leader answers")
	}
	c.advance(c.cfg.RetryBackoff)
	c.failFetch(errDisconnect)
	if !preVoteGranted(c) {
		t.Fatal("pre-vote refused after the leader's connection closed")
	}
	c.advance(c.cfg.FetchTimeout / 2)
	c.wantRole(raft.RoleFollower, 3)
	c.poll()
	fetches = sentOf(c.takeSent(), int16(kmsg.Fetch))
	if len(fetches) != 1 {
		t.Fatalf("sent %d Fetches after the backoff, want 1", len(fetches))
	}
	c.respond(fetches[0], fetchResp(2, 3, 0, nil))
	if preVoteGranted(c) {
		t.Fatal("pre-vote granted once the leader answered again")
	}
}

// An observer follows the leader without voting: a refusal starts nothing.
func TestRefusedLeaderObserverWaits(t *testing.T) {
	c := newCtx(t, 4, withState(raft.ElectionState{Epoch: 3, LeaderID: 2, VotedID: -1}))
	c.wantRole(raft.RoleFollower, 3)
	c.failFetch(errRefused)
	c.advance(c.cfg.ElectionBackoffMax)
	c.wantRole(raft.RoleFollower, 3)
}
