// Package node runs a KRaft quorum member in-process: the network server
// and its listeners, the peer client, the raft driver over the metadata log
// in the configured directory, and the run loop that owns the driver.
// cmd/controller's start and test-kraft-server-start are thin wrappers
// around it; tests and other programs run nodes without exec.
//
//	n, err := node.New(cfg, node.Options{ClusterID: id, DirectoryID: dir,
//	    TopicName: topics.ClusterMetadata, TopicID: uuid.MetadataTopicID,
//	    Logger: lg, ShutdownTimeout: 5 * time.Second})
//	err = n.Run(ctx) // cancel ctx for a graceful shutdown
//
// An Application (the raft performance test's workload, see package
// workload; the controller, package controller) plugs in from outside: the
// driver calls it as its raft.Listener, and the loop ticks it once per round
// with a Writer to append through and to snapshot into. An Application that
// is a Failing stops the node with its error; one that is a Snapshotter has
// the snapshots it asks for written off the loop (snapshot.go).
//
// Concurrency: the network server's connection goroutines and the peer
// client's goroutines talk to the driver only through the loop's bounded
// inbound channel (handler.go, transport.go). When it is full, a peer's
// response waits for room (there are at most as many as the driver sent),
// while an inbound request closes its connection: nothing a remote host
// does can hold a connection goroutine or grow a queue. DescribeCluster is
// answered on the connection goroutine from a status the loop publishes
// atomically, as is Status, and from the advertised endpoints, which Run
// publishes once the listeners are bound (a request that arrives earlier
// waits for them). The loop is the one goroutine that calls the driver, the
// log and the application; it selects over inbound messages, a timer set to
// the earliest of the driver's next deadline, the application's next tick
// and log maintenance, and the end of Run's context, which starts a
// graceful shutdown bounded by Options.ShutdownTimeout.
//
// A controller on __cluster_metadata registers itself with the active
// controller while another node leads (registration.go: ControllerRegistration,
// as a Kafka controller does), from a goroutine of its own over a connection
// of its own, reading the status the loop publishes; the loop only wakes it
// when the leader or the epoch changes.
//
// Every api a node serves has one registration, written by the layer that
// serves it beside its handler: the network server's (ApiVersions, the
// SASL apis), the raft driver's, and the node's own (DescribeCluster,
// ControllerRegistration). New assembles them into the node's table
// (apis.go, Apis), which the server decodes and advertises with, the peer
// client sends at most at and the metrics count by; Handle routes each
// request by its key to the route built from the same registrations. The
// apis every Kafka controller answers alike whatever its state (the ACL
// apis without an authorizer, token requests the listener refuses, the apis
// listed but handled nowhere) are answered on the connection's goroutine
// (refusals.go). An application that can be the active controller
// (node.Controller: controller.App with its active side,
// kraftd.controller.active.enable) gets every other controller api,
// UpdateFeatures included (directly or unwrapped from an Envelope), through
// a bounded queue to the loop (controller.go), serves or refuses it while
// active and answers NOT_CONTROLLER otherwise; ApiVersions lists
// metadata.version and the image's finalized features as a Kafka
// controller's does. A node without one answers those apis as a controller
// that is not active answers them (notcontroller.go): NOT_CONTROLLER naming
// the raft leader, even as raft leader, so brokers, controllers and admin
// clients look for the active controller again; raft serves its
// UpdateFeatures (kraft.version).
//
// Leadership deferral (kraftd.controller.leadership.deferral.enable; off by
// default where the active side is on, on where it is off;
// __cluster_metadata only): a kraftd voter that cannot be the active
// controller lets the voters that can lead (raft.Config.DeferLeadership,
// raft/deferral.go). It learns which they are from the ApiVersions answer
// of each outbound connection, which the peer client opens to every voter
// it sends to (votes, BeginQuorumEpoch, fetches): a Kafka controller, and a
// kraftd one with the active side, lists metadata.version among its
// SupportedFeatures, a plain kraftd voter only kraft.version (deferral.go;
// checked against Kafka 4.4.0 by interop's
// TestKafkaControllerAdvertisesMetadataVersion). The peer client reports
// each connection's features on its own goroutine; the loop passes the
// resulting set to raft.Driver.SetPreferredLeaders.
//
// The node routes DescribeQuorum for __cluster_metadata to its own topic, so
// kafka-metadata-quorum also describes a node on the performance-test
// partition.
//
// Every log line a peer's input causes (a wrong cluster id, a refused
// request) goes through logging.Remote, so no peer can flood the log;
// local events use the plain logger.
package node
