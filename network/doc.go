// Package network is kraftd's TCP layer: a Server that accepts Kafka protocol connections
// and hands decoded requests to a Handler, and Peers, the outbound client a node uses to
// send raft requests to other nodes. It decides nothing about raft.
//
// # Server goroutines
//
// One accept loop per listener, and per connection exactly two goroutines:
//
//   - the reader reads a frame (protocol.ReadFrame, size checked before allocating),
//     decodes it (protocol.ParseRequest) and hands it to the Handler. It then mutes:
//     it reads nothing more until the handler calls respond. This is Kafka's
//     one-request-at-a-time processing per connection, so responses go out in request
//     order without a reorder buffer, also while a long-poll Fetch is parked for up to
//     its MaxWaitMs. ApiVersions is answered by the reader itself
//     (protocol.NewApiVersionsResponse) and needs no mute.
//   - the writer takes queued responses, encodes them into one buffer and writes it when
//     no further response is queued, so pipelined answers share a syscall. The records
//     of a large Fetch response (and the chunk of a FetchSnapshot one) are not copied
//     into that buffer: they go out as their own segment of a vectored write
//     (protocol.AppendResponseVectored, writev).
//
// Why two goroutines and not one: respond is called from the raft run loop and must
// never block it, so the response goes to a queue that a goroutine other than the
// caller drains; the reader cannot be that goroutine because it sits in a blocking read
// for the next request. Why not a goroutine per request: the mute means there is never
// more than one request of a connection to serve.
//
// Bounds, each closing only the offending connection with a logged reason: a frame size
// that is negative or above MaxFrameSize; a frame whose bytes do not all arrive within
// PartialFrameTimeout of its first byte (a client that sends half a frame and stalls, or
// trickles); no request for IdleTimeout while none is being served
// (connections.max.idle.ms); a response write blocked for WriteTimeout; an api or
// version kraftd does not serve (a JVM server closes the connection too; clients learn
// the ranges from ApiVersions first); a body that fails to decode; a handler panic
// (recovered, as net/http does). Connections beyond MaxConnections are closed on accept.
// Shutdown stops accepting, lets requests being served finish and their responses be
// written until its context ends, then closes what is left.
//
// # Peers goroutines
//
// Per destination node a run goroutine, started by Send when there is work and ending
// when there is none, dials (lazily, with exponential reconnect backoff and jitter),
// runs the ApiVersions exchange, picks each request's version and writes; per
// connection one reader matches responses to requests by correlation id and runs the
// callbacks. A timer per request fails it after RequestTimeout and closes its
// connection. Send only queues, so the raft run loop never blocks on the network, and
// callbacks never run on the caller's goroutine. Requests are encoded by
// protocol.EncodeRequest at the version picked: this package knows nothing of what a
// version carries. Transport failures wrap kerr.BrokerNotAvailable (what the JVM raft
// client synthesises for a disconnect), a version mismatch wraps
// kerr.UnsupportedVersion.
//
// Usage:
//
//	srv, err := network.NewServer(network.ServerConfig{
//		Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: "127.0.0.1:9093"}},
//		Logger:    logger,
//	}, handler)
//	if err != nil { ... }
//	if err := srv.Start(); err != nil { ... }
//	defer srv.Shutdown(ctx)
//
//	peers := network.NewPeers(network.PeerConfig{ClientID: "raft-client-1", Logger: logger})
//	peers.SetAddress(2, "127.0.0.1:9094")
//	peers.Send(2, voteRequest, func(resp kmsg.Response, err error) { inbox <- ... })
package network
