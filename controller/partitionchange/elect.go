package partitionchange

import (
	"slices"

	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// valid reports whether r may lead cleanly: in the target ISR (or, the ISR
// being empty, in the target ELR) and acceptable.
func (b *Builder) valid(r int32) bool {
	in := slices.Contains(b.targetISR, r) || (len(b.targetISR) == 0 && slices.Contains(b.targetELR, r))
	return in && b.ctx.Acceptable(r)
}

// lastKnownLeaderElectable: with ELR on, when ISR and ELR are both empty, the
// partition's last leader, kept alone in its last-known ELR, may lead again
// if acceptable. Kafka counts that as unclean.
func (b *Builder) lastKnownLeaderElectable() bool {
	return b.ctx.ELR && b.useLastKnownLeader && len(b.targetELR) == 0 && len(b.targetISR) == 0 &&
		len(b.p.LastKnownELR) == 1 && b.ctx.Acceptable(b.p.LastKnownELR[0])
}

// choose runs the election: the leader it picks (NoLeader for none) and
// whether the choice is unclean.
func (b *Builder) choose() (int32, bool, error) {
	if b.election == Preferred {
		if len(b.targetReplicas) == 0 {
			return 0, false, ErrNoReplicas
		}
		if first := b.targetReplicas[0]; b.valid(first) {
			return first, false, nil
		}
	}
	if b.valid(b.p.Leader) { // the current leader stays if it can
		return b.p.Leader, false, nil
	}
	from := b.targetReplicas
	if b.election == Preferred {
		from = from[1:]
	}
	if i := slices.IndexFunc(from, b.valid); i >= 0 {
		return from[i], false, nil
	}
	if b.lastKnownLeaderElectable() {
		return b.p.LastKnownELR[0], true, nil
	}
	if b.election == Unclean {
		if i := slices.IndexFunc(b.targetReplicas, b.ctx.Acceptable); i >= 0 {
			return b.targetReplicas[i], true, nil
		}
	}
	return NoLeader, false, nil
}

// elect sets the record's leader when the election changes it. A leader
// taken from the ELR becomes the ISR alone and leaves the ELR; an unclean
// leader is the ISR alone (data may be lost) and starts RECOVERING.
func (b *Builder) elect(rec *metadata.PartitionChangeRecord) error {
	leader, unclean, err := b.choose()
	if err != nil || leader == b.p.Leader {
		return err
	}
	if slices.Contains(b.targetELR, leader) {
		b.targetISR = []int32{leader}
		b.targetELR = slices.DeleteFunc(slices.Clone(b.targetELR), func(r int32) bool { return r == leader })
	}
	rec.Leader = leader
	if unclean {
		rec.Isr = []int32{leader}
		if b.p.LeaderRecoveryState != Recovering {
			rec.LeaderRecoveryState = Recovering
		}
	}
	return nil
}

// updateRecordELR writes the ELR when it changed; an unclean election or ELR
// being off empties it and the last-known ELR. The last-known ELR is written
// here only when the last-known leader is not in use; while the partition
// stays leaderless it keeps its last leader.
func (b *Builder) updateRecordELR(rec *metadata.PartitionChangeRecord) {
	if rec.Isr != nil || !b.ctx.ELR {
		b.targetELR, b.targetLastKnownELR = []int32{}, []int32{}
	}
	if !slices.Equal(b.targetELR, orEmpty(b.p.ELR)) {
		rec.EligibleLeaderReplicas = b.targetELR
	}
	if b.useLastKnownLeader && len(b.p.LastKnownELR) == 1 &&
		(rec.Leader == NoLeader || (rec.Leader == NoLeaderChange && b.p.Leader == NoLeader)) {
		b.targetLastKnownELR = orEmpty(b.p.LastKnownELR)
	}
	if b.useLastKnownLeader {
		return
	}
	if !slices.Equal(b.targetLastKnownELR, orEmpty(b.p.LastKnownELR)) {
		rec.LastKnownElr = b.targetLastKnownELR
	}
}

// updateLastKnownLeader (ELR, last-known leader in use): the first time the
// partition loses its leader, the last-known ELR records the old leader; once
// a leader is elected, it empties. A leaderless partition whose record names
// leader -1 for an epoch bump records -1 (kafka-4.4-findings.md 8.5).
func (b *Builder) updateLastKnownLeader(rec *metadata.PartitionChangeRecord) {
	if !b.useLastKnownLeader || !b.ctx.ELR {
		return
	}
	switch {
	case rec.Leader == NoLeader && len(b.p.LastKnownELR) == 0:
		rec.LastKnownElr = []int32{b.p.Leader}
	case rec.Leader >= 0 && len(b.p.LastKnownELR) > 0:
		rec.LastKnownElr = []int32{}
	}
}

// setAssignment writes replicas, removing and adding replicas when they
// changed, and, from 3.7-IV2, the directories: each target replica's
// directory as set, else as the partition has it, else the default.
func (b *Builder) setAssignment(rec *metadata.PartitionChangeRecord) error {
	if len(b.targetReplicas) > 0 {
		if b.ctx.MetadataVersion.Has(metadata.GateDirectoryAssignment) {
			if b.ctx.DefaultDir == nil {
				return ErrNoDefaultDir
			}
			dirs := make([][16]byte, len(b.targetReplicas))
			changed := len(dirs) != len(b.p.Replicas)
			for i, r := range b.targetReplicas {
				dirs[i] = b.dirOf(r)
				if !changed && dirs[i] != b.currentDir(i) {
					changed = true
				}
			}
			if changed {
				rec.Directories = dirs
			}
		}
		if !slices.Equal(b.targetReplicas, orEmpty(b.p.Replicas)) {
			rec.Replicas = b.targetReplicas
		}
	}
	if !slices.Equal(b.targetRemoving, orEmpty(b.p.Removing)) {
		rec.RemovingReplicas = b.targetRemoving
	}
	if !slices.Equal(b.targetAdding, orEmpty(b.p.Adding)) {
		rec.AddingReplicas = b.targetAdding
	}
	return nil
}

// currentDir is the directory of the partition's i-th replica.
func (b *Builder) currentDir(i int) uuid.UUID {
	if b.p.Directories == nil {
		return uuid.UUID{} // MIGRATING
	}
	return b.p.Directories[i]
}

// dirOf is replica r's target directory. Kafka computes the default before
// looking (the provider is always called); it has no side effects here.
func (b *Builder) dirOf(r int32) uuid.UUID {
	dir := b.ctx.DefaultDir(r)
	if i := slices.Index(b.p.Replicas, r); i >= 0 {
		dir = b.currentDir(i)
	}
	for _, o := range b.dirOverrides {
		if o.broker == r {
			dir = o.dir
		}
	}
	return dir
}

func orEmpty(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// containsAll reports whether every element of want is in have.
func containsAll(have, want []int32) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
