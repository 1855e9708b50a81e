// Package network is kraftd's TCP layer: a Server that accepts Kafka protocol connections
// and hands decoded requests to a Handler, and Peers, the outbound client a node uses to
// send raft requests to other nodes. It decides nothing about raft.
//
// # Server goroutines
//
// One accept loop per listener, and per connection exactly two goroutines:
//
//   - the reader reads a frame (protocol.ReadFrame, size checked before allocating),
//     decodes it with the node's api table (ServerConfig.Apis) and hands it to the
//     Handler. It then mutes:
//     it reads nothing more until the response has been WRITTEN (Kafka keeps a
//     connection muted until its response is sent). This is Kafka's
//     one-request-at-a-time processing per connection, so responses go out in request
//     order without a reorder buffer, also while a long-poll Fetch is parked for up to
//     its MaxWaitMs, and a client that does not read its responses stops being read.
//     The apis every listener has (ApiVersions, and the SASL apis off SASL listeners)
//     are answered by the reader itself from their registrations (apis.go; Apis puts
//     them in the node's table), muted the same way.
//   - the writer writes each queued response, then unmutes the reader. The records of a
//     large Fetch response (and the chunk of a FetchSnapshot one) are not copied into
//     the write buffer: they go out as their own segment of a vectored write
//     (protocol.AppendResponseVectored, writev).
//
// Why two goroutines and not one: respond is called from the raft run loop and must
// never block it, so the response goes to a queue that a goroutine other than the
// caller drains; the reader cannot be that goroutine because it may sit in a blocking
// read. Why not a goroutine per request: the mute means there is never more than one
// request of a connection to serve. One shortcut (inline.go): on a plaintext
// connection whose write side is idle, a response of up to 64 KiB is written by the
// responder itself with one non-blocking writev, saving the hand-offs to the writer
// and back; what the socket does not take goes to the writer, which finishes it.
//
// # Bounds
//
// What a connection holds is one request frame (at most protocol.MaxRequestSize: a
// larger size prefix is refused before any body byte is read), one response and a
// 4 KiB read buffer. What the node holds is bounded by configuration, with Kafka's
// semantics at each limit:
//
//   - QueuedMaxRequests / QueuedMaxRequestBytes (queued.max.requests,
//     queued.max.request.bytes): requests being read or waiting for their handler over
//     all connections; at the bound, readers stop reading until a handler takes a
//     request (ConnInfo.Taken) or a response is written.
//   - MaxConnections (max.connections): at the limit the accept loops wait for a slot.
//   - MaxConnectionsPerIP and overrides (max.connections.per.ip[.overrides]): a
//     connection over its address's limit is closed at once.
//   - MaxConnectionCreationRate (max.connection.creation.rate): accepting is throttled.
//   - FDReserve: a connection that would leave fewer free descriptors than this below
//     RLIMIT_NOFILE (inbound and outbound connections counted) is closed at once, so
//     the log and quorum-state can always be written.
//
// Each closing only the offending connection with a logged reason: a frame size that is
// negative or above the limit; a frame whose bytes do not all arrive within
// PartialFrameTimeout of its first byte (a client that sends half a frame and stalls,
// or trickles); no request for IdleTimeout while none is being served
// (connections.max.idle.ms; negative: never); a response write blocked for
// WriteTimeout; an api or version kraftd does not serve (a JVM server closes the
// connection too; clients learn the ranges from ApiVersions first); a body that fails
// to decode; a handler panic (recovered, as net/http does). Log lines a client causes
// go through logging.Remote, so no client can flood the log. Shutdown stops accepting,
// lets requests being served finish and their responses be written until its context
// ends, then closes what is left.
//
// # Security
//
// A listener with ListenerConfig.Security speaks TLS and/or SASL as package security
// resolves them (secure.go): the TLS handshake runs on the reader goroutine, bounded by
// HandshakeTimeout; a SASL connection's frames go to its security.Authenticator, bounded
// by sasl.server.max.receive.size, until it authenticates, and none reaches the Handler
// before. Refused connections are logged through a security.FailureLog, one line per
// peer host per interval. Peers with PeerConfig.Security run TLS, ApiVersions and the
// SASL exchange before any request (peers_secure.go); a failure fails the dial.
//
// # Peers goroutines
//
// Per destination node a run goroutine, started by Send when there is work and ending
// when there is none, dials (lazily, with exponential reconnect backoff and jitter),
// runs the ApiVersions exchange, picks each request's version and writes; per
// connection one reader matches responses to requests by correlation id and runs the
// callbacks. A timer per request fails it after RequestTimeout and closes its
// connection. Send never blocks, so the raft run loop never waits on the network, and
// callbacks never run on the caller's goroutine: it queues the request, or, when the
// peer is connected over plaintext and nothing else is being written, writes it itself
// with one non-blocking write and leaves any rest to the run goroutine
// (peers_inline.go). Requests are encoded by
// protocol.EncodeRequest at the version picked: this package knows nothing of what a
// version carries. Transport failures wrap kerr.BrokerNotAvailable (what the JVM raft
// client synthesises for a disconnect), a version mismatch wraps
// kerr.UnsupportedVersion.
//
// Usage:
//
//	apis := protocol.MustTable(network.Apis(), raft.Apis())
//	srv, err := network.NewServer(network.ServerConfig{
//		Apis:      apis,
//		Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:9093"}},
//		Logger:    logger,
//	}, handler)
//	if err != nil { ... }
//	if err := srv.Start(); err != nil { ... }
//	defer srv.Shutdown(ctx)
//
//	peers := network.NewPeers(network.PeerConfig{ClientID: "raft-client-1", Apis: apis, Logger: logger})
//	peers.SetAddress(2, "127.0.0.1:9094")
//	peers.Send(2, voteRequest, func(resp kmsg.Response, err error) { inbox <- ... })
package network
