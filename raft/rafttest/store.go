package rafttest

import (
	"errors"
	"slices"

	"github.com/kraftd/kraftd/raft"
)

// ErrInjected is the error returned by injected failures.
var ErrInjected = errors.New("rafttest: injected failure")

// MemStateStore is an in-memory raft.QuorumStateStore. A Write is durable
// the moment it returns, so it survives a simulated crash.
type MemStateStore struct {
	st raft.ElectionState
	ok bool
	// FailWrites, when non-nil, makes every Write return it without storing.
	FailWrites error
	// FailReads, when non-nil, makes Read return it (a corrupt file).
	FailReads error
	// Writes counts successful writes.
	Writes int
	// OnWrite, when set, is called with each state after it is stored.
	OnWrite func(raft.ElectionState)
}

var _ raft.QuorumStateStore = (*MemStateStore)(nil)

// NewMemStateStore returns a store for a fresh node (no state yet).
func NewMemStateStore() *MemStateStore { return &MemStateStore{} }

func (s *MemStateStore) Read() (raft.ElectionState, bool, error) {
	if s.FailReads != nil {
		return raft.ElectionState{}, false, s.FailReads
	}
	if !s.ok {
		return raft.ElectionState{}, false, nil
	}
	return cloneState(s.st), true, nil
}

func (s *MemStateStore) Write(st raft.ElectionState) error {
	if s.FailWrites != nil {
		return s.FailWrites
	}
	s.st, s.ok = cloneState(st), true
	s.Writes++
	if s.OnWrite != nil {
		s.OnWrite(cloneState(st))
	}
	return nil
}

// State returns the stored state and whether one was ever written.
func (s *MemStateStore) State() (raft.ElectionState, bool) { return cloneState(s.st), s.ok }

func cloneState(st raft.ElectionState) raft.ElectionState {
	st.Voters = slices.Clone(st.Voters)
	return st
}
