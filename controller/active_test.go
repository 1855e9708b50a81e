package controller_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/controllertest"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/node"
)

func activeCluster(t *testing.T) (*controllertest.Cluster, int32) {
	t.Helper()
	c := activeClusterOf(t, 3)
	lead := c.Leader()
	if lead < 0 {
		t.Fatal("no leader")
	}
	return c, lead
}

// activeClusterOf is a quorum of n active-capable controllers, settled.
func activeClusterOf(t *testing.T, n int) *controllertest.Cluster {
	t.Helper()
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 1 << 20, Active: &controller.ActiveOptions{
		Cluster:         cluster.Settings{ClusterID: "test-cluster", SessionTimeout: 9 * time.Second},
		MaxIdleInterval: controller.DefaultMaxIdleInterval,
	}})
	c.Do("add-nodes", strconv.Itoa(n))
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	for range 3 {
		c.Do("stabilize")
	}
	return c
}

// The leader claims the controller role and writes the default bootstrap
// (no bootstrap snapshot) in a metadata transaction; every node's
// committed image then has Kafka 4.4.0's latest production
// metadata.version and the default features.
func TestActiveClaimWritesBootstrap(t *testing.T) {
	c, lead := activeCluster(t)
	if !c.App(lead).Active() {
		t.Fatal("the leader is not the active controller")
	}
	for id := int32(1); id <= 3; id++ {
		if id != lead && c.App(id).Active() {
			t.Errorf("node %d (not leading) is active", id)
		}
		im := c.App(id).Image()
		if mv, ok := im.MetadataVersion(); !ok || int16(mv) != features.LatestProduction.Level {
			t.Errorf("node %d: metadata.version %v %v", id, mv, ok)
		}
		if im.FeatureLevel("group.version") != 1 || im.FeatureLevel("transaction.version") != 2 {
			t.Errorf("node %d: features not the default bootstrap's", id)
		}
		if v, ok := im.Config(4, "", "min.insync.replicas"); !ok || v != "1" {
			t.Errorf("node %d: cluster min.insync.replicas %q %v (ELR is on in the bootstrap)", id, v, ok)
		}
		if _, open := c.App(id).Committed().Transaction(); open {
			t.Errorf("node %d: the bootstrap transaction is still open", id)
		}
	}
}

// NoOpRecords every metadata.max.idle.interval.ms move the committed
// offset while nothing else happens.
func TestActiveNoOps(t *testing.T) {
	c, lead := activeCluster(t)
	before := c.App(lead).Image().Provenance().Offset
	for range 4 {
		c.Do("tick", controllertest.Ids(lead)[0], "600ms")
		c.Do("stabilize")
	}
	if after := c.App(lead).Image().Provenance().Offset; after < before+3 {
		t.Fatalf("committed offset %d -> %d after 2.4 s: no NoOpRecords", before, after)
	}
}

type answer struct {
	resp kmsg.Response
	code int16
	msg  string
	n    int
}

func request(req kmsg.Request, a *answer) node.ControllerRequest {
	return node.ControllerRequest{Req: req, Arrived: time.Time{},
		Respond: func(r kmsg.Response) { a.resp = r; a.n++ },
		Fail:    func(code int16, msg string) { a.code, a.msg = code, msg; a.n++ }}
}

func registration(id int32) *kmsg.BrokerRegistrationRequest {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 4
	req.BrokerID, req.ClusterID = id, "test-cluster"
	req.IncarnationID = [16]byte{byte(id)}
	req.LogDirs = [][16]byte{{0xd, byte(id)}}
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "PLAINTEXT", "localhost", 9092
	req.Listeners = append(req.Listeners, l)
	for _, r := range features.Supported() {
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = r.Name, r.Min, r.Max
		req.Features = append(req.Features, f)
	}
	return req
}

// A registration's answer waits until its record commits; the broker epoch
// is the record's offset.
func TestActiveRegistrationAnsweredOnCommit(t *testing.T) {
	c, lead := activeCluster(t)
	var a answer
	next := c.App(lead).Image().Provenance().Offset
	c.Serve(lead, request(registration(1), &a))
	if a.n != 0 {
		t.Fatalf("answered before the record committed: %+v", a)
	}
	c.Do("stabilize")
	c.Do("stabilize")
	if a.n != 1 || a.resp == nil {
		t.Fatalf("answer %+v", a)
	}
	resp := a.resp.(*kmsg.BrokerRegistrationResponse)
	if resp.ErrorCode != 0 || resp.BrokerEpoch <= next {
		t.Fatalf("registration answered %+v (log end was %d)", resp, next)
	}
	b, ok := c.App(lead).Image().Broker(1)
	if !ok || b.Epoch != resp.BrokerEpoch || !b.Fenced {
		t.Fatalf("broker in the committed image: %+v %v", b, ok)
	}
}

// A standby answers NOT_CONTROLLER naming the leader.
func TestStandbyNotController(t *testing.T) {
	c, lead := activeCluster(t)
	other := lead%3 + 1
	var a answer
	c.Serve(other, request(registration(1), &a))
	if a.n != 1 || a.code != kerr.NotController.Code {
		t.Fatalf("standby answered %+v", a)
	}
}

// Losing leadership with an answer pending fails it with NOT_CONTROLLER
// and drops the uncommitted registration; the new leader, whose log had
// the first one's activation records, writes no bootstrap again and
// accepts the registration itself.
func TestActiveRenounceAndFailover(t *testing.T) {
	c, lead := activeCluster(t)
	var a answer
	c.Serve(lead, request(registration(1), &a))
	others := []string{}
	for id := int32(1); id <= 3; id++ {
		if id != lead {
			others = append(others, controllertest.Ids(id)[0])
		}
	}
	c.Do("partition", append(controllertest.Ids(lead), append([]string{"|"}, others...)...)...)
	newLeader := func() int32 {
		for id := int32(1); id <= 3; id++ {
			if id != lead && c.Env.Driver(id).Status().Role.String() == "Leader" {
				return id
			}
		}
		return -1
	}
	c.Do("tick", others[1], "1500ms")
	for i := 0; i < 20 && newLeader() < 0; i++ {
		c.Do("tick", others[i%2], "1500ms")
		c.Do("stabilize")
	}
	c.Do("heal")
	for range 3 {
		c.Do("tick", controllertest.Ids(lead)[0], "1500ms")
		c.Do("stabilize")
	}
	if a.n != 1 || a.code != kerr.NotController.Code {
		t.Log(c.Do("status"))
		t.Fatalf("the pending registration was answered %+v (leader was %d, is %d)", a, lead, c.Leader())
	}
	if c.App(lead).Active() {
		t.Fatal("the old leader is still active")
	}
	nl := c.Leader()
	if nl == lead || nl < 0 || !c.App(nl).Active() {
		t.Fatalf("new leader %d active %v", nl, nl >= 0 && c.App(nl).Active())
	}
	if _, ok := c.App(lead).Image().Broker(1); ok {
		t.Fatal("the old leader's uncommitted registration survived")
	}
	var b answer
	c.Serve(nl, request(registration(1), &b))
	c.Do("stabilize")
	c.Do("stabilize")
	if b.n != 1 || b.resp == nil || b.resp.(*kmsg.BrokerRegistrationResponse).ErrorCode != 0 {
		t.Fatalf("registration on the new leader: %+v", b)
	}
	for id := int32(1); id <= 3; id++ {
		if _, ok := c.App(id).Image().Broker(1); !ok {
			t.Errorf("node %d lacks the broker", id)
		}
	}
}

// The active controller registers itself (RegisterControllerRecord) once
// its metadata.version allows it, and only once.
func TestActiveRegistersItself(t *testing.T) {
	reg := kmsg.NewPtrControllerRegistrationRequest()
	l := kmsg.NewControllerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "localhost", 9093
	reg.Listeners = append(reg.Listeners, l)
	reg.IncarnationID = [16]byte{9}
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 1 << 20, Active: &controller.ActiveOptions{
		Cluster: cluster.Settings{ClusterID: "test-cluster", SessionTimeout: 9 * time.Second}, Registration: reg,
	}})
	c.Do("add-nodes", "3")
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	for range 4 {
		c.Do("stabilize")
	}
	lead := c.Leader()
	if lead < 0 {
		t.Fatal("no leader")
	}
	im := c.App(lead).Image()
	// The harness gives every node the same request; the leader writes it.
	ctl, ok := im.Controller(reg.ControllerID)
	if !ok || ctl.IncarnationID != [16]byte{9} || len(ctl.Endpoints) != 1 {
		t.Fatalf("controller registration in the image: %+v %v", ctl, ok)
	}
	if eps, refused := c.App(lead).RegisteredControllers("CONTROLLER"); refused != "" || len(eps) != 1 || eps[0].Port != 9093 {
		t.Fatalf("registered controllers: %+v %q", eps, refused)
	}
	off := im.Provenance().Offset
	for range 3 {
		c.Do("stabilize")
	}
	if got := c.App(lead).Image().Provenance().Offset; got != off {
		t.Fatalf("offset moved %d -> %d without NoOps: registered again", off, got)
	}
}

// A registered broker that heartbeats caught up is unfenced (answered once
// the change commits); when its heartbeats stop, the stale-broker task
// fences it after its session.
func TestActiveHeartbeatsAndStaleFencing(t *testing.T) {
	c, lead := activeCluster(t)
	var reg answer
	c.Serve(lead, request(registration(1), &reg))
	c.Do("stabilize")
	c.Do("stabilize")
	if reg.resp == nil {
		t.Fatalf("registration: %+v", reg)
	}
	epoch := reg.resp.(*kmsg.BrokerRegistrationResponse).BrokerEpoch
	heartbeat := func() *answer {
		hb := kmsg.NewPtrBrokerHeartbeatRequest()
		hb.Version = 1
		hb.BrokerID, hb.BrokerEpoch = 1, epoch
		hb.CurrentMetadataOffset = c.App(lead).Image().Provenance().Offset
		a := &answer{}
		r := request(hb, a)
		r.Arrived = c.Env.Now(lead)
		c.Serve(lead, r)
		c.Do("stabilize")
		c.Do("stabilize")
		return a
	}
	a := heartbeat()
	if a.resp == nil || a.resp.(*kmsg.BrokerHeartbeatResponse).IsFenced {
		t.Fatalf("heartbeat of a caught-up broker: %+v", a)
	}
	if b, _ := c.App(lead).Image().Broker(1); b == nil || b.Fenced {
		t.Fatalf("broker after the heartbeat: %+v", b)
	}
	id := controllertest.Ids(lead)[0]
	for range 12 {
		c.Do("tick", id, "1s")
		c.Do("stabilize")
	}
	if b, _ := c.App(lead).Image().Broker(1); b == nil || !b.Fenced {
		t.Fatalf("broker 12 s after its last heartbeat: %+v", b)
	}
}
