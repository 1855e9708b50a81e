// Package protocol is kraftd's Kafka wire codec: framing, request and response headers,
// the ApiVersions advertisement, record batches (magic 2) and KRaft control records.
//
// Model:
//   - A frame is an int32 big-endian size followed by that many bytes. ReadFrame validates
//     the size against a maximum (Kafka's socket.request.max.bytes) before allocating, and
//     allocates frames above 1 MiB as their bytes arrive.
//   - A request frame is a request header (v1, or v2 with a tag block when the api version
//     is flexible) followed by a kmsg body. A response frame is a response header (v0, or v1
//     with a tag block when flexible, except ApiVersions which always uses v0) and a kmsg
//     body. Bodies are encoded and decoded by kmsg only; this package never hand-writes a
//     message kmsg knows. ParseRequestHeader decodes a header without allocating.
//   - Each api a node serves has one registration (Api, api.go), written beside its
//     handler by the layer that serves it: its key (kmsg's), versions, and accessors of
//     its cluster id, top-level and partition error codes and, for the controller apis
//     answered as a controller that is not active (ControllerApis, controllerapis.go),
//     Kafka's getErrorResponse. A Table is assembled from the registrations when a node
//     is built; it refuses an api registered twice or versions kmsg cannot encode, and
//     looks registrations up in an array indexed by key, without allocating. Nothing in
//     this package lists the apis a node serves: the table is the node's.
//   - Table.ParseRequest decodes the apis of its table and refuses the rest with errors
//     wrapping ErrUnsupportedAPI / ErrUnsupportedVersion after decoding the header, so
//     the network layer can answer ApiVersions per KIP-511 (Table.ApiVersionsResponse)
//     or close the connection as a Kafka controller does. Other errors from ParseRequest
//     (malformed header, a body above MaxRequestBodySize, a body kmsg cannot decode)
//     mean: log and close.
//   - This package is the only place a kmsg message becomes bytes (encode.go). A request
//     is encoded at the version negotiated with its receiver (EncodeRequest) or at its
//     own (AppendRequest), a response at its own (AppendResponse). Either way the message
//     is brought to that version first without modifying it (fields.go): tagged fields
//     the version lacks are left out (kmsg would write them and Kafka rejects them), the
//     Fetch replica id goes where the version carries it, and a downgrade that would drop
//     a field changing the request's meaning is refused. A version bump changes
//     the api's registration and fields.go, never the network layer.
//   - Fetch and FetchSnapshot responses carry up to 8 MiB of log or snapshot bytes.
//     AppendResponseVectored appends a frame to net.Buffers in which those bytes are
//     the response's own slices, for writev without a copy.
//   - Record batches are decoded from and encoded to the exact bytes Kafka stores on disk
//     and sends in Fetch responses; the base offset and partition leader epoch are outside
//     the CRC and may be rewritten in place. KRaft writes uncompressed batches; compressed
//     ones (gzip, snappy, lz4, zstd) are decoded with a bound on the decompressed size.
//   - Control records are one-record (or few-record) control batches whose key is
//     {version 0, type} and whose value is a flexible version-0 message: LeaderChange
//     (kmsg), SnapshotHeader, SnapshotFooter, KRaftVersion and Voters (control.go).
//   - Metadata records (ApiMessageAndVersion framing), all 27 types of Kafka 4.4.0 at
//     every version, are the subpackage metadata's, generated from Kafka's schemas.
//
// Decoding never trusts its input: sizes and counts are checked against the bytes present
// before anything is allocated, and errors say what was wrong and where. Decoded messages
// and batches alias the input buffer for byte fields (record keys and values, Fetch
// records); callers that reuse a read buffer must be done with the decoded values first.
//
// Nothing in this package keeps mutable state or starts goroutines; every function is safe
// for concurrent use (AppendResponseVectored only needs its response to itself).
package protocol
