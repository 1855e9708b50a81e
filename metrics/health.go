package metrics

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/kraftd/kraftd/raft"
)

// Health is the answer of /livez or /readyz: the decision and what it was
// made from.
type Health struct {
	OK     bool   `json:"ok"`
	Reason string `json:"reason"`

	State         string `json:"state,omitempty"` // Kafka's current-state
	Epoch         int32  `json:"epoch"`
	LeaderID      int32  `json:"leader_id"`
	HighWatermark int64  `json:"high_watermark"`
	LogEndOffset  int64  `json:"log_end_offset"`
	// Follower only: the leader's high watermark as last seen, how far the
	// log end is behind it, and the age of the last answered fetch (-1 ms
	// when none came in this epoch).
	LeaderHighWatermark *int64 `json:"leader_high_watermark,omitempty"`
	Lag                 *int64 `json:"lag,omitempty"`
	LastFetchAgeMs      *int64 `json:"last_fetch_age_ms,omitempty"`

	LoopAgeMs *int64 `json:"loop_age_ms,omitempty"` // /livez
}

// Readiness decides /readyz, the rule operators apply before restarting
// the next controller: this node knows the leader of its epoch, and is
// either that leader with a commit in the epoch, or a follower (voter or
// observer) whose last fetch was answered within fetchTimeout
// (controller.quorum.fetch.timeout.ms) and whose log reaches the high
// watermark the leader last sent.
func Readiness(st raft.Status, now time.Time, fetchTimeout time.Duration) Health {
	h := Health{State: KafkaState(st), Epoch: st.Epoch, LeaderID: st.LeaderID,
		HighWatermark: st.HighWatermark, LogEndOffset: st.LogEndOffset}
	switch {
	case st.Role == raft.RoleLeader && !st.CommittedInEpoch:
		h.Reason = fmt.Sprintf("leader of epoch %d has not committed in it yet", st.Epoch)
	case st.Role == raft.RoleLeader:
		h.OK, h.Reason = true, fmt.Sprintf("leader of epoch %d with committed offsets up to %d", st.Epoch, st.HighWatermark)
	case st.LeaderID < 0:
		h.Reason = fmt.Sprintf("no leader known in epoch %d (state %s)", st.Epoch, h.State)
	case st.Role != raft.RoleFollower:
		// A Prospective or Resigned node still names the last leader.
		h.Reason = fmt.Sprintf("not following leader %d of epoch %d (state %s)", st.LeaderID, st.Epoch, h.State)
	default:
		h.OK, h.Reason = followerReady(&h, st, now, fetchTimeout)
	}
	return h
}

func followerReady(h *Health, st raft.Status, now time.Time, fetchTimeout time.Duration) (bool, string) {
	age := int64(-1)
	if !st.LastFetch.IsZero() {
		age = now.Sub(st.LastFetch).Milliseconds()
	}
	h.LastFetchAgeMs = &age
	switch {
	case age < 0:
		return false, fmt.Sprintf("leader %d of epoch %d has not answered a fetch yet", st.LeaderID, st.Epoch)
	case age > fetchTimeout.Milliseconds():
		return false, fmt.Sprintf("last fetch answered by leader %d was %d ms ago, over the fetch timeout of %d ms",
			st.LeaderID, age, fetchTimeout.Milliseconds())
	case st.LeaderHighWatermark < 0:
		return false, fmt.Sprintf("leader %d of epoch %d has not sent a high watermark yet", st.LeaderID, st.Epoch)
	}
	lhw := st.LeaderHighWatermark
	lag := max(lhw-st.LogEndOffset, 0)
	h.LeaderHighWatermark, h.Lag = &lhw, &lag
	if lag > 0 {
		return false, fmt.Sprintf("catching up: log end offset %d is %d behind the leader's high watermark %d", st.LogEndOffset, lag, lhw)
	}
	return true, fmt.Sprintf("following leader %d of epoch %d, caught up to its high watermark %d", st.LeaderID, st.Epoch, lhw)
}

// Liveness decides /livez: the run loop turned within maxAge (it turns at
// least once a second when idle).
func Liveness(lastTurn, now time.Time, maxAge time.Duration) Health {
	age := now.Sub(lastTurn).Milliseconds()
	h := Health{LoopAgeMs: &age, LeaderID: -1, HighWatermark: -1}
	if lastTurn.IsZero() {
		h.Reason = "the run loop has not started"
		return h
	}
	if age > maxAge.Milliseconds() {
		h.Reason = fmt.Sprintf("the run loop last turned %d ms ago, over %d ms", age, maxAge.Milliseconds())
		return h
	}
	h.OK, h.Reason = true, fmt.Sprintf("the run loop turned %d ms ago", age)
	return h
}

// writeHealth answers 200 or 503 with h as JSON.
func writeHealth(w http.ResponseWriter, h Health) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if !h.OK {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(h)
}
