package rafttest

// handleListMsgs lists the queued messages, oldest first, without moving
// them.
//
// Example:
//
//	msgs
//	----
//	1->2 Vote v2 epoch=0 candidate=1 last=0@0 pre-vote
//	1->3 Vote v2 epoch=0 candidate=1 last=0@0 pre-vote
func (e *InteractionEnv) handleListMsgs() {
	for _, m := range e.queue {
		e.printf("%s", describeEnvelope(m))
	}
}
