package controllerload

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
)

// TestHarnessAgainstKraftd drives a single-voter kraftd active controller
// with the harness: brokers register and are unfenced, topics are created
// and deleted, a stopped broker is fenced after its session, and what the
// controller answered is what its metadata log holds.
func TestHarnessAgainstKraftd(t *testing.T) {
	k := kafkatest.StartKraftd(t, kafkatest.KraftdConfig{NodeID: 1, Props: kafkatest.Props{
		config.ActiveControllerKey:  "true",
		"broker.session.timeout.ms": "1500",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	finder := NewFinder(map[int32]string{1: k.Addr})
	if _, id, err := finder.Active(ctx); err != nil || id != 1 {
		t.Fatalf("active controller: %d, %v", id, err)
	}
	if finder.ClusterID() != k.ClusterID {
		t.Fatalf("cluster id %q, the node's %q", finder.ClusterID(), k.ClusterID)
	}
	go finder.PollHighWatermark(ctx, 100*time.Millisecond)

	const brokers = 4
	fleet := NewFleet(FleetConfig{Brokers: brokers, HeartbeatInterval: 200 * time.Millisecond, Racks: 2}, finder)
	fleet.Start(ctx)
	defer fleet.Close()
	if err := fleet.WaitUnfenced(ctx, brokers); err != nil {
		t.Fatal(err)
	}

	create := StartLoad(ctx, finder, CreateTopics("t", 2, 3), LoadConfig{Conns: 2, Count: 6})
	<-create.Done()
	all := create.Samples(time.Time{}, time.Now().Add(time.Hour))
	w := Summarize(all, time.Second)
	if w.OK != 6 || w.Parts != 12 || len(w.Errors) != 0 {
		t.Fatalf("creates: %d answered without error, %d partitions, errors %v", w.OK, w.Parts, w.Errors)
	}

	follower := FollowLog(filepath.Join(k.LogDir, topics.ClusterMetadata+"-0"))
	if err := follower.Poll(); err != nil {
		t.Fatal(err)
	}
	im := follower.Image()
	if c := im.Counts(); c.Topics != 6 || c.Partitions != 12 || c.ActiveBrokers != brokers {
		t.Fatalf("the log's image: %+v", c)
	}
	for _, b := range fleet.Brokers() {
		reg, ok := im.Broker(b.ID)
		if !ok || reg.IncarnationID != b.Incarnation || reg.Epoch != b.Epoch() || reg.Rack == nil {
			t.Fatalf("broker %d in the log: %+v (registered at epoch %d)", b.ID, reg, b.Epoch())
		}
	}
	// The poller's high watermark reaches what the log held then (within a
	// hang bound: the tail may not have committed yet).
	for end := follower.Next(); finder.HighWatermark() < end; time.Sleep(50 * time.Millisecond) {
		if ctx.Err() != nil {
			t.Fatalf("polled high watermark %d, the log ended at %d", finder.HighWatermark(), end)
		}
	}

	del := StartLoad(ctx, finder, DeleteTopics("t", 2), LoadConfig{Conns: 1, Count: 6})
	<-del.Done()
	if w := del.Summarize(time.Time{}, time.Now().Add(time.Hour)); w.OK != 6 || w.Parts != 12 {
		t.Fatalf("deletes: %d answered without error, %d partitions, errors %v", w.OK, w.Parts, w.Errors)
	}

	// A stopped broker is fenced once its session (1.5 s) runs out.
	stopped := fleet.Brokers()[0]
	stopped.Stop()
	for {
		if err := follower.Poll(); err != nil {
			t.Fatal(err)
		}
		if b, _ := follower.Image().Broker(stopped.ID); b != nil && b.Fenced {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("broker %d never fenced in the log", stopped.ID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if c := follower.Image().Counts(); c.Topics != 0 || c.ActiveBrokers != brokers-1 {
		t.Fatalf("the log's image after deletes and a fencing: %+v", c)
	}
	if hb := fleet.Heartbeats.Summarize(time.Time{}, time.Now()); hb.OK == 0 || hb.P99 <= 0 {
		t.Fatalf("heartbeats: %+v", hb)
	}

	s := SampleUsage(ctx, k.Pid(), 50*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	s.Stop()
	if u := s.Window(time.Time{}, time.Now()); u.MaxRSS <= 0 {
		t.Fatalf("usage of the controller: %+v", u)
	}
}
