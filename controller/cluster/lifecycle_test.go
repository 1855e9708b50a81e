package cluster

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/protocol/metadata"
)

func TestHeartbeatUnfencesOnceCaughtUp(t *testing.T) {
	w := newWorld(t, 33, true)
	epoch := w.register(1, 1)
	regOffset := w.next - 1
	// Behind its registration, or asking to stay fenced: fenced, no records.
	for _, c := range []struct {
		offset int64
		fence  bool
		caught bool
	}{{regOffset - 1, false, false}, {regOffset, true, true}} {
		res, err := w.m.Heartbeat(w.op(), heartbeat(1, epoch, c.offset, c.fence, false))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Records) != 0 || !res.Response.IsFenced || res.Response.IsCaughtUp != c.caught || res.Response.ShouldShutdown {
			t.Fatalf("%+v: %v %+v", c, types(res.Records), res.Response)
		}
	}
	res, err := w.m.Heartbeat(w.op(), heartbeat(1, epoch, regOffset, false, false))
	if err != nil {
		t.Fatal(err)
	}
	if res.Response.IsFenced || !res.Response.IsCaughtUp {
		t.Fatalf("%+v", res.Response)
	}
	if got := types(res.Records); !slices.Equal(got, []string{"BrokerRegistrationChangeRecord"}) {
		t.Fatalf("records %v", got)
	}
	r := res.Records[0].Record.(*metadata.BrokerRegistrationChangeRecord)
	if r.Fenced != -1 || r.BrokerEpoch != epoch || res.Records[0].Version != 0 {
		t.Errorf("%+v v%d", r, res.Records[0].Version)
	}
}

func TestHeartbeatStaleEpoch(t *testing.T) {
	w := newWorld(t, 33, true)
	epoch := w.register(1, 1)
	_, err := w.m.Heartbeat(w.op(), heartbeat(2, 0, 0, false, false))
	wantRefusal(t, err, kerr.StaleBrokerEpoch.Code, "Receive a heartbeat from broker 2 before registration")
	_, err = w.m.Heartbeat(w.op(), heartbeat(1, epoch+1, 0, false, false))
	wantRefusal(t, err, kerr.StaleBrokerEpoch.Code, fmt.Sprintf("Expected broker epoch %d, but got broker epoch %d", epoch, epoch+1))
}

func TestUnfenceElectsLeaderless(t *testing.T) {
	w := newWorld(t, 33, false)
	w.unfence(1)
	e2 := w.unfence(2)
	w.topic([]int32{2, 1})
	// 2 asks to be fenced: it leaves the ISR, 1 leads.
	_, recs := w.beat(2, e2, true, false)
	if got := types(recs); !slices.Equal(got, []string{"PartitionChangeRecord", "BrokerRegistrationChangeRecord"}) {
		t.Fatalf("fence records %v", got)
	}
	if p := w.partition(0); p.Leader() != 1 || !slices.Equal(p.ISR(), []int32{1}) {
		t.Fatalf("after fencing 2: leader %d isr %v", p.Leader(), p.ISR())
	}
	// 1 goes too: ISR stays {1} (ELR off), no leader.
	w.now += DefaultSessionTimeout + time.Second
	recs, again, err := w.m.FenceStaleBroker(w.op())
	if err != nil || !again {
		t.Fatal(err, again)
	}
	w.apply(recs)
	if p := w.partition(0); p.Leader() != -1 || !slices.Equal(p.ISR(), []int32{1}) {
		t.Fatalf("after fencing 1: leader %d isr %v", p.Leader(), p.ISR())
	}
	// 2 is not in the ISR, so unfencing it elects no one; unfencing 1 does.
	resp, recs := w.beat(2, e2, false, false)
	if resp.IsFenced || len(recs) != 1 {
		t.Fatalf("unfence 2: %+v %v", resp, types(recs))
	}
	b1, _ := w.b.Image().Broker(1)
	resp, recs = w.beat(1, b1.Epoch, false, false)
	if resp.IsFenced || !slices.Equal(types(recs), []string{"BrokerRegistrationChangeRecord", "PartitionChangeRecord"}) {
		t.Fatalf("unfence 1: %+v %v", resp, types(recs))
	}
	if p := w.partition(0); p.Leader() != 1 {
		t.Fatalf("leader %d", p.Leader())
	}
}

func TestControlledShutdown(t *testing.T) {
	w := newWorld(t, 33, false)
	e1 := w.unfence(1)
	e2 := w.unfence(2)
	e3 := w.unfence(3)
	w.topic([]int32{1, 2, 3})
	// 3 leads nothing: it may go at once, fenced, out of the ISR.
	if resp, recs := w.beat(3, e3, false, true); !resp.ShouldShutdown || !resp.IsFenced || len(recs) != 2 {
		t.Fatalf("3: %+v %v", resp, types(recs))
	}
	// 1 leads: controlled shutdown moves leadership to 2 and takes 1 out
	// of the ISR.
	resp, recs := w.beat(1, e1, false, true)
	if resp.ShouldShutdown || resp.IsFenced {
		t.Fatalf("1: %+v", resp)
	}
	if got := types(recs); !slices.Equal(got, []string{"BrokerRegistrationChangeRecord", "PartitionChangeRecord"}) {
		t.Fatalf("records %v", got)
	}
	if r := recs[0].Record.(*metadata.BrokerRegistrationChangeRecord); r.InControlledShutdown != 1 || recs[0].Version != 1 {
		t.Errorf("%+v", r)
	}
	if p := w.partition(0); p.Leader() != 2 || !slices.Equal(p.ISR(), []int32{2}) {
		t.Fatalf("leader %d isr %v", p.Leader(), p.ISR())
	}
	shutdownOffset := w.next - 1
	b1, _ := w.b.Image().Broker(1)
	if usable := placement.UsableBrokers(w.b.Image(), w.m.ShuttingDown); len(usable) != 2 || !w.m.ShuttingDown(b1) {
		t.Errorf("usable brokers while 1 shuts down: %+v", usable)
	}
	if s := w.m.Sessions()[0]; s.State != ControlledShutdown || s.ShutdownOffset != shutdownOffset {
		t.Fatalf("session %+v, want offset %d", s, shutdownOffset)
	}
	// 1 waits until every active broker (2; 3 is fenced) has caught up
	// with that offset.
	resp, recs = w.beat(1, e1, false, true)
	if resp.ShouldShutdown || len(recs) != 0 {
		t.Fatalf("too early: %+v %v", resp, types(recs))
	}
	w.m.TrackHeartbeat(2, e2, w.now)
	if _, err := w.m.Heartbeat(w.op(), heartbeat(2, e2, shutdownOffset, false, false)); err != nil {
		t.Fatal(err)
	}
	resp, recs = w.beat(1, e1, false, true)
	if !resp.ShouldShutdown || !resp.IsFenced || !slices.Equal(types(recs), []string{"BrokerRegistrationChangeRecord"}) {
		t.Fatalf("shutdown: %+v %v", resp, types(recs))
	}
}

func TestFenceStaleBroker(t *testing.T) {
	w := newWorld(t, 33, false)
	e1 := w.unfence(1)
	w.now += time.Second
	w.unfence(2)
	// A heartbeat at a wrong epoch is tracked too, and dropped later.
	w.m.TrackHeartbeat(1, e1+100, w.now)
	w.m.TrackHeartbeat(7, 0, w.now)
	w.now += DefaultSessionTimeout
	// Only broker 1's session (a second older) has expired.
	recs, again, err := w.m.FenceStaleBroker(w.op())
	if err != nil || !again || len(recs) != 1 || recs[0].Record.(*metadata.BrokerRegistrationChangeRecord).BrokerId != 1 {
		t.Fatalf("%v %v %v", types(recs), again, err)
	}
	w.apply(recs)
	if _, again, _ := w.m.FenceStaleBroker(w.op()); again {
		t.Fatal("another broker expired")
	}
	w.now += time.Second + 1
	// Now 2 and the two stray entries: one a run; the stray
	// entries write nothing but ask to run again.
	var fenced []int32
	for i := 0; ; i++ {
		recs, again, err := w.m.FenceStaleBroker(w.op())
		if err != nil {
			t.Fatal(err)
		}
		if !again {
			break
		}
		for _, r := range recs {
			if c, ok := r.Record.(*metadata.BrokerRegistrationChangeRecord); ok {
				fenced = append(fenced, c.BrokerId)
			}
		}
		w.apply(recs)
		if i > 5 {
			t.Fatal("no end")
		}
	}
	if !slices.Equal(fenced, []int32{2}) {
		t.Fatalf("fenced %v", fenced)
	}
}

func TestOfflineAndCordonedDirs(t *testing.T) {
	w := newWorld(t, 33, false)
	e1 := w.unfence(1)
	w.unfence(2)
	w.topic([]int32{1, 2})
	req := heartbeat(1, e1, w.next-1, false, false)
	req.OfflineLogDirs = [][16]byte{dirID(1), dirID(77)}
	req.CordonedLogDirs = [][16]byte{}
	w.m.TrackHeartbeat(1, e1, w.now)
	res, err := w.m.Heartbeat(w.op(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := types(res.Records); !slices.Equal(got, []string{"PartitionChangeRecord", "BrokerRegistrationChangeRecord", "BrokerRegistrationChangeRecord"}) {
		t.Fatalf("records %v", got)
	}
	off := res.Records[1].Record.(*metadata.BrokerRegistrationChangeRecord)
	if res.Records[1].Version != 2 || off.LogDirs == nil || len(off.LogDirs) != 0 {
		t.Errorf("offline %+v v%d", off, res.Records[1].Version)
	}
	cord := res.Records[2].Record.(*metadata.BrokerRegistrationChangeRecord)
	if res.Records[2].Version != 3 || cord.CordonedLogDirs == nil || len(cord.CordonedLogDirs) != 0 {
		t.Errorf("cordoned %+v v%d", cord, res.Records[2].Version)
	}
	w.apply(res.Records)
	// Reported again: the cordoned list is the same, but the registration
	// still lists the directory (replay ignores an empty LogDirs, so a
	// broker whose every directory is offline keeps them) and the offline
	// change is written again, as Kafka does.
	res, err = w.m.Heartbeat(w.op(), req)
	if err != nil || !slices.Equal(types(res.Records), []string{"BrokerRegistrationChangeRecord"}) || res.Records[0].Version != 2 {
		t.Fatalf("%v %v", types(res.Records), err)
	}
}

func TestUnregisterBroker(t *testing.T) {
	w := newWorld(t, 33, true)
	w.unfence(1)
	e2 := w.unfence(2)
	w.topic([]int32{1, 2})
	_, err := w.m.UnregisterBroker(w.op(), 9)
	wantRefusal(t, err, kerr.BrokerIDNotRegistered.Code, "Broker ID 9 is not currently registered")
	res, err := w.m.UnregisterBroker(w.op(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := types(res.Records); !slices.Equal(got, []string{"PartitionChangeRecord", "UnregisterBrokerRecord"}) {
		t.Fatalf("records %v", got)
	}
	if u := res.Records[1].Record.(*metadata.UnregisterBrokerRecord); u.BrokerEpoch != e2 {
		t.Errorf("%+v", u)
	}
	w.apply(res.Records)
	if len(w.m.Sessions()) != 1 {
		t.Errorf("sessions %+v", w.m.Sessions())
	}
}

func TestControllerRegistration(t *testing.T) {
	w := newWorld(t, 33, false)
	req := kmsg.NewPtrControllerRegistrationRequest()
	req.ControllerID, req.IncarnationID, req.ZkMigrationReady = 3001, incarnation(1), true
	l := kmsg.NewControllerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "CONTROLLER", "localhost", 9093
	req.Listeners = append(req.Listeners, l)
	res, err := w.m.RegisterController(w.op(), req)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Records[0].Record.(*metadata.RegisterControllerRecord)
	if !res.Atomic || r.ZkMigrationReady || r.ControllerId != 3001 || len(r.EndPoints) != 1 {
		t.Fatalf("%+v", r)
	}
	w.apply(res.Records)
	_, err = w.m.UnregisterController(w.op(), 3000)
	wantRefusal(t, err, kerr.InvalidRequest.Code, "Controller cannot unregister itself while it is active.")
	_, err = w.m.UnregisterController(w.op(), 3002)
	wantRefusal(t, err, 136, "Controller ID 3002 is not currently registered.")
	if res, err = w.m.UnregisterController(w.op(), 3001); err != nil || len(res.Records) != 1 {
		t.Fatal(err)
	}

	old := newWorld(t, 14, false)
	_, err = old.m.RegisterController(old.op(), req)
	wantRefusal(t, err, kerr.UnsupportedVersion.Code, "The current MetadataVersion is too old to support controller registrations.")
	old = newWorld(t, 32, false)
	_, err = old.m.UnregisterController(old.op(), 3001)
	wantRefusal(t, err, kerr.UnsupportedVersion.Code, "The current MetadataVersion is too old to support controller unregistration.")
}

func TestActivateTracksUnfencedBrokers(t *testing.T) {
	w := newWorld(t, 33, false)
	w.unfence(1)
	w.register(2, 2)
	m := Activate(w.m.Settings(), w.b.Image(), 0)
	ss := m.Sessions()
	if len(ss) != 2 || ss[0].State != Unfenced || ss[1].State != Fenced {
		t.Fatalf("%+v", ss)
	}
	w.now = DefaultSessionTimeout + 1
	if recs, again, _ := m.FenceStaleBroker(Op{Image: w.b.Image(), Now: w.now}); !again || len(recs) != 1 {
		t.Fatalf("%v %v", types(recs), again)
	}
	if _, again, _ := m.FenceStaleBroker(Op{Image: w.b.Image(), Now: w.now}); again {
		t.Fatal("the fenced broker 2 had no session to expire")
	}
}

func TestSessionOffsets(t *testing.T) {
	w := newWorld(t, 33, false)
	e1 := w.register(1, 1)
	// Unfencing: the heartbeat sets the offset, then the unfence record's
	// replay registers the broker again with an unchanged fenced flag,
	// which resets it to -1 (Kafka's BrokerHeartbeatManager.register).
	w.beat(1, e1, false, false)
	if s := w.m.Sessions()[0]; s.State != Unfenced || s.MetadataOffset != -1 {
		t.Fatalf("after unfencing: %+v", s)
	}
	w.beat(1, e1, false, false)
	if s := w.m.Sessions()[0]; s.MetadataOffset != w.next-1 {
		t.Fatalf("after a heartbeat: %+v, want offset %d", s, w.next-1)
	}
	// A heartbeat that waited too long touches the session and times out.
	err := w.m.ExpiredHeartbeat(w.b.Image(), heartbeat(1, e1, 99, false, false))
	var e *Error
	if !errors.As(err, &e) || e.Code != kerr.RequestTimedOut.Code || w.m.Sessions()[0].MetadataOffset != 99 {
		t.Fatalf("%v %+v", err, w.m.Sessions()[0])
	}
	if err := w.m.ExpiredHeartbeat(w.b.Image(), heartbeat(1, e1+1, 5, false, false)); !errors.Is(err, kerr.RequestTimedOut) || w.m.Sessions()[0].MetadataOffset != 99 {
		t.Fatalf("stale epoch: %v %+v", err, w.m.Sessions()[0])
	}
}

func TestUnregisterTooManyRecords(t *testing.T) {
	w := newWorld(t, 33, false)
	w.unfence(1)
	w.unfence(2)
	rs := make([][]int32, maxRecords)
	for i := range rs {
		rs[i] = []int32{1, 2}
	}
	w.topic(rs...)
	// 10000 partition changes and the unregistration: one too many.
	_, err := w.m.UnregisterBroker(w.op(), 2)
	wantRefusal(t, err, kerr.PolicyViolation.Code, "Unable to perform excessively large batch operation.")
	// Fencing has no such bound.
	b, _ := w.b.Image().Broker(2)
	if recs, err := w.m.fenceRecords(w.b.Image(), b); err != nil || len(recs) != maxRecords+1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
}
