package controller_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/controller/controllertest"
)

// The controller's counters behind Kafka's QuorumController metrics: the
// active controller's last applied record runs ahead of the committed one
// until the commit, a standby's is the committed one with its batch's
// timestamp; leader changes, operations and late heartbeats are counted.
func TestControllerStats(t *testing.T) {
	c := controllertest.New(t, controller.Options{MaxBytesBetweenSnapshots: 1 << 20, Active: &controller.ActiveOptions{
		Cluster:           cluster.Settings{ClusterID: "test-cluster", SessionTimeout: 9 * time.Second},
		MaxIdleInterval:   controller.DefaultMaxIdleInterval,
		HeartbeatDeadline: time.Second,
	}})
	c.Do("add-nodes", "3")
	c.Do("stabilize")
	c.Do("tick", "1", "2s")
	for range 3 {
		c.Do("stabilize")
	}
	lead := c.Leader()
	view := func(id int32) (v struct{ applied, committed, ts, newActive, started, timedOut, hbTimedOut int64 }) {
		cv, _ := c.App(id).ControllerView()
		v.applied, v.committed, v.ts = cv.LastAppliedOffset, cv.LastCommittedOffset, cv.LastAppliedTimestampMs
		v.newActive, v.started, v.timedOut, v.hbTimedOut = cv.NewActiveControllers, cv.OperationsStarted, cv.OperationsTimedOut, cv.TimedOutHeartbeats
		return v
	}
	before := view(lead)
	var a answer
	c.Serve(lead, request(registration(1), &a))
	after := view(lead)
	if after.applied <= after.committed || after.started != before.started+1 {
		t.Fatalf("active, before the commit: %+v (before the request %+v)", after, before)
	}
	c.Do("stabilize")
	c.Do("stabilize")
	if a.resp == nil {
		t.Fatalf("registration: %+v", a)
	}
	for id := int32(1); id <= 3; id++ {
		v := view(id)
		if v.newActive < 1 {
			t.Errorf("node %d saw no active controller: %+v", id, v)
		}
		if id == lead {
			continue
		}
		if v.applied != v.committed || v.applied < after.applied || v.ts <= 0 {
			t.Errorf("standby %d: %+v (the active controller appended up to %d)", id, v, after.applied)
		}
	}
	// A heartbeat that waited past its deadline is refused and counted.
	hb := kmsg.NewPtrBrokerHeartbeatRequest()
	hb.Version = 1
	hb.BrokerID, hb.BrokerEpoch = 1, a.resp.(*kmsg.BrokerRegistrationResponse).BrokerEpoch
	var late answer
	r := request(hb, &late)
	r.Arrived = c.Env.Now(lead).Add(-2 * time.Second)
	c.Serve(lead, r)
	c.Do("stabilize")
	if resp, ok := late.resp.(*kmsg.BrokerHeartbeatResponse); late.n != 1 || (ok && resp.ErrorCode != kerr.RequestTimedOut.Code) ||
		(!ok && late.code != kerr.RequestTimedOut.Code) {
		t.Fatalf("a late heartbeat: %+v", late)
	}
	if v := view(lead); v.hbTimedOut != 1 || v.timedOut != 1 {
		t.Fatalf("after a late heartbeat: %+v", v)
	}
}
