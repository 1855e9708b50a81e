package featurecontrol

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// fakeRaft records the kraft.version upgrades it is asked for and answers
// with err.
type fakeRaft struct {
	calls []string
	err   error
}

func (f *fakeRaft) UpgradeKRaftVersion(level int16, validateOnly bool) error {
	f.calls = append(f.calls, fmt.Sprintf("%d/%v", level, validateOnly))
	return f.err
}

// state is a 4.4 cluster at metadata.version mv with the default
// finalized features, controller 1 of static voters 1-3 (all registered
// with Kafka 4.4's ranges) and brokers 101-103.
func state(mv int16) State {
	s := State{NodeID: 1, Local: features.Supported(), MetadataVersion: mv, KRaftVersion: 1,
		Finalized:     map[string]int16{"eligible.leader.replicas.version": 1, "group.version": 1, "transaction.version": 2},
		QuorumNodeIDs: []int32{1, 2, 3}, StaticMinISR: "2", MinISRBrokers: map[int32]bool{}}
	for _, id := range []int32{1, 2, 3} {
		s.Controllers = append(s.Controllers, Node{ID: id, Features: features.Supported()})
	}
	for _, id := range []int32{101, 102, 103} {
		s.Brokers = append(s.Brokers, Node{ID: id, Features: features.Supported()})
	}
	return s
}

func up(feature string, level int16) Update {
	return Update{Feature: feature, Level: level, Type: TypeUpgrade}
}

// describe is a decision as one line: the records, or the refusal.
func describe(d Decision, err error) string {
	if err != nil {
		return "fatal: " + err.Error()
	}
	if d.Err != nil {
		return fmt.Sprintf("%s: %s", kerr.ErrorForCode(d.Err.Code).(*kerr.Error).Message, d.Err.Message)
	}
	var parts []string
	for _, r := range d.Records {
		switch v := r.Record.(type) {
		case *metadata.FeatureLevelRecord:
			parts = append(parts, fmt.Sprintf("%s=%d", v.Name, v.FeatureLevel))
		case *metadata.ConfigRecord:
			val := "null"
			if v.Value != nil {
				val = *v.Value
			}
			parts = append(parts, fmt.Sprintf("config %d/%q %s=%s", v.ResourceType, v.ResourceName, v.Name, val))
		default:
			parts = append(parts, r.Record.TypeName())
		}
	}
	return "ok [" + strings.Join(parts, ", ") + "]"
}

func TestDecide(t *testing.T) {
	const inv = "INVALID_UPDATE_VERSION: "
	for _, tc := range []struct {
		name     string
		mv       int16
		edit     func(*State)
		updates  []Update
		validate bool
		want     string
	}{
		{name: "metadata.version upgrade", mv: 29, updates: []Update{up("metadata.version", 33)}, want: "ok [metadata.version=33]"},
		{name: "metadata.version unchanged is written", mv: 33, updates: []Update{up("metadata.version", 33)}, want: "ok [metadata.version=33]"},
		{name: "downgrade without a downgrade type", mv: 33, updates: []Update{up("metadata.version", 32)},
			want: inv + "Invalid update version 32 for feature metadata.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."},
		{name: "safe downgrade across a change", mv: 33, updates: []Update{{"metadata.version", 32, TypeSafeDowngrade}},
			want: inv + "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the requested downgrade because it might delete metadata information."},
		{name: "unsafe downgrade across a change", mv: 33, updates: []Update{{"metadata.version", 31, TypeUnsafeDowngrade}},
			want: inv + "Unsupported metadata.version downgrade from 33 to 31. Unsafe metadata downgrade is not supported in this version."},
		{name: "downgrade across no change", mv: 29, updates: []Update{{"metadata.version", 24, TypeUnsafeDowngrade}}, want: "ok [metadata.version=24]"},
		{name: "upgrade with a downgrade type", mv: 29, updates: []Update{{"metadata.version", 33, TypeSafeDowngrade}},
			want: inv + "Invalid update version 33 for feature metadata.version. Can't downgrade to a newer version."},
		{name: "above the local range", mv: 33, updates: []Update{up("metadata.version", 34)},
			want: inv + "Invalid update version 34 for feature metadata.version. Local controller 1 only supports versions 7-33"},
		{name: "negative level", mv: 33, updates: []Update{up("group.version", -1)},
			want: inv + "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."},
		{name: "unknown type", mv: 33, updates: []Update{{"group.version", 1, 0}},
			want: inv + "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."},
		{name: "type 4", mv: 33, updates: []Update{{"group.version", 1, 4}},
			want: inv + "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."},
		{name: "unknown feature", mv: 33, updates: []Update{up("bogus", 1)},
			want: inv + "Invalid update version 1 for feature bogus. Local controller 1 does not support this feature."},
		{name: "unknown feature at level 0", mv: 33, updates: []Update{up("bogus", 0)},
			want: inv + "Invalid update version 0 for feature bogus. Feature bogus not found."},
		{name: "feature removed", mv: 33, updates: []Update{{"group.version", 0, TypeSafeDowngrade}}, want: "ok [group.version=0]"},
		{name: "feature unchanged", mv: 33, updates: []Update{up("transaction.version", 2)}, want: "ok [transaction.version=2]"},
		{name: "broker without the feature", mv: 33, edit: func(s *State) {
			s.Brokers[1].Features = []features.Range{{Name: "metadata.version", Min: 7, Max: 33}}
			s.Brokers[2].Features = s.Brokers[1].Features
		}, updates: []Update{{"group.version", 0, TypeSafeDowngrade}, up("share.version", 2)},
			// 102 before 103 in Kafka's TimelineHashMap of three brokers.
			want: inv + "Invalid update version 2 for feature share.version. Broker 102 does not support this feature."},
		{name: "broker range", mv: 33, edit: func(s *State) {
			s.Brokers[0].Features = []features.Range{{Name: "share.version", Min: 0, Max: 1}}
		}, updates: []Update{up("share.version", 2)},
			want: inv + "Invalid update version 2 for feature share.version. Broker 101 only supports versions 0-1"},
		{name: "broker range of one level", mv: 33, edit: func(s *State) {
			s.Brokers[0].Features = []features.Range{{Name: "share.version", Min: 1, Max: 1}}
		}, updates: []Update{up("share.version", 2)},
			want: inv + "Invalid update version 2 for feature share.version. Broker 101 only supports versions 1"},
		{name: "controller range", mv: 33, edit: func(s *State) {
			s.Controllers[2].Features = []features.Range{{Name: "share.version", Min: 0, Max: 1}}
		}, updates: []Update{up("share.version", 2)},
			want: inv + "Invalid update version 2 for feature share.version. Controller 3 only supports versions 0-1"},
		{name: "own registration not checked", mv: 33, edit: func(s *State) { s.Controllers[0].Features = nil },
			updates: []Update{up("share.version", 2)}, want: "ok [share.version=2]"},
		{name: "voter not registered", mv: 33, edit: func(s *State) { s.Controllers = s.Controllers[:2] },
			updates: []Update{up("share.version", 2)},
			want:    inv + "Invalid update version 2 for feature share.version. controller 3 has not registered, and may not support this feature"},
		{name: "controllers unchecked before 3.7-IV0", mv: 14, edit: func(s *State) {
			s.Controllers = nil
			s.Finalized = map[string]int16{}
		}, updates: []Update{up("group.version", 1)}, want: "ok [group.version=1]"},
		{name: "dependency", mv: 22, edit: func(s *State) { s.Finalized = map[string]int16{} },
			updates: []Update{up("eligible.leader.replicas.version", 1)},
			want:    inv + "Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"},
		{name: "dependency met by the same request", mv: 22, edit: func(s *State) { s.Finalized = map[string]int16{} },
			updates: []Update{up("eligible.leader.replicas.version", 1), up("metadata.version", 23)},
			want:    "ok [config 4/\"\" min.insync.replicas=2, metadata.version=23, eligible.leader.replicas.version=1]"},
		{name: "HashMap order picks the error", mv: 33, updates: []Update{up("metadata.version", 34), up("group.version", 9)},
			want: inv + "Invalid update version 9 for feature group.version. Local controller 1 only supports versions 0-1"},
		{name: "a repeated feature keeps its last level", mv: 29, updates: []Update{up("metadata.version", 40), up("metadata.version", 33)},
			want: "ok [metadata.version=33]"},
		{name: "validate only", mv: 29, validate: true, updates: []Update{up("metadata.version", 33), up("kraft.version", 1)}, want: "ok []"},
		{name: "kraft.version upgrade waits on a NoOp", mv: 33, edit: func(s *State) { s.KRaftVersion = 0 },
			updates: []Update{up("kraft.version", 1)}, want: "ok [NoOpRecord]"},
		{name: "kraft.version downgrade", mv: 33, updates: []Update{{"kraft.version", 0, TypeSafeDowngrade}},
			want: inv + "Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature."},
		{name: "kraft.version unchanged by a downgrade type", mv: 33, updates: []Update{{"kraft.version", 1, TypeSafeDowngrade}}, want: "ok []"},
		{name: "kraft.version 2", mv: 33, updates: []Update{up("kraft.version", 2)},
			want: inv + "Invalid update version 2 for feature kraft.version. Local controller 1 only supports versions 0-1"},
		{name: "ELR safety records", mv: 33, edit: func(s *State) {
			s.Finalized = map[string]int16{}
			s.BrokersWithConfigs = []int32{101, 102, 103}
			s.MinISRBrokers = map[int32]bool{101: true, 103: true}
		}, updates: []Update{up("eligible.leader.replicas.version", 1)},
			want: "ok [config 4/\"\" min.insync.replicas=2, config 4/\"101\" min.insync.replicas=null, config 4/\"103\" min.insync.replicas=null, eligible.leader.replicas.version=1]"},
		{name: "ELR already on: no cluster record when one exists", mv: 33, edit: func(s *State) { s.ClusterMinISR = true },
			updates: []Update{up("eligible.leader.replicas.version", 1)}, want: "ok [eligible.leader.replicas.version=1]"},
		{name: "ELR off: no safety records", mv: 33, updates: []Update{{"eligible.leader.replicas.version", 0, TypeSafeDowngrade}},
			want: "ok [eligible.leader.replicas.version=0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := state(tc.mv)
			if tc.edit != nil {
				tc.edit(&s)
			}
			kr := &fakeRaft{}
			if got := describe(Decide(tc.updates, tc.validate, s, kr)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// The kraft.version upgrade reaches raft as Kafka meets it in its map's
// order: before a later refusal (which does not undo it), with
// validateOnly passed on, and raft's refusal or failure is the answer.
func TestDecideKRaftVersion(t *testing.T) {
	s := state(33)
	s.KRaftVersion = 0
	kr := &fakeRaft{}
	// kraft.version comes before share.version in Kafka's HashMap.
	d, err := Decide([]Update{up("share.version", 9), up("kraft.version", 1)}, false, s, kr)
	if err != nil || d.Err == nil || len(kr.calls) != 1 || kr.calls[0] != "1/false" {
		t.Fatalf("decision %+v %v, raft calls %v", d, err, kr.calls)
	}
	kr = &fakeRaft{}
	if d, err := Decide([]Update{up("kraft.version", 1)}, true, s, kr); err != nil || d.Err != nil || len(d.Records) != 0 || kr.calls[0] != "1/true" {
		t.Fatalf("validate only: %+v %v %v", d, err, kr.calls)
	}
	refusal := &Error{Code: kerr.InvalidUpdateVersion.Code, Message: "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it"}
	kr = &fakeRaft{err: refusal}
	if d, err := Decide([]Update{up("kraft.version", 1)}, false, s, kr); err != nil || d.Err != refusal {
		t.Fatalf("raft refusal: %+v %v", d, err)
	}
	failure := errors.New("not the leader")
	kr = &fakeRaft{err: failure}
	if _, err := Decide([]Update{up("kraft.version", 1)}, false, s, kr); !errors.Is(err, failure) {
		t.Fatalf("raft failure: %v", err)
	}
}

// An empty request changes nothing and succeeds.
func TestDecideEmpty(t *testing.T) {
	d, err := Decide(nil, false, state(33), &fakeRaft{})
	if err != nil || d.Err != nil || len(d.Records) != 0 {
		t.Fatalf("%+v %v", d, err)
	}
}
