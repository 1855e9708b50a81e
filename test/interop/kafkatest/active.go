package kafkatest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// What a kraftd node with the active side on logs when it claims and gives up Kafka's
// active controller role (controller/active.go); both lines carry the epoch.
const (
	KraftdActivationMsg   = "becoming the active controller"
	KraftdRenunciationMsg = "renouncing the active controller role"
)

// ActiveNode returns the active controller of either side as the current processes' logs
// tell: a running node whose last activation (a JVM's ActivationLine, kraftd's
// KraftdActivationMsg) has no renunciation after it, and that still leads the raft epoch
// it activated in; at is the activation's log timestamp (millisecond precision).
func (q *MixedRaft) ActiveNode() (id, epoch int32, at time.Time, ok bool) {
	id, epoch = -1, -1
	for _, n := range q.Nodes {
		if !n.Running() {
			continue
		}
		var e int32
		var when time.Time
		var active bool
		switch n.Side {
		case SideKafka:
			if e, active = activeIn(n.Proc.Log()); active {
				for _, a := range parseActivations(n.Proc.LogPath, n.ID) {
					if a.Epoch == e {
						when = a.At
					}
				}
			}
		case SideKraftd:
			e, when, active = kraftdActiveIn(n.Proc.Log())
		}
		if !active || e <= epoch {
			continue
		}
		if st, found := n.State(); found && st.Role == "Leader" && st.Epoch == e {
			id, epoch, at = n.ID, e, when
		}
	}
	return id, epoch, at, id >= 0
}

// WaitActiveNode waits until a node of either side is the active controller in an epoch
// above minEpoch.
func (q *MixedRaft) WaitActiveNode(minEpoch int32, timeout time.Duration) (id, epoch int32, at time.Time, err error) {
	deadline := time.Now().Add(timeout)
	for {
		if id, epoch, at, ok := q.ActiveNode(); ok && epoch > minEpoch {
			return id, epoch, at, nil
		}
		if time.Now().After(deadline) {
			return -1, -1, time.Time{}, fmt.Errorf("kafkatest: no active controller above epoch %d within %v", minEpoch, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kraftdActiveIn reports whether a kraftd node's JSON log ends active: its last
// KraftdActivationMsg line with no KraftdRenunciationMsg after it, with that line's epoch
// and time.
func kraftdActiveIn(out string) (epoch int32, at time.Time, active bool) {
	epoch = -1
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, KraftdActivationMsg) && !strings.Contains(line, KraftdRenunciationMsg) {
			continue
		}
		var v struct {
			TS    string `json:"ts"`
			Msg   string `json:"msg"`
			Epoch int32  `json:"epoch"`
		}
		if json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		switch v.Msg {
		case KraftdActivationMsg:
			t, err := time.Parse("2006-01-02T15:04:05.000Z0700", v.TS)
			if err != nil {
				continue
			}
			epoch, at, active = v.Epoch, t, true
		case KraftdRenunciationMsg:
			active = false
		}
	}
	if !active {
		return -1, time.Time{}, false
	}
	return epoch, at, true
}
