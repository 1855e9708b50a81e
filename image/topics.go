package image

import (
	"fmt"
	"iter"
	"strings"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Topic is a topic and its partitions (Kafka's TopicImage). Read-only.
type Topic struct {
	own   *owner // the builder generation that may change it in place
	name  string
	id    uuid.UUID
	ord   uint32 // the index key of the topic, unique among the topics an image ever had
	parts pmap[int32, Partition]
}

func (t *Topic) Name() string        { return t.name }
func (t *Topic) ID() uuid.UUID       { return t.id }
func (t *Topic) PartitionCount() int { return t.parts.len() }

// Partition returns one partition.
func (t *Topic) Partition(partition int32) (Partition, bool) { return t.parts.get(partition) }

// Partitions yields the partitions by id.
func (t *Topic) Partitions() iter.Seq2[int32, Partition] {
	return func(yield func(int32, Partition) bool) {
		for k, p := range t.parts.all() {
			if !yield(k, p) {
				return
			}
		}
	}
}

// mutTopic returns the topic for writing: itself when this generation made
// it, else a copy put in its place.
func (b *Builder) mutTopic(t *Topic) *Topic {
	if t.own == b.own {
		return t
	}
	c := *t
	c.own = b.own
	b.st.topics.set(b.own, idKey(t.id), &c)
	return &c
}

// collisionForm is Kafka's Topic.unifyCollisionChars: '.' and '_' collide
// in metric names.
func collisionForm(name string) string { return strings.ReplaceAll(name, ".", "_") }

func hasCollisionChars(name string) bool { return strings.ContainsAny(name, "._") }

func (b *Builder) createTopic(r *metadata.TopicRecord) error {
	if prev, ok := b.st.topicNames.get(r.Name); ok {
		if prev == r.TopicId {
			return fmt.Errorf("duplicate TopicRecord for topic %q with topic ID %v", clip(r.Name), uuid.UUID(r.TopicId))
		}
		return fmt.Errorf("duplicate TopicRecord for topic %q with a different ID than before: previous ID %v, new ID %v",
			clip(r.Name), prev, uuid.UUID(r.TopicId))
	}
	if prev, ok := b.st.topics.get(idKey(r.TopicId)); ok {
		return fmt.Errorf("topic ID %v already names topic %q", uuid.UUID(r.TopicId), clip(prev.name))
	}
	t := &Topic{own: b.own, name: r.Name, id: r.TopicId, ord: b.st.nextOrd}
	b.st.nextOrd++
	b.st.topics.set(b.own, idKey(t.id), t)
	b.st.topicNames.set(b.own, t.name, t.id)
	b.st.ordinals.set(b.own, t.ord, t.id)
	if hasCollisionChars(t.name) {
		b.st.collisions.set(b.own, collisionKey(collisionForm(t.name), t.name), struct{}{})
	}
	return nil
}

func (b *Builder) removeTopic(r *metadata.RemoveTopicRecord) error {
	t, ok := b.st.topics.get(idKey(r.TopicId))
	if !ok {
		return fmt.Errorf("no topic with ID %v to remove", uuid.UUID(r.TopicId))
	}
	for pid, p := range t.parts.all() {
		b.index(t, pid, &p, nil)
	}
	b.st.topics.delete(b.own, idKey(t.id))
	b.st.topicNames.delete(b.own, t.name)
	b.st.ordinals.delete(b.own, t.ord)
	b.st.collisions.delete(b.own, collisionKey(collisionForm(t.name), t.name))
	// The topic's configuration goes with it (Kafka's deleteTopicConfigs).
	prefix := string(configPrefix(topicResource, t.name))
	var keys []string
	for k := range b.st.configs.from(prefix) {
		if !strings.HasPrefix(k, prefix) {
			break
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		b.st.configs.delete(b.own, k)
	}
	return nil
}

// checkLRS: Kafka's LeaderRecoveryState knows 0 (recovered) and 1
// (recovering).
func checkLRS(v int8) error {
	if v != 0 && v != 1 {
		return fmt.Errorf("value %d is not a valid leader recovery state", v)
	}
	return nil
}

func (b *Builder) setPartition(r *metadata.PartitionRecord) error {
	t, ok := b.st.topics.get(idKey(r.TopicId))
	if !ok {
		return fmt.Errorf("partition %v:%d needs a topic with that ID, and there is none", uuid.UUID(r.TopicId), r.PartitionId)
	}
	if len(r.Directories) > 0 && len(r.Directories) != len(r.Replicas) {
		return fmt.Errorf("%d directories for %d replicas", len(r.Directories), len(r.Replicas))
	}
	if err := checkLRS(r.LeaderRecoveryState); err != nil {
		return err
	}
	f := &partitionFields{
		lists:  [numLists][]int32{r.Replicas, r.Isr, r.RemovingReplicas, r.AddingReplicas, r.EligibleLeaderReplicas, r.LastKnownElr},
		dirs:   dirList(r.Directories),
		leader: r.Leader, leaderEpoch: r.LeaderEpoch, partitionEpoch: r.PartitionEpoch, lrs: r.LeaderRecoveryState,
	}
	b.putPartition(t, r.PartitionId, makePartition(f))
	return nil
}

func (b *Builder) changePartition(r *metadata.PartitionChangeRecord) error {
	t, ok := b.st.topics.get(idKey(r.TopicId))
	if !ok {
		return fmt.Errorf("partition %v:%d needs a topic with that ID, and there is none", uuid.UUID(r.TopicId), r.PartitionId)
	}
	cur, ok := t.parts.get(r.PartitionId)
	if !ok {
		return fmt.Errorf("topic %q has no partition %d", clip(t.name), r.PartitionId)
	}
	next, err := merge(cur, r)
	if err != nil {
		return err
	}
	b.putPartition(t, r.PartitionId, next)
	return nil
}

// merge is Kafka's PartitionRegistration.merge: null fields keep their
// value, the partition epoch always grows, the leader epoch grows whenever
// the record names a leader (even the same one), and directories fall back
// to MIGRATING when none are known for the new replicas.
func merge(cur Partition, r *metadata.PartitionChangeRecord) (Partition, error) {
	if r.Replicas != nil && len(r.Directories) > 0 && len(r.Replicas) != len(r.Directories) {
		return Partition{}, fmt.Errorf("%d directories for %d replicas", len(r.Directories), len(r.Replicas))
	}
	f := cur.spell()
	for i, l := range [numLists][]int32{r.Replicas, r.Isr, r.RemovingReplicas, r.AddingReplicas, r.EligibleLeaderReplicas, r.LastKnownElr} {
		if l != nil {
			f.lists[i] = l
		}
	}
	if r.Directories != nil {
		f.dirs = dirList(r.Directories)
	}
	if n := len(f.lists[listReplicas]); !allMigrating(f.dirs) && len(f.dirs) != n {
		return Partition{}, fmt.Errorf("the partition would have %d directories for %d replicas", len(f.dirs), n)
	}
	if r.Leader != noLeaderChange {
		f.leader = r.Leader
		f.leaderEpoch++
	}
	if r.LeaderRecoveryState != -1 {
		if err := checkLRS(r.LeaderRecoveryState); err != nil {
			return Partition{}, err
		}
		f.lrs = r.LeaderRecoveryState
	}
	f.partitionEpoch++
	return makePartition(f), nil
}

// clearELR is Kafka's replay of ClearElrRecord: every partition of the
// topic (of every topic when the name is empty) with an ELR or a last-known
// ELR gets both emptied, as a merged change, so its partition epoch grows.
func (b *Builder) clearELR(r *metadata.ClearElrRecord) error {
	if r.TopicName != "" {
		tid, ok := b.st.topicNames.get(r.TopicName)
		if !ok {
			return fmt.Errorf("no topic named %q to clear the ELRs of", clip(r.TopicName))
		}
		t, _ := b.st.topics.get(idKey(tid))
		b.clearTopicELR(t)
		return nil
	}
	var all []*Topic
	for _, t := range b.st.topics.all() {
		all = append(all, t)
	}
	for _, t := range all {
		b.clearTopicELR(t)
	}
	return nil
}

func (b *Builder) clearTopicELR(t *Topic) {
	clear := metadata.NewPartitionChangeRecord()
	clear.EligibleLeaderReplicas, clear.LastKnownElr = []int32{}, []int32{}
	type change struct {
		pid int32
		p   Partition
	}
	var changes []change
	for pid, p := range t.parts.all() {
		if len(p.ELR()) > 0 || len(p.LastKnownELR()) > 0 {
			next, _ := merge(p, clear) // cannot fail: no replicas or directories change
			changes = append(changes, change{pid, next})
		}
	}
	for _, c := range changes {
		t = b.putPartition(t, c.pid, c.p)
	}
}

// putPartition sets partition pid of t and keeps the indexes and counts. It
// returns the topic as it now is (a copy when t was an image's): the caller
// goes on with that one.
func (b *Builder) putPartition(t *Topic, pid int32, next Partition) *Topic {
	prev, had := t.parts.get(pid)
	if had && prev.Equal(next) {
		return t
	}
	t = b.mutTopic(t)
	t.parts.set(b.own, pid, next)
	if had {
		b.index(t, pid, &prev, &next)
	} else {
		b.index(t, pid, nil, &next)
	}
	return t
}

// index moves partition pid of t from prev to next (either nil: absent) in
// the indexes and counts.
func (b *Builder) index(t *Topic, pid int32, prev, next *Partition) {
	key := partKey(t.ord, pid)
	var prevLeader, nextLeader int32 = noLeader, noLeader
	var prevISR, nextISR, prevELR, nextELR []int32
	prevOffline, nextOffline, prevImb, nextImb := false, false, false, false
	if prev != nil {
		prevLeader, prevISR, prevELR = prev.Leader(), prev.ISR(), prev.ELR()
		prevOffline, prevImb = !prev.HasLeader(), !prev.HasPreferredLeader()
		b.st.partitions--
	}
	if next != nil {
		nextLeader, nextISR, nextELR = next.Leader(), next.ISR(), next.ELR()
		nextOffline, nextImb = !next.HasLeader(), !next.HasPreferredLeader()
		b.st.partitions++
	}
	if prevLeader != nextLeader || !equalInts(prevISR, nextISR) {
		for _, r := range prevISR {
			unindex(&b.st.isr, b.own, r, key)
		}
		for _, r := range nextISR {
			reindex(&b.st.isr, b.own, r, key, r == nextLeader)
		}
	}
	if !equalInts(prevELR, nextELR) {
		for _, r := range prevELR {
			unindex(&b.st.elr, b.own, r, key)
		}
		for _, r := range nextELR {
			reindex(&b.st.elr, b.own, r, key, struct{}{})
		}
	}
	flag(&b.st.leaderless, b.own, key, prevOffline, nextOffline)
	flag(&b.st.imbalanced, b.own, key, prevImb, nextImb)
}

// reindex and unindex keep a broker index: broker -> partition -> v. The
// inner map's header lives in the outer map's node, changed there through
// ref.
func reindex[V any](m *pmap[int32, pmap[uint64, V]], own *owner, broker int32, k uint64, v V) {
	inner := m.ref(own, broker)
	if inner == nil {
		m.set(own, broker, pmap[uint64, V]{})
		inner = m.ref(own, broker)
	}
	inner.set(own, k, v)
}

func unindex[V any](m *pmap[int32, pmap[uint64, V]], own *owner, broker int32, k uint64) {
	inner := m.ref(own, broker)
	if inner == nil {
		return
	}
	inner.delete(own, k)
	if inner.len() == 0 {
		m.delete(own, broker)
	}
}

func flag(m *pmap[uint64, struct{}], own *owner, k uint64, was, is bool) {
	switch {
	case is && !was:
		m.set(own, k, struct{}{})
	case was && !is:
		m.delete(own, k)
	}
}

func equalInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
