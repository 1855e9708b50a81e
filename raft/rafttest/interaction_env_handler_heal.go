package rafttest

// handleHeal undoes the partition.
//
// Example:
//
//	heal
//	----
//	ok
func (e *InteractionEnv) handleHeal() { e.groups = nil }
