package partitionchange

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

var topic = uuid.UUID{0: 1, 15: 7}

func in(ids ...int32) func(int32) bool {
	return func(b int32) bool {
		for _, id := range ids {
			if id == b {
				return true
			}
		}
		return false
	}
}

func defaultDirs(b int32) uuid.UUID { return uuid.UUID{0: 0xd, 15: byte(b)} }

// ctx is a 4.4-IV2 cluster with ELR off, min ISR 1, brokers 1-4 active.
func ctx() Context {
	return Context{TopicID: topic, PartitionID: 3, MetadataVersion: metadata.LatestProductionLevel,
		MinISR: 1, Acceptable: in(1, 2, 3, 4), DefaultDir: defaultDirs}
}

// change is the record's fields a test looks at (nil slices: not set).
type change struct {
	Leader                                          int32
	Isr, Replicas, Removing, Adding, Elr, LastKnown []int32
	LRS                                             int8
	Dirs                                            [][16]byte
}

func unchanged() change { return change{Leader: NoLeaderChange, LRS: -1} }

func build(t *testing.T, p Partition, c Context, set func(*Builder)) *change {
	t.Helper()
	b := New(p, c)
	if set != nil {
		set(b)
	}
	rec, version, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if rec == nil {
		return nil
	}
	if want, _ := c.MetadataVersion.RecordVersion(metadata.PartitionChangeRecordAPIKey); version != want {
		t.Fatalf("version %d, want %d", version, want)
	}
	if rec.TopicId != topic || rec.PartitionId != 3 {
		t.Fatalf("record names %v-%d", rec.TopicId, rec.PartitionId)
	}
	return &change{rec.Leader, rec.Isr, rec.Replicas, rec.RemovingReplicas, rec.AddingReplicas,
		rec.EligibleLeaderReplicas, rec.LastKnownElr, rec.LeaderRecoveryState, rec.Directories}
}

func check(t *testing.T, got *change, want change) {
	t.Helper()
	if got == nil {
		t.Fatalf("no record, want %+v", want)
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("got  %+v\nwant %+v", *got, want)
	}
}

func with(f func(*change)) change {
	c := unchanged()
	f(&c)
	return c
}

func p123() Partition {
	return Partition{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1, LeaderEpoch: 5, PartitionEpoch: 9}
}

func TestNothingChanges(t *testing.T) {
	if got := build(t, p123(), ctx(), nil); got != nil {
		t.Fatalf("%+v", got)
	}
	// Targets equal to the current state change nothing either.
	got := build(t, p123(), ctx(), func(b *Builder) {
		b.SetTargetISR([]int32{1, 2, 3}).SetTargetReplicas([]int32{1, 2, 3}).SetTargetLeaderRecoveryState(Recovered)
	})
	if got != nil {
		t.Fatalf("%+v", got)
	}
}

func TestElections(t *testing.T) {
	// The current leader stays while it may.
	if got := build(t, p123(), ctx(), func(b *Builder) { b.SetElection(Preferred) }); got != nil {
		t.Fatalf("preferred leader already leads: %+v", got)
	}
	p := p123()
	p.Leader = 2
	check(t, build(t, p, ctx(), func(b *Builder) { b.SetElection(Preferred) }), with(func(c *change) { c.Leader = 1 }))
	if got := build(t, p, ctx(), nil); got != nil {
		t.Fatalf("online keeps a valid leader: %+v", got)
	}
	// A leader that may not lead is replaced by the first valid replica.
	c := ctx()
	c.Acceptable = in(3, 4)
	check(t, build(t, p, c, nil), with(func(c *change) { c.Leader = 3 }))
	// Preferred goes to the rest of the replicas when the first cannot lead.
	check(t, build(t, p, c, func(b *Builder) { b.SetElection(Preferred) }), with(func(c *change) { c.Leader = 3 }))
	// No valid replica: no leader, the ISR as asked.
	c.Acceptable = in(4)
	check(t, build(t, p, c, nil), with(func(c *change) { c.Leader = NoLeader }))
	// Unclean: the first acceptable replica, outside the ISR, alone in the
	// ISR and recovering.
	p = Partition{Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1}, Leader: 1}
	c.Acceptable = in(3, 4)
	check(t, build(t, p, c, func(b *Builder) { b.SetElection(Unclean) }),
		with(func(c *change) { c.Leader, c.Isr, c.LRS = 3, []int32{3}, Recovering }))
	// Already recovering: the state is not written again.
	p.LeaderRecoveryState = Recovering
	check(t, build(t, p, c, func(b *Builder) { b.SetElection(Unclean) }),
		with(func(c *change) { c.Leader, c.Isr = 3, []int32{3} }))
	// A new clean leader keeps the recovery state as it is.
	p.ISR = []int32{1, 3}
	check(t, build(t, p, c, nil), with(func(c *change) { c.Leader = 3 }))
}

func TestLeaderEpochBumps(t *testing.T) {
	shrink := func(b *Builder) { b.SetTargetISR([]int32{1, 2}) }
	// From 3.6-IV0 an ISR shrink leaves the leader (and its epoch) alone.
	check(t, build(t, p123(), ctx(), shrink), with(func(c *change) { c.Isr = []int32{1, 2} }))
	// Before, the record names the same leader to bump the epoch.
	old := ctx()
	old.MetadataVersion = 11 // 3.5-IV2
	check(t, build(t, p123(), old, shrink), with(func(c *change) { c.Isr, c.Leader = []int32{1, 2}, 1 }))
	// An expansion never bumps.
	p := p123()
	p.ISR = []int32{1, 2}
	check(t, build(t, p, old, func(b *Builder) { b.SetTargetISR([]int32{1, 2, 3}) }),
		with(func(c *change) { c.Isr = []int32{1, 2, 3} }))
	// An empty target ISR is not written without ELR, and bumps nothing
	// itself; the leader, out of it, goes.
	check(t, build(t, p123(), old, func(b *Builder) { b.SetTargetISR(nil) }),
		with(func(c *change) { c.Leader = NoLeader }))
	// Dropping a replica bumps the epoch even when the leader stays.
	check(t, build(t, p123(), ctx(), func(b *Builder) { b.SetTargetReplicas([]int32{1, 2}) }),
		with(func(c *change) {
			c.Leader, c.Replicas = 1, []int32{1, 2}
			c.Dirs = [][16]byte{{}, {}}
		}))
	// Reordering does not (and the directories, all MIGRATING, read the
	// same).
	check(t, build(t, p123(), ctx(), func(b *Builder) { b.SetTargetReplicas([]int32{3, 1, 2}) }),
		with(func(c *change) { c.Replicas = []int32{3, 1, 2} }))
}

func TestReassignments(t *testing.T) {
	// The added replica joins the ISR: the reassignment completes.
	p := Partition{Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3}, Adding: []int32{4}, Leader: 1}
	check(t, build(t, p, ctx(), func(b *Builder) { b.SetTargetISR([]int32{1, 2, 3, 4}) }),
		with(func(c *change) { c.Isr, c.Adding = []int32{1, 2, 3, 4}, []int32{} }))
	// Removing the leader's replica: it leaves replicas and ISR, and the
	// leadership moves to the first replica left.
	p = Partition{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Removing: []int32{1}, Leader: 1}
	check(t, build(t, p, ctx(), func(b *Builder) { b.SetTargetISR([]int32{1, 2, 3}) }),
		with(func(c *change) {
			c.Leader, c.Isr, c.Replicas, c.Removing = 2, []int32{2, 3}, []int32{2, 3}, []int32{}
			c.Dirs = [][16]byte{{}, {}}
		}))
	// Kafka 4.4: as many added as removed, the added ones in the ISR is
	// enough; replica 3 stays although it is out of the ISR.
	p = Partition{Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 4}, Removing: []int32{1}, Adding: []int32{4}, Leader: 2}
	check(t, build(t, p, ctx(), func(b *Builder) { b.SetTargetISR([]int32{1, 2, 4}) }),
		with(func(c *change) {
			c.Isr, c.Replicas, c.Removing, c.Adding = []int32{2, 4}, []int32{2, 3, 4}, []int32{}, []int32{}
			c.Leader = 2 // replica 1 dropped: epoch bump
			c.Dirs = [][16]byte{{}, {}, {}}
		}))
	// An added replica out of the ISR holds the reassignment.
	p.ISR = []int32{1, 2}
	if got := build(t, p, ctx(), func(b *Builder) { b.SetTargetISR([]int32{1, 2}) }); got != nil {
		t.Fatalf("%+v", got)
	}
	// Reverting: the original replicas back, removing and adding emptied.
	p = Partition{Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3}, Removing: []int32{1}, Adding: []int32{4}, Leader: 1}
	check(t, build(t, p, ctx(), func(b *Builder) {
		b.SetTargetReplicas([]int32{1, 2, 3}).SetTargetRemoving(nil).SetTargetAdding(nil)
	}), with(func(c *change) {
		c.Leader, c.Replicas, c.Removing, c.Adding = 1, []int32{1, 2, 3}, []int32{}, []int32{}
		c.Dirs = [][16]byte{{}, {}, {}}
	}))
}

func elrCtx(minISR int) Context {
	c := ctx()
	c.ELR, c.MinISR = true, minISR
	return c
}

func TestEligibleLeaderReplicas(t *testing.T) {
	p4 := Partition{Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2, 3, 4}, Leader: 1}
	// Below min ISR the replicas leaving the ISR become eligible.
	check(t, build(t, p4, elrCtx(3), func(b *Builder) { b.SetTargetISR([]int32{1, 2}) }),
		with(func(c *change) { c.Isr, c.Elr = []int32{1, 2}, []int32{3, 4} }))
	// At min ISR again the ELR empties. The last-known ELR holds the last
	// leader: it empties only when a leader is elected.
	p := Partition{Replicas: []int32{1, 2, 3, 4}, ISR: []int32{1, 2}, ELR: []int32{3, 4}, LastKnownELR: []int32{5}, Leader: 1}
	check(t, build(t, p, elrCtx(3), func(b *Builder) { b.SetTargetISR([]int32{1, 2, 3}) }),
		with(func(c *change) { c.Isr, c.Elr = []int32{1, 2, 3}, []int32{} }))
	// Without the last-known leader it holds former ELR members, and
	// empties with the ELR.
	check(t, build(t, p, elrCtx(3), func(b *Builder) { b.SetTargetISR([]int32{1, 2, 3}).SetUseLastKnownLeader(false) }),
		with(func(c *change) { c.Isr, c.Elr, c.LastKnown = []int32{1, 2, 3}, []int32{}, []int32{} }))
	// A replica that shut down uncleanly leaves the ELR.
	check(t, build(t, p4, elrCtx(3), func(b *Builder) {
		b.SetTargetISR([]int32{1, 2}).SetUncleanShutdownReplicas([]int32{3})
	}), with(func(c *change) { c.Isr, c.Elr = []int32{1, 2}, []int32{4} }))
	// The ISR may empty: no leader, the old leader recorded as last known.
	c := elrCtx(2)
	c.Acceptable = in()
	p = Partition{Replicas: []int32{1, 2}, ISR: []int32{1}, ELR: []int32{2}, Leader: 1}
	check(t, build(t, p, c, func(b *Builder) { b.SetTargetISR(nil) }),
		with(func(c *change) { c.Leader, c.Isr, c.Elr, c.LastKnown = NoLeader, []int32{}, []int32{1, 2}, []int32{1} }))
	// The ELR lists in the JVM's HashSet order: 17 before 2.
	p = Partition{Replicas: []int32{2, 17, 5}, ISR: []int32{2, 17}, Leader: 2}
	check(t, build(t, p, c, func(b *Builder) { b.SetTargetISR([]int32{}) }),
		with(func(c *change) { c.Leader, c.Isr, c.Elr, c.LastKnown = NoLeader, []int32{}, []int32{17, 2}, []int32{2} }))
	// With the ISR empty an ELR member may lead: it becomes the ISR.
	c.Acceptable = in(3)
	p = Partition{Replicas: []int32{1, 2, 3}, ISR: []int32{}, ELR: []int32{2, 3}, LastKnownELR: []int32{1}, Leader: NoLeader}
	check(t, build(t, p, c, nil), with(func(c *change) { c.Leader, c.Isr, c.Elr, c.LastKnown = 3, []int32{3}, []int32{2}, []int32{} }))
	// With ISR and ELR empty, the last-known leader may lead again, as an
	// unclean election.
	c.Acceptable = in(1)
	p = Partition{Replicas: []int32{1, 2, 3}, ISR: []int32{}, LastKnownELR: []int32{1}, Leader: NoLeader}
	check(t, build(t, p, c, nil), with(func(c *change) { c.Leader, c.Isr, c.LRS, c.LastKnown = 1, []int32{1}, Recovering, []int32{} }))
	// Not if it may not lead (then nothing changes) nor with the feature
	// off.
	c.Acceptable = in(2)
	if got := build(t, p, c, nil); got != nil {
		t.Fatalf("%+v", got)
	}
	c.Acceptable = in(1)
	if got := build(t, p, c, func(b *Builder) { b.SetUseLastKnownLeader(false) }); got != nil {
		t.Fatalf("%+v", got)
	}
	// ELR off clears leftover ELR fields on any change.
	off := ctx()
	p = Partition{Replicas: []int32{1, 2}, ISR: []int32{1}, ELR: []int32{2}, Leader: 1}
	check(t, build(t, p, off, func(b *Builder) { b.SetTargetISR([]int32{1, 2}) }),
		with(func(c *change) { c.Isr, c.Elr = []int32{1, 2}, []int32{} }))
}

func TestDirectories(t *testing.T) {
	d := func(b byte) uuid.UUID { return uuid.UUID{0: 0xa, 15: b} }
	p := p123()
	p.Directories = []uuid.UUID{d(1), d(2), d(3)}
	// A replica moves to another directory.
	check(t, build(t, p, ctx(), func(b *Builder) { b.SetDirectory(2, d(9)) }),
		with(func(c *change) { c.Dirs = [][16]byte{d(1), d(9), d(3)} }))
	// Replicas that stay keep their directories; new ones get the default.
	check(t, build(t, p, ctx(), func(b *Builder) { b.SetTargetReplicas([]int32{3, 4, 1}) }),
		with(func(c *change) {
			c.Leader, c.Replicas = 1, []int32{3, 4, 1}
			c.Dirs = [][16]byte{d(3), defaultDirs(4), d(1)}
		}))
	// Before 3.7-IV2 directories are not written, nor needed.
	old := ctx()
	old.MetadataVersion, old.DefaultDir = 16, nil
	check(t, build(t, p, old, func(b *Builder) { b.SetTargetReplicas([]int32{3, 4, 1}) }),
		with(func(c *change) { c.Leader, c.Replicas = 1, []int32{3, 4, 1} }))
	// From then on the default directory provider is required, as in Kafka.
	c := ctx()
	c.DefaultDir = nil
	if _, _, err := New(p, c).Build(); !errors.Is(err, ErrNoDefaultDir) {
		t.Fatalf("got %v", err)
	}
}

func TestRefusedInputs(t *testing.T) {
	p := p123()
	p.Directories = []uuid.UUID{{}}
	if _, _, err := New(p, ctx()).Build(); !errors.Is(err, ErrBadDirectories) {
		t.Fatal(err)
	}
	p = Partition{Replicas: []int32{1, 1}, ISR: []int32{1}, Leader: 1}
	if _, _, err := New(p, ctx()).Build(); !errors.Is(err, ErrDuplicateBroker) {
		t.Fatal(err)
	}
	if _, _, err := New(p123(), ctx()).SetTargetLeaderRecoveryState(2).Build(); !errors.Is(err, ErrBadRecoveryState) {
		t.Fatal(err)
	}
	if _, _, err := New(p123(), ctx()).SetTargetReplicas(nil).SetElection(Preferred).Build(); !errors.Is(err, ErrNoReplicas) {
		t.Fatal(err)
	}
}
