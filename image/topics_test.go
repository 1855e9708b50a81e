package image

import (
	"slices"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

func part(t *testing.T, im *Image, topicID uuid.UUID, pid int32) Partition {
	t.Helper()
	p, ok := im.Partition(topicID, pid)
	if !ok {
		t.Fatalf("no partition %v:%d", topicID, pid)
	}
	return p
}

func TestReplayTopics(t *testing.T) {
	foo := tid(1)
	runReplayCases(t, []replayCase{
		{name: "topic", rec: topic("foo", foo), check: func(t *testing.T, im *Image) {
			if tp, ok := im.TopicByName("foo"); !ok || tp.ID() != foo || tp.PartitionCount() != 0 {
				t.Fatal("not created")
			}
		}},
		{name: "duplicate name and id", setup: []metadata.Record{topic("foo", foo)}, rec: topic("foo", foo), err: "duplicate TopicRecord"},
		{name: "duplicate name", setup: []metadata.Record{topic("foo", foo)}, rec: topic("foo", tid(2)), err: "with a different ID than before"},
		{name: "duplicate id", setup: []metadata.Record{topic("foo", foo)}, rec: topic("bar", foo), err: `already names topic "foo"`},
		{name: "colliding names", setup: []metadata.Record{topic("a.b", foo), topic("x_y", tid(3))}, rec: topic("a_b", tid(2)),
			check: func(t *testing.T, im *Image) {
				if got := slices.Collect(im.CollidingTopics("a.b")); !slices.Equal(got, []string{"a.b", "a_b"}) {
					t.Fatalf("colliding %v", got)
				}
			}},
		{name: "remove", setup: []metadata.Record{
			topic("foo", foo), partition(foo, 0, []int32{1, 2}, 1), partition(foo, 1, []int32{2, 1}, -1),
			topic("bar", tid(2)), partition(tid(2), 0, []int32{1}, 1),
			config(topicResource, "foo", "retention.ms", ptr("1")), config(topicResource, "foo", "segment.ms", ptr("1")),
			config(topicResource, "fo", "retention.ms", ptr("1")), config(topicResource, "foo.", "retention.ms", ptr("1")),
		}, rec: &metadata.RemoveTopicRecord{TopicId: foo}, check: func(t *testing.T, im *Image) {
			if _, ok := im.TopicByName("foo"); ok {
				t.Fatal("still there")
			}
			if n := len(slices.Collect(im.AllConfigs())); n != 2 {
				t.Fatalf("%d configs left, want the other topics' 2", n)
			}
			if c := im.Counts(); c.Partitions != 1 || c.OfflinePartitions != 0 || c.Topics != 1 {
				t.Fatalf("counts %+v", c)
			}
		}},
		{name: "remove unknown", rec: &metadata.RemoveTopicRecord{TopicId: foo}, err: "no topic with ID"},
	})
}

func TestReplayPartitions(t *testing.T) {
	foo := tid(1)
	withDirs := partition(foo, 0, []int32{1, 2}, 1)
	withDirs.Directories = uuids([]uuid.UUID{dir(1), dir(2)})
	shortDirs := partition(foo, 0, []int32{1, 2}, 1)
	shortDirs.Directories = uuids([]uuid.UUID{dir(1)})
	badLRS := partition(foo, 0, []int32{1}, 1)
	badLRS.LeaderRecoveryState = 2
	elr := partition(foo, 0, []int32{1, 2, 3}, 1)
	elr.Isr, elr.EligibleLeaderReplicas, elr.LastKnownElr = []int32{1}, []int32{2}, []int32{3}
	base := []metadata.Record{topic("foo", foo), withDirs}
	runReplayCases(t, []replayCase{
		{name: "partition", setup: []metadata.Record{topic("foo", foo)}, rec: withDirs, check: func(t *testing.T, im *Image) {
			p := part(t, im, foo, 0)
			if !slices.Equal(p.Replicas(), []int32{1, 2}) || !slices.Equal(p.Directories(), []uuid.UUID{dir(1), dir(2)}) || p.Leader() != 1 {
				t.Fatalf("partition %v %v", p.Replicas(), p.Directories())
			}
		}},
		{name: "unknown topic", rec: withDirs, err: "needs a topic with that ID"},
		{name: "directories for other replicas", setup: []metadata.Record{topic("foo", foo)}, rec: shortDirs, err: "1 directories for 2 replicas"},
		{name: "no directories are MIGRATING", setup: []metadata.Record{topic("foo", foo)}, rec: partition(foo, 0, []int32{1, 2}, 1),
			check: func(t *testing.T, im *Image) {
				if d := part(t, im, foo, 0).Directories(); !slices.Equal(d, make([]uuid.UUID, 2)) {
					t.Fatalf("directories %v", d)
				}
			}},
		{name: "leader recovery state", setup: []metadata.Record{topic("foo", foo)}, rec: badLRS, err: "value 2 is not a valid leader recovery state"},
		{name: "ELR", setup: []metadata.Record{topic("foo", foo)}, rec: elr, check: func(t *testing.T, im *Image) {
			p := part(t, im, foo, 0)
			if !slices.Equal(p.ELR(), []int32{2}) || !slices.Equal(p.LastKnownELR(), []int32{3}) {
				t.Fatal(p.ELR(), p.LastKnownELR())
			}
			if got := slices.Collect(im.PartitionsInELR(2)); len(got) != 1 {
				t.Fatalf("ELR index %v", got)
			}
		}},
		{name: "replaced", setup: base, rec: partition(foo, 0, []int32{3}, -1), check: func(t *testing.T, im *Image) {
			if p := part(t, im, foo, 0); p.Leader() != -1 || im.Counts().OfflinePartitions != 1 {
				t.Fatal("not replaced")
			}
		}},
		{name: "change: leader kept", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.Isr = []int32{1} }),
			check: func(t *testing.T, im *Image) {
				p := part(t, im, foo, 0)
				if p.LeaderEpoch() != 0 || p.PartitionEpoch() != 1 || !slices.Equal(p.ISR(), []int32{1}) || !slices.Equal(p.Replicas(), []int32{1, 2}) {
					t.Fatalf("epochs %d %d, ISR %v", p.LeaderEpoch(), p.PartitionEpoch(), p.ISR())
				}
			}},
		{name: "change: the same leader named bumps its epoch", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.Leader = 1 }),
			check: func(t *testing.T, im *Image) {
				if p := part(t, im, foo, 0); p.LeaderEpoch() != 1 || p.PartitionEpoch() != 1 || p.Leader() != 1 {
					t.Fatalf("epochs %d %d", p.LeaderEpoch(), p.PartitionEpoch())
				}
			}},
		{name: "change: no leader", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.Leader = -1 }),
			check: func(t *testing.T, im *Image) {
				if c := im.Counts(); c.OfflinePartitions != 1 || c.ImbalancedPartitions != 1 {
					t.Fatalf("counts %+v", c)
				}
				if led := slices.Collect(im.PartitionsLedBy(1)); len(led) != 0 {
					t.Fatalf("broker 1 still leads %v", led)
				}
			}},
		{name: "change: recovering", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.LeaderRecoveryState = 1 }),
			check: func(t *testing.T, im *Image) {
				if part(t, im, foo, 0).LeaderRecoveryState() != 1 {
					t.Fatal("not recovering")
				}
			}},
		{name: "change: bad recovery state", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.LeaderRecoveryState = 3 }),
			err: "value 3 is not a valid leader recovery state"},
		{name: "change: unknown topic", rec: change(foo, 0, nil), err: "needs a topic with that ID"},
		{name: "change: unknown partition", setup: base, rec: change(foo, 1, nil), err: `topic "foo" has no partition 1`},
		{name: "change: replicas and directories disagree", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) {
			r.Replicas, r.Directories = []int32{1, 2, 3}, uuids([]uuid.UUID{dir(1)})
		}), err: "1 directories for 3 replicas"},
		{name: "change: replicas without directories keep assigned ones", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) {
			r.Replicas = []int32{1, 2, 3}
		}), err: "would have 2 directories for 3 replicas"},
		{name: "change: replicas of a MIGRATING partition", setup: []metadata.Record{topic("foo", foo), partition(foo, 0, []int32{1, 2}, 1)},
			rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.Replicas = []int32{1, 2, 3} }), check: func(t *testing.T, im *Image) {
				if d := part(t, im, foo, 0).Directories(); len(d) != 3 {
					t.Fatalf("directories %v", d)
				}
			}},
		{name: "change: directories only", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) {
			r.Directories = uuids([]uuid.UUID{dir(5), dir(6)})
		}), check: func(t *testing.T, im *Image) {
			if d := part(t, im, foo, 0).Directories(); !slices.Equal(d, []uuid.UUID{dir(5), dir(6)}) {
				t.Fatalf("directories %v", d)
			}
		}},
		{name: "change: directories only, too few", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) {
			r.Directories = uuids([]uuid.UUID{dir(5)})
		}), err: "would have 1 directories for 2 replicas"},
		{name: "change: empty directories are MIGRATING", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) {
			r.Replicas, r.Directories = []int32{4, 5, 6}, [][16]byte{}
		}), check: func(t *testing.T, im *Image) {
			if d := part(t, im, foo, 0).Directories(); !slices.Equal(d, make([]uuid.UUID, 3)) {
				t.Fatalf("directories %v", d)
			}
		}},
		{name: "change: preferred leader moves", setup: base, rec: change(foo, 0, func(r *metadata.PartitionChangeRecord) { r.Leader = 2 }),
			check: func(t *testing.T, im *Image) {
				if got := slices.Collect(im.ImbalancedPartitions()); len(got) != 1 {
					t.Fatalf("imbalanced %v", got)
				}
				if got := slices.Collect(im.PartitionsLedBy(2)); len(got) != 1 {
					t.Fatalf("led by 2: %v", got)
				}
			}},
	})
}

func TestClearELR(t *testing.T) {
	foo, bar := tid(1), tid(2)
	withELR := func(id uuid.UUID, pid int32) *metadata.PartitionRecord {
		r := partition(id, pid, []int32{1, 2, 3}, 1)
		r.Isr, r.EligibleLeaderReplicas, r.LastKnownElr = []int32{1}, []int32{2}, []int32{}
		return r
	}
	onlyLast := partition(foo, 2, []int32{1, 2}, -1)
	onlyLast.Isr, onlyLast.LastKnownElr = []int32{}, []int32{1}
	setup := []metadata.Record{
		topic("foo", foo), withELR(foo, 0), partition(foo, 1, []int32{1, 2}, 1), onlyLast,
		topic("bar", bar), withELR(bar, 0),
	}
	cleared := func(t *testing.T, im *Image, id uuid.UUID, pid int32) {
		t.Helper()
		p := part(t, im, id, pid)
		if len(p.ELR()) != 0 || len(p.LastKnownELR()) != 0 || p.PartitionEpoch() != 1 || p.LeaderEpoch() != 0 {
			t.Fatalf("%v:%d: ELR %v, last known %v, epochs %d/%d", id, pid, p.ELR(), p.LastKnownELR(), p.LeaderEpoch(), p.PartitionEpoch())
		}
	}
	untouched := func(t *testing.T, im *Image, id uuid.UUID, pid int32) {
		t.Helper()
		if p := part(t, im, id, pid); p.PartitionEpoch() != 0 {
			t.Fatalf("%v:%d changed: epoch %d", id, pid, p.PartitionEpoch())
		}
	}
	runReplayCases(t, []replayCase{
		{name: "one topic", setup: setup, rec: &metadata.ClearElrRecord{TopicName: "foo"}, check: func(t *testing.T, im *Image) {
			cleared(t, im, foo, 0)
			cleared(t, im, foo, 2)
			untouched(t, im, foo, 1)
			untouched(t, im, bar, 0)
		}},
		{name: "every topic", setup: setup, rec: &metadata.ClearElrRecord{}, check: func(t *testing.T, im *Image) {
			cleared(t, im, foo, 0)
			cleared(t, im, bar, 0)
			untouched(t, im, foo, 1)
			if got := slices.Collect(im.PartitionsInELR(2)); len(got) != 0 {
				t.Fatalf("ELR index %v", got)
			}
		}},
		{name: "unknown topic", setup: setup, rec: &metadata.ClearElrRecord{TopicName: "baz"}, err: `no topic named "baz"`},
	})
}

// TestPartitionEncoding: every list, the leader fields and the directories
// read back as written, in the narrow and the wide layout, and equal
// partitions have equal words.
func TestPartitionEncoding(t *testing.T) {
	long := make([]int32, 300)
	for i := range long {
		long[i] = int32(i * 7)
	}
	for _, f := range []partitionFields{
		{},
		{lists: [numLists][]int32{{1, 2, 3}, {1, 2}, {3}, {4}, {5}, {6}}, leader: 2, leaderEpoch: 7, partitionEpoch: 9, lrs: 1},
		{lists: [numLists][]int32{{1, 2}, {}, nil, nil, nil, {1}}, dirs: []uuid.UUID{dir(1), dir(2)}, leader: -1},
		{lists: [numLists][]int32{long, long[:256], nil, long[:1], nil, nil}, dirs: make([]uuid.UUID, 300), leader: 1 << 30},
		{lists: [numLists][]int32{{-5}, {-5}}, dirs: []uuid.UUID{{0xff, 15: 0xff}}, leader: -2147483648, lrs: 0},
	} {
		p := makePartition(&f)
		g := p.spell()
		for i := range f.lists {
			if !slices.Equal(g.lists[i], f.lists[i]) {
				t.Fatalf("list %d: %v, want %v", i, g.lists[i], f.lists[i])
			}
		}
		if g.leader != f.leader || g.leaderEpoch != f.leaderEpoch || g.partitionEpoch != f.partitionEpoch || g.lrs != f.lrs {
			t.Fatalf("fields %+v, want %+v", g, f)
		}
		wantDirs := f.dirs
		if wantDirs == nil {
			wantDirs = make([]uuid.UUID, len(f.lists[listReplicas]))
		}
		if !slices.Equal(p.Directories(), wantDirs) {
			t.Fatalf("directories %v, want %v", p.Directories(), wantDirs)
		}
		if q := makePartition(g); !q.Equal(p) {
			t.Fatal("a partition rebuilt from its fields differs")
		}
		if len(f.lists[0]) > 0 {
			if r := p.Replicas(); cap(r) != len(r) {
				t.Fatal("a list's capacity runs into the next one: an append would overwrite it")
			}
		}
	}
}
