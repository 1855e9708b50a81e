package raft

import "go.uber.org/zap"

// NodeID is a replica's node.id. -1 means "no id" (an observer without one,
// no known leader, no vote). Ids and epochs travel together through the core;
// distinct types make swapping them a compile error. Kafka messages and the
// exported API carry plain int32, converted where they are read or written.
type NodeID int32

// Epoch is a leader epoch (Raft term); see NodeID for why it is a type.
type Epoch int32

// zapNode and zapEpoch log an id or an epoch as the int32 it is on the wire.
func zapNode(key string, id NodeID) zap.Field { return zap.Int32(key, int32(id)) }

func zapEpoch(key string, e Epoch) zap.Field { return zap.Int32(key, int32(e)) }

// self is the local node id (-1 for an observer without one).
func (d *Driver) self() NodeID { return NodeID(d.cfg.NodeID) }
