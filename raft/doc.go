// Package raft is kraftd's KRaft (KIP-595) replica: a deterministic state
// machine plus the Driver that runs it. Inputs are inbound requests and
// responses (Step), the passage of time (Poll), appends and shutdown; outputs
// are Outbound requests and replies through a Transport, log and quorum-state
// writes, and listener callbacks. The package reads no clock, starts no
// goroutines and touches no socket or file: the caller injects all of them.
package raft
