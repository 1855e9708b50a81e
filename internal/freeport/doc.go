// Package freeport hands out TCP ports on 127.0.0.1 for quorums whose addresses must be
// known before their processes start (tests, benchmarks, make run).
//
// A port found by binding 127.0.0.1:0 lies in the kernel's ephemeral range, where any
// outbound connection on the machine may take it as its local port between the pick and
// the node's bind, or while a stopped node is down before it restarts on the same port.
// freeport draws ports below that range instead, and takes an advisory file lock per port
// (held until the process exits) so concurrent test processes never hand out the same one.
package freeport
