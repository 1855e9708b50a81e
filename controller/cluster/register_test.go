package cluster

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol/metadata"
)

const unexpectedMsg = "The server experienced an unexpected error when processing the request."

const dupMsg = "Another broker is registered with that broker id. If the broker was recently restarted this should self-resolve once the heartbeat manager expires the broker's session."

func TestRegisterRefusals(t *testing.T) {
	w := newWorld(t, metadata.LatestProductionLevel, true)
	w.unfence(1)
	w.replay(&metadata.FeatureLevelRecord{Name: "group.version", FeatureLevel: 1}, 0)
	feature := func(name string, lo, hi int16) kmsg.BrokerRegistrationRequestFeature {
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = name, lo, hi
		return f
	}
	withGroup := func(r *kmsg.BrokerRegistrationRequest) {
		r.Features = append(r.Features, feature("group.version", 0, 1))
	}
	cases := []struct {
		name string
		edit func(r *kmsg.BrokerRegistrationRequest)
		code int16
		msg  string
	}{
		{"cluster id", func(r *kmsg.BrokerRegistrationRequest) { r.ClusterID = "other" },
			kerr.InconsistentClusterID.Code, "Expected cluster ID " + testCluster + ", but got cluster ID other"},
		{"cluster id before duplicate", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID, r.ClusterID = 1, "x" },
			kerr.InconsistentClusterID.Code, "Expected cluster ID " + testCluster + ", but got cluster ID x"},
		{"duplicate in session", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID, r.IncarnationID = 1, incarnation(9) },
			kerr.DuplicateBrokerRegistration.Code, dupMsg},
		{"duplicate before zk", func(r *kmsg.BrokerRegistrationRequest) {
			r.BrokerID, r.IncarnationID, r.IsMigratingZkBroker = 1, incarnation(9), true
		}, kerr.DuplicateBrokerRegistration.Code, dupMsg},
		{"zk broker", func(r *kmsg.BrokerRegistrationRequest) { r.IsMigratingZkBroker = true },
			kerr.BrokerIDNotRegistered.Code, "Controller does not support registering ZK brokers."},
		{"no dirs", func(r *kmsg.BrokerRegistrationRequest) { r.LogDirs = nil },
			kerr.InvalidRegistration.Code, "No directories specified in request"},
		{"reserved dir", func(r *kmsg.BrokerRegistrationRequest) { r.LogDirs = append(r.LogDirs, [16]byte{15: 99}) },
			kerr.InvalidRegistration.Code, "Reserved directory ID in request"},
		{"reserved dir, negative low half", func(r *kmsg.BrokerRegistrationRequest) { r.LogDirs = [][16]byte{{8: 0x80}} },
			kerr.InvalidRegistration.Code, "Reserved directory ID in request"},
		{"duplicate dir", func(r *kmsg.BrokerRegistrationRequest) { r.LogDirs = append(r.LogDirs, r.LogDirs[0]) },
			kerr.InvalidRegistration.Code, "Duplicate directory ID in request"},
		{"dir of another broker", func(r *kmsg.BrokerRegistrationRequest) { r.LogDirs = [][16]byte{dirID(1)} },
			kerr.InvalidRegistration.Code, "Broker 1 is already registered with directory gAAAAAAAAAAAAAAAAAAAAQ"},
		{"unknown security protocol", func(r *kmsg.BrokerRegistrationRequest) { r.Listeners[0].SecurityProtocol = 4 },
			kerr.UnknownServerError.Code, unexpectedMsg},
		{"ephemeral port", func(r *kmsg.BrokerRegistrationRequest) { r.Listeners[0].Port = 0 },
			kerr.UnknownServerError.Code, unexpectedMsg},
		{"blank host", func(r *kmsg.BrokerRegistrationRequest) { r.Listeners[0].Host = " \t" },
			kerr.UnknownServerError.Code, unexpectedMsg},
		{"dirs before listeners", func(r *kmsg.BrokerRegistrationRequest) { r.LogDirs, r.Listeners[0].Port = nil, 0 },
			kerr.InvalidRegistration.Code, "No directories specified in request"},
		{"metadata.version too high", func(r *kmsg.BrokerRegistrationRequest) { r.Features[0] = feature("metadata.version", 7, 32) },
			kerr.UnsupportedVersion.Code, "Unable to register because the broker does not support finalized version 33 of metadata.version. The broker wants a version between 7 and 32, inclusive."},
		{"unknown feature above 0", func(r *kmsg.BrokerRegistrationRequest) { r.Features = append(r.Features, feature("x.version", 1, 2)) },
			kerr.UnsupportedVersion.Code, "Unable to register because the broker does not support finalized version 0 of x.version. The broker wants a version between 1 and 2, inclusive."},
		{"no metadata.version", func(r *kmsg.BrokerRegistrationRequest) { r.Features = r.Features[1:] },
			kerr.InvalidRegistration.Code, "Request features do not contain 'metadata.version'"},
		{"finalized feature not listed", func(r *kmsg.BrokerRegistrationRequest) {},
			kerr.UnsupportedVersion.Code, "Unable to register because the broker does not support finalized version 1 of group.version. The broker wants a version between 0 and 0, inclusive."},
		{"kraft.version counts", func(r *kmsg.BrokerRegistrationRequest) {
			withGroup(r)
			r.Features[1] = feature("kraft.version", 1, 1)
		}, kerr.UnsupportedVersion.Code, "Unable to register because the broker does not support finalized version 0 of kraft.version. The broker wants a version between 1 and 1, inclusive."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := registration(2, 2)
			if c.name != "finalized feature not listed" && c.name != "kraft.version counts" {
				withGroup(r)
			}
			c.edit(r)
			_, err := w.m.RegisterBroker(w.op(), r)
			wantRefusal(t, err, c.code, c.msg)
		})
	}
}

func TestRegisterRecordVersions(t *testing.T) {
	for _, c := range []struct {
		mv      metadata.Level
		version int16
		dirs    bool
	}{{7, 1, false}, {8, 2, false}, {17, 3, true}, {29, 3, true}, {30, 4, true}, {33, 4, true}} {
		w := newWorld(t, c.mv, false)
		w.next = 41
		r := registration(5, 5)
		r.Features[0].MinSupportedVersion = 7
		r.Features = r.Features[:1]
		res, err := w.m.RegisterBroker(w.op(), r)
		if err != nil {
			t.Fatalf("mv %d: %v", c.mv, err)
		}
		if len(res.Records) != 1 || res.Records[0].Version != c.version || res.Atomic {
			t.Fatalf("mv %d: %d records, version %d, atomic %v", c.mv, len(res.Records), res.Records[0].Version, res.Atomic)
		}
		rec := res.Records[0].Record.(*metadata.RegisterBrokerRecord)
		if rec.BrokerEpoch != 41 || res.Response.BrokerEpoch != 41 || !rec.Fenced || rec.InControlledShutdown {
			t.Errorf("mv %d: %+v", c.mv, rec)
		}
		if (len(rec.LogDirs) == 1) != c.dirs || rec.CordonedLogDirs != nil {
			t.Errorf("mv %d: log dirs %v, cordoned %v", c.mv, rec.LogDirs, rec.CordonedLogDirs)
		}
	}
}

func TestRegisterListenersAndFeaturesAsSent(t *testing.T) {
	w := newWorld(t, 33, false)
	r := registration(2, 2)
	l := r.Listeners[0]
	l2 := l
	l2.Name, l2.Port = "SSL", 9999
	l3 := l
	l3.Host = "other"
	r.Listeners = []kmsg.BrokerRegistrationRequestListener{l, l2, l3}
	res, err := w.m.RegisterBroker(w.op(), r)
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Records[0].Record.(*metadata.RegisterBrokerRecord)
	if len(rec.EndPoints) != 2 || rec.EndPoints[0].Name != "PLAINTEXT" || rec.EndPoints[0].Host != "other" || rec.EndPoints[1].Name != "SSL" {
		t.Errorf("endpoints %+v", rec.EndPoints)
	}
	if len(rec.Features) != 3 || rec.Features[1].Name != "kraft.version" {
		t.Errorf("features %+v", rec.Features)
	}
}

func TestRegisterAmendAndNewIncarnation(t *testing.T) {
	w := newWorld(t, 33, false)
	e1 := w.unfence(1)
	w.unfence(2)
	w.topic([]int32{1, 2})
	// The same incarnation again: same epoch and flags, no cleanup.
	w.now += time.Second
	res, err := w.m.RegisterBroker(w.op(), registration(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Records[0].Record.(*metadata.RegisterBrokerRecord)
	if len(res.Records) != 1 || rec.BrokerEpoch != e1 || rec.Fenced || res.Response.BrokerEpoch != e1 {
		t.Fatalf("amend: %d records, %+v", len(res.Records), rec)
	}
	w.apply(res.Records)

	// A new incarnation within the session is refused; after it, accepted,
	// and broker 1 first leaves the ISR (ELR off: a plain removal).
	if _, err := w.m.RegisterBroker(w.op(), registration(1, 7)); err == nil {
		t.Fatal("new incarnation within the session accepted")
	}
	w.now += DefaultSessionTimeout + time.Millisecond
	next := w.next
	res, err = w.m.RegisterBroker(w.op(), registration(1, 7))
	if err != nil {
		t.Fatal(err)
	}
	if got := types(res.Records); !slices.Equal(got, []string{"PartitionChangeRecord", "RegisterBrokerRecord"}) {
		t.Fatalf("records %v", got)
	}
	pc := res.Records[0].Record.(*metadata.PartitionChangeRecord)
	if pc.Leader != 2 || !slices.Equal(pc.Isr, []int32{2}) {
		t.Errorf("cleanup %+v", pc)
	}
	rec = res.Records[1].Record.(*metadata.RegisterBrokerRecord)
	if rec.BrokerEpoch != next || !rec.Fenced {
		t.Errorf("new incarnation %+v, want epoch %d (the op's first offset)", rec, next)
	}
}

func TestRegisterUncleanShutdownWithELR(t *testing.T) {
	for _, clean := range []bool{false, true} {
		w := newWorld(t, 33, true)
		w.replay(&metadata.ConfigRecord{ResourceType: 4, ResourceName: "", Name: "min.insync.replicas", Value: ptr("2")}, 0)
		e1 := w.unfence(1)
		w.unfence(2)
		w.unfence(3)
		w.topic([]int32{1, 2, 3})
		// Broker 1 restarts after its session expired.
		w.now += DefaultSessionTimeout + time.Second
		r := registration(1, 9)
		if clean {
			r.PreviousBrokerEpoch = e1
		}
		res, err := w.m.RegisterBroker(w.op(), r)
		if err != nil {
			t.Fatal(err)
		}
		pc := res.Records[0].Record.(*metadata.PartitionChangeRecord)
		// Both leave 1 out of the ISR and elect 2; only the unclean one
		// keeps 1 out of the ELR too (its data may be lost); ISR {2,3}
		// reaches min ISR 2, so the ELR stays empty either way.
		if pc.Leader != 2 || !slices.Equal(pc.Isr, []int32{2, 3}) {
			t.Errorf("clean %v: %+v", clean, pc)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestUnexpectedRefusalsKeepTheCause(t *testing.T) {
	w := newWorld(t, 33, false)
	r := registration(2, 2)
	r.Listeners[0].Port = 0
	_, err := w.m.RegisterBroker(w.op(), r)
	var e *Error
	if !errors.As(err, &e) || e.Message != unexpectedMsg || e.Detail != "java.lang.RuntimeException: Cannot serialize ephemeral port 0 in ListenerInfo." {
		t.Fatalf("%#v", err)
	}
}
