// Package protocol is kraftd's Kafka wire codec: framing, request and response headers,
// the ApiVersions advertisement, record batches (magic 2) and KRaft control records.
//
// Model:
//   - A frame is an int32 big-endian size followed by that many bytes. ReadFrame validates
//     the size against a maximum (Kafka's socket.request.max.bytes) before allocating.
//   - A request frame is a request header (v1, or v2 with a tag block when the api version
//     is flexible) followed by a kmsg body. A response frame is a response header (v0, or v1
//     with a tag block when flexible, except ApiVersions which always uses v0) and a kmsg
//     body. Bodies are encoded and decoded by kmsg only; this package never hand-writes a
//     message kmsg knows.
//   - kraftd serves a fixed set of apis (versions.go). ParseRequest refuses the rest with
//     errors wrapping ErrUnsupportedAPI / ErrUnsupportedVersion, after decoding the header,
//     so the network layer can answer ApiVersions per KIP-511 or close the connection as
//     a Kafka controller does.
//   - Record batches are decoded from and encoded to the exact bytes Kafka stores on disk
//     and sends in Fetch responses; the base offset and partition leader epoch are outside
//     the CRC and may be rewritten in place.
//
// Decoding never trusts its input: sizes and counts are checked against the bytes present
// before anything is allocated, and errors say what was wrong and where. Decoded messages
// and batches alias the input buffer for byte fields; callers that reuse a read buffer must
// be done with the decoded values first.
//
// Nothing in this package keeps state or starts goroutines; every function is safe for
// concurrent use.
package protocol
