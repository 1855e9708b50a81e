// Package logging holds kraftd's logging rules that more than one package
// needs.
//
// Remote wraps a logger for lines that a peer's input causes (a refused
// forged request, a wrong cluster id, a malformed frame): any host that can
// reach a port could otherwise fill the disk with log lines on demand. Such
// lines are sampled per level and message text, with zap's sampler, whose
// memory is a fixed table whatever the number of peers, so no per-peer state
// grows. Local events (state transitions, disk errors) use the plain logger
// and are never dropped.
package logging
