package node

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/raft"
)

// Controller is an Application that can be Kafka's active controller: the
// node queues the controller apis it serves to the loop, which hands each
// to Serve (docs/design/controller.md, "The active side").
type Controller interface {
	Application
	// Serve handles one request on the loop goroutine; it answers through
	// the request's Respond or Fail, now or once its records commit. It may
	// append through w.
	Serve(now time.Time, st raft.Status, w Writer, r ControllerRequest)
	// Active reports whether the application is the active controller;
	// safe from any goroutine.
	Active() bool
	// CanBeActive reports whether the application ever becomes the active
	// controller; one that cannot is treated as a plain Application.
	CanBeActive() bool
	// SetRegistration gives this controller's own ControllerRegistration,
	// which it writes once active while its image lacks it; called before
	// the loop starts.
	SetRegistration(req *kmsg.ControllerRegistrationRequest)
	// RegisteredControllers are the controllers registered in the committed
	// image with their endpoint on listener, for DescribeCluster; refused,
	// when not empty, is Kafka's UNSUPPORTED_VERSION message (no
	// metadata.version, or one without controller registration). Safe from
	// any goroutine.
	RegisteredControllers(listener string) (eps []ControllerEndpoint, refused string)
	// FinalizedFeatures are the committed image's finalized feature levels
	// (metadata.version included) and its offset, for ApiVersions; safe
	// from any goroutine.
	FinalizedFeatures() (levels map[string]int16, epoch int64)
	// Prepare does a request's blocking work before the request queues
	// for the loop, on the connection's goroutine (Kafka's controller does
	// it on its own thread, where kraftd's loop must not block: the host
	// look-ups of AlterClientQuotas); the result reaches Serve as
	// ControllerRequest.Prepared. Safe from any goroutine.
	Prepare(req kmsg.Request) any
}

// ControllerEndpoint is a registered controller's endpoint on one listener.
type ControllerEndpoint struct {
	ID   int32
	Host string
	Port int32
}

// ControllerRequest is a controller api's request on its way to the loop.
type ControllerRequest struct {
	Header protocol.RequestHeader
	Req    kmsg.Request
	// Arrived is when the connection read it: a heartbeat counts as contact
	// from then, as Kafka tracks it before the request waits its turn.
	Arrived time.Time
	// Forwarded: the request came inside an Envelope (a broker forwarded
	// it), not from an admin client talking to the controller directly.
	Forwarded bool
	// Principal is the requester's Kafka principal (User:name; an
	// Envelope's inner request has the forwarding broker's client's).
	Principal string
	// Respond sends the answer; Fail answers with an error code and message
	// as the api's registration builds it (Kafka's getErrorResponse). Each
	// request gets exactly one of them, from any goroutine.
	Respond func(kmsg.Response)
	Fail    func(code int16, msg string)
	// Prepared is what Controller.Prepare gave for the request.
	Prepared any

	taken func() // the connection's Taken: the loop took the request off the queue
}

// controllerQueue bounds the controller requests waiting for the loop: a
// full queue answers REQUEST_TIMED_OUT (retriable) rather than blocking a
// connection goroutine.
const controllerQueue = 1024

// toController hands a controller request to the loop, or, when the node
// runs no controller, answers it as a controller that is not active.
func (n *Node) toController(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if n.ctrl == nil {
		n.notController(c, hdr, req, respond)
		return
	}
	r := ControllerRequest{Header: hdr, Req: req, Arrived: time.Now(), Forwarded: c.Forwarded, Principal: c.Principal, Respond: respond,
		Fail: func(code int16, msg string) { n.answerError(c, hdr, req, respond, code, msg) }, Prepared: n.ctrl.Prepare(req),
		taken: c.Taken}
	select {
	case n.ctrlq <- r:
	case <-n.stopped:
		respond(nil)
	default:
		n.remote.Warn("controller queue full: answering REQUEST_TIMED_OUT",
			zap.Stringer("remote", c.Remote), zap.Int16("api_key", hdr.APIKey), zap.Int("queue", cap(n.ctrlq)))
		r.Fail(kerr.RequestTimedOut.Code, "The controller's request queue is full.")
	}
}

// updateFeatures routes UpdateFeatures: to the controller application when
// it can be active (Kafka's controller decides every feature, handing
// kraft.version to raft), else to raft, which serves kraft.version alone.
func (n *Node) updateFeatures(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	if n.ctrl != nil {
		n.toController(c, hdr, req, respond)
		return
	}
	n.toRaft(c, hdr, req, respond)
}

// answerError answers req with code as its api's registration builds error
// answers; an api without one closes the connection.
func (n *Node) answerError(c *network.ConnInfo, hdr protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response), code int16, msg string) {
	if a := n.apis.Lookup(hdr.APIKey); a != nil && a.ErrorResponse != nil {
		if resp := a.ErrorResponse(req, code, msg); resp != nil {
			respond(resp)
			return
		}
	}
	n.unrouted(c, hdr, respond)
}

// serveControllerQueue hands r and whatever else is queued, up to maxDrain
// requests, to the controller.
func (n *Node) serveControllerQueue(r ControllerRequest) {
	st := n.driver.Status()
	n.doing = activity{op: "controller"}
	n.serveController(st, r)
	for range maxDrain {
		select {
		case r := <-n.ctrlq:
			n.serveController(st, r)
		default:
			return
		}
	}
}

// serveController hands r to the controller. Off the queue, r's wait for its answer
// (often a commit) no longer holds the reading of other connections' requests: a
// thousand brokers' heartbeats parked for a commit held every share of
// queued.max.requests, and the followers' Fetches the commit needed went unread until
// the leader resigned.
func (n *Node) serveController(st raft.Status, r ControllerRequest) {
	if r.taken != nil {
		r.taken()
	}
	n.ctrl.Serve(time.Now(), st, writer{n}, r)
}

// controllerApi is the registration of a controller api the active
// controller serves: Kafka 4.4.0's version range and error answer
// (protocol.ControllerApis), routed to the loop.
func controllerApi(key kmsg.Key) nodeApi {
	for _, a := range protocol.ControllerApis() {
		if a.Key == key {
			return nodeApi{Api: a, serve: (*Node).toController}
		}
	}
	panic("node: no controller api registration for " + key.Name())
}

// The controller apis the active controller serves (their handlers:
// controller/<api>.go). A node without a controller application answers
// them as a controller that is not active.
var (
	brokerRegistrationAPI = controllerApi(kmsg.BrokerRegistration)
	brokerHeartbeatAPI    = controllerApi(kmsg.BrokerHeartbeat)
	unregisterBrokerAPI   = controllerApi(kmsg.UnregisterBroker)

	createTopicsAPI            = controllerApi(kmsg.CreateTopics)
	deleteTopicsAPI            = controllerApi(kmsg.DeleteTopics)
	createPartitionsAPI        = controllerApi(kmsg.CreatePartitions)
	alterPartitionAPI          = controllerApi(kmsg.AlterPartition)
	electLeadersAPI            = controllerApi(kmsg.ElectLeaders)
	allocateProducerIDsAPI     = controllerApi(kmsg.AllocateProducerIDs)
	assignReplicasToDirsAPI    = controllerApi(kmsg.AssignReplicasToDirs)
	incrementalAlterConfigsAPI = controllerApi(kmsg.IncrementalAlterConfigs)
	alterConfigsAPI            = controllerApi(kmsg.AlterConfigs)
	listReassignmentsAPI       = controllerApi(kmsg.ListPartitionReassignments)
	alterClientQuotasAPI       = controllerApi(kmsg.AlterClientQuotas)
	alterSCRAMAPI              = controllerApi(kmsg.AlterUserSCRAMCredentials)
	unregisterControllerAPI    = controllerApi(kmsg.UnregisterController)

	// The api kraftd does not implement: the active controller refuses it
	// with a clear error (controller/refusals.go).
	alterReassignmentsAPI = controllerApi(kmsg.AlterPartitionAssignments)
)
