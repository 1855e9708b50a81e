// Package hostile holds attack clients against a Kafka KRaft controller
// listener: the judge of "a node that hostile or broken peers cannot crash,
// stall or bloat". Each attack is a function taking a context, the target's
// host:port and its parameters; it runs until its count is spent or the
// context ends, whichever is first, and returns what it did (Result), so the
// same attacks can be pointed at kraftd (cmd/controller's hostile tests) and
// at a JVM controller (interop).
//
// The attacks:
//
//   - FetchFlood: pipelined Fetch (or FetchSnapshot) requests whose answers
//     are large, on many connections that never read.
//   - SlowFrame: a frame announcing a huge size, then its bytes trickled.
//   - Slowloris: many connections, each a partial header trickled.
//   - ConnectStorm: many short connections opened fast.
//   - Garbage: a valid header (served api key and version), a random body.
//   - MaxValues: every raft RPC with extreme field values.
//   - ForgedLeaders: BeginQuorumEpoch and EndQuorumEpoch naming leaders
//     that were never elected.
//   - FakeLeader: a server that, once a follower fetches from it, answers
//     with a valid batch followed by malformed ones.
//
// Every message is built with franz-go's kmsg, every frame with package
// protocol and every record batch with protocol's batch encoder (valid
// CRC): an attack is hostile in its values, never because it mis-encodes
// what it means to send. A target closing the connection is an expected
// answer and counted (Result.Closed), not an error; an attack returns an
// error only when it could not run at all (a bad address, no connection
// ever accepted).
package hostile
