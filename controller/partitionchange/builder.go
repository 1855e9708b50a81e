// Package partitionchange decides how a partition changes, as Kafka 4.4.0's
// PartitionChangeBuilder does: from the partition's registration, the
// cluster's view of its brokers and a requested change (a new ISR, replicas,
// a reassignment's removing and adding replicas, directories, an election),
// it elects a leader, maintains the eligible leader replicas (KIP-966),
// completes reassignments, and returns the PartitionChangeRecord Kafka would
// write, field for field, or none when nothing changes. It is deterministic
// and does no I/O. See docs/design/controller-replication.md.
package partitionchange

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Kafka's LeaderConstants and LeaderRecoveryState values.
const (
	NoLeader       int32 = -1 // no leader
	NoLeaderChange int32 = -2 // a PartitionChangeRecord's "the leader stays"

	Recovered   int8 = 0 // the leader was elected cleanly, or has recovered
	Recovering  int8 = 1 // an unclean leader is recovering
	noLRSChange int8 = -1
)

// Election says how far an election may go.
type Election int8

const (
	// Online keeps the current leader if it is still valid, else elects the
	// first valid replica (Kafka's default, ONLINE).
	Online Election = iota
	// Preferred elects the first replica if it is valid (PREFERRED).
	Preferred
	// Unclean falls back to any acceptable replica, outside the ISR if need
	// be, when no valid one is left (UNCLEAN).
	Unclean
)

func (e Election) String() string {
	switch e {
	case Online:
		return "ONLINE"
	case Preferred:
		return "PREFERRED"
	case Unclean:
		return "UNCLEAN"
	}
	return fmt.Sprintf("Election(%d)", int8(e))
}

// Partition is a partition's registration (Kafka's PartitionRegistration),
// as the builder reads it.
type Partition struct {
	Replicas, ISR, Removing, Adding []int32
	ELR, LastKnownELR               []int32
	// Directories holds one directory per replica; nil means all MIGRATING.
	Directories         []uuid.UUID
	Leader              int32
	LeaderRecoveryState int8
	// The epochs do not enter the decision; the record's replay bumps them.
	LeaderEpoch, PartitionEpoch int32
}

// FromImage copies an image partition.
func FromImage(p image.Partition) Partition {
	return Partition{
		Replicas:            slices.Clone(p.Replicas()),
		ISR:                 slices.Clone(p.ISR()),
		Removing:            slices.Clone(p.RemovingReplicas()),
		Adding:              slices.Clone(p.AddingReplicas()),
		ELR:                 slices.Clone(p.ELR()),
		LastKnownELR:        slices.Clone(p.LastKnownELR()),
		Directories:         p.Directories(),
		Leader:              p.Leader(),
		LeaderRecoveryState: p.LeaderRecoveryState(),
		LeaderEpoch:         p.LeaderEpoch(),
		PartitionEpoch:      p.PartitionEpoch(),
	}
}

// Context is what the builder needs to know beyond the partition.
type Context struct {
	TopicID     uuid.UUID
	PartitionID int32
	// MetadataVersion decides the record's version, whether directories
	// are written, and whether an ISR shrink bumps the leader epoch.
	MetadataVersion metadata.Level
	// MinISR is min(the topic's effective min.insync.replicas, the
	// replication factor).
	MinISR int
	// ELR is whether eligible.leader.replicas.version is at least 1.
	ELR bool
	// Acceptable says whether a broker may lead (Kafka's
	// isAcceptableLeader: usually active, with the replica's directory
	// online; see Acceptor).
	Acceptable func(broker int32) bool
	// DefaultDir is the directory of a replica the partition does not have
	// yet (placement.DefaultDir). Kafka asks it for every target replica
	// whenever the metadata version has directories, and fails without it;
	// so does Build.
	DefaultDir func(broker int32) uuid.UUID
}

// Builder accumulates a change to one partition. Targets not set stay what
// the partition has. Use a Builder once.
type Builder struct {
	p   Partition
	ctx Context

	targetISR, targetReplicas, targetRemoving, targetAdding []int32
	targetELR, targetLastKnownELR                           []int32
	uncleanShutdown                                         []int32
	dirOverrides                                            []dirOverride
	election                                                Election
	targetLRS                                               int8
	useLastKnownLeader                                      bool
}

type dirOverride struct {
	broker int32
	dir    uuid.UUID
}

// New starts a change of partition p.
func New(p Partition, ctx Context) *Builder {
	return &Builder{
		p:                  p,
		ctx:                ctx,
		targetISR:          orEmpty(p.ISR),
		targetReplicas:     orEmpty(p.Replicas),
		targetRemoving:     orEmpty(p.Removing),
		targetAdding:       orEmpty(p.Adding),
		targetELR:          orEmpty(p.ELR),
		targetLastKnownELR: orEmpty(p.LastKnownELR),
		targetLRS:          p.LeaderRecoveryState,
		useLastKnownLeader: true,
	}
}

// own copies a caller's list, so the record never shares it.
func own(s []int32) []int32 { return append([]int32{}, s...) }

// SetTargetISR asks for this ISR.
func (b *Builder) SetTargetISR(isr []int32) *Builder { b.targetISR = own(isr); return b }

// SetTargetReplicas asks for these replicas.
func (b *Builder) SetTargetReplicas(r []int32) *Builder { b.targetReplicas = own(r); return b }

// SetTargetRemoving sets the reassignment's replicas to remove.
func (b *Builder) SetTargetRemoving(r []int32) *Builder { b.targetRemoving = own(r); return b }

// SetTargetAdding sets the reassignment's replicas to add.
func (b *Builder) SetTargetAdding(r []int32) *Builder { b.targetAdding = own(r); return b }

// SetUncleanShutdownReplicas names brokers that restarted after an unclean
// shutdown: they leave the ELR.
func (b *Builder) SetUncleanShutdownReplicas(r []int32) *Builder { b.uncleanShutdown = r; return b }

// SetElection sets the election type (Online by default).
func (b *Builder) SetElection(e Election) *Builder { b.election = e; return b }

// SetTargetLeaderRecoveryState asks for a leader recovery state (Recovered or
// Recovering).
func (b *Builder) SetTargetLeaderRecoveryState(s int8) *Builder { b.targetLRS = s; return b }

// SetDirectory puts broker's replica in dir.
func (b *Builder) SetDirectory(broker int32, dir uuid.UUID) *Builder {
	b.dirOverrides = append(b.dirOverrides, dirOverride{broker, dir})
	return b
}

// SetUseLastKnownLeader turns off electing the last-known leader when
// nothing else is left (on by default; Kafka 4.4.0 always has it on).
// Off, the last-known ELR keeps every former ELR member instead of the
// last leader.
func (b *Builder) SetUseLastKnownLeader(on bool) *Builder { b.useLastKnownLeader = on; return b }

// TargetISR is the ISR the change aims at (after Build: the ISR it leads to
// when the record does not name one).
func (b *Builder) TargetISR() []int32 { return b.targetISR }

// Errors for inputs Kafka refuses with an exception.
var (
	ErrNoDefaultDir     = errors.New("partitionchange: no default directory provider")
	ErrNoReplicas       = errors.New("partitionchange: a preferred election needs replicas")
	ErrBadDirectories   = errors.New("partitionchange: replicas and directories do not match")
	ErrDuplicateBroker  = errors.New("partitionchange: duplicate broker in the replicas")
	ErrBadRecoveryState = errors.New("partitionchange: unknown leader recovery state")
)

// Build decides the change. It returns the record and the version to write
// it at, or a nil record when nothing changes. The error is for inputs Kafka
// fails on (a bug in the caller, never in the cluster's data).
func (b *Builder) Build() (*metadata.PartitionChangeRecord, int16, error) {
	if err := b.check(); err != nil {
		return nil, 0, err
	}
	rec := metadata.NewPartitionChangeRecord()
	rec.TopicId = b.ctx.TopicID
	rec.PartitionId = b.ctx.PartitionID

	b.completeReassignment()
	b.populateTargetELR()
	if err := b.elect(rec); err != nil {
		return nil, 0, err
	}
	// Dropping a replica bumps the leader epoch even when the leader stays,
	// so the dropped replica's fetches are fenced.
	if rec.Leader == NoLeaderChange && !containsAll(b.targetReplicas, b.p.Replicas) {
		rec.Leader = b.p.Leader
	}
	b.updateRecordELR(rec)
	// With ELR on, the ISR may become empty.
	if rec.Isr == nil && (len(b.targetISR) > 0 || b.ctx.ELR) && !slices.Equal(b.targetISR, orEmpty(b.p.ISR)) {
		rec.Isr = b.targetISR
	}
	// Before 3.6-IV0 brokers needed a new leader epoch on an ISR shrink
	// (KAFKA-15021).
	if !b.ctx.MetadataVersion.Has(metadata.GateNoLeaderEpochBumpOnIsrShrink) && rec.Leader == NoLeaderChange &&
		rec.Isr != nil && !containsAll(rec.Isr, b.p.ISR) {
		rec.Leader = b.p.Leader
	}
	b.updateLastKnownLeader(rec)
	if err := b.setAssignment(rec); err != nil {
		return nil, 0, err
	}
	if b.targetLRS != b.p.LeaderRecoveryState {
		rec.LeaderRecoveryState = b.targetLRS
	}
	if noOp(rec) {
		return nil, 0, nil
	}
	version, ok := b.ctx.MetadataVersion.RecordVersion(metadata.PartitionChangeRecordAPIKey)
	if !ok {
		return nil, 0, fmt.Errorf("partitionchange: metadata.version %d writes no PartitionChangeRecord", b.ctx.MetadataVersion)
	}
	return rec, version, nil
}

// check refuses what Kafka's PartitionRegistration and builder throw on.
func (b *Builder) check() error {
	p := b.p
	if p.Directories != nil && len(p.Directories) != len(p.Replicas) {
		return ErrBadDirectories
	}
	for i, r := range p.Replicas {
		if slices.Contains(p.Replicas[:i], r) {
			return ErrDuplicateBroker
		}
	}
	if b.targetLRS != Recovered && b.targetLRS != Recovering {
		return ErrBadRecoveryState
	}
	if b.ctx.Acceptable == nil {
		b.ctx.Acceptable = func(int32) bool { return false }
	}
	return nil
}

// noOp is Kafka's changeRecordIsNoOp: every field left at "no change".
func noOp(r *metadata.PartitionChangeRecord) bool {
	return r.Isr == nil && r.EligibleLeaderReplicas == nil && r.LastKnownElr == nil &&
		r.Leader == NoLeaderChange && r.Replicas == nil && r.RemovingReplicas == nil &&
		r.AddingReplicas == nil && r.LeaderRecoveryState == noLRSChange && r.Directories == nil
}

// completeReassignment finishes a reassignment (Kafka 4.4.0's
// PartitionReassignmentReplicas.maybeCompleteReassignment): the removed
// replicas leave replicas and ISR, and removing and adding empty, once the
// ISR without the removed replicas is not empty and holds every added
// replica and, when fewer replicas are added than removed, every replica
// that stays. (Before 4.4 it always needed every replica that stays.)
func (b *Builder) completeReassignment() {
	if len(b.targetRemoving) == 0 && len(b.targetAdding) == 0 {
		return
	}
	isr, replicas := slices.Clone(b.targetISR), b.targetReplicas
	if len(b.targetRemoving) > 0 {
		keep := func(s []int32) []int32 {
			out := make([]int32, 0, len(s))
			for _, r := range s {
				if !slices.Contains(b.targetRemoving, r) {
					out = append(out, r)
				}
			}
			return out
		}
		if isr = keep(b.targetISR); len(isr) == 0 {
			return
		}
		if replicas = keep(b.targetReplicas); len(replicas) == 0 {
			return
		}
	}
	if !containsAll(isr, b.targetAdding) {
		return
	}
	if len(b.targetAdding) < len(b.targetRemoving) && !containsAll(isr, replicas) {
		return
	}
	b.targetISR, b.targetReplicas = isr, replicas
	b.targetRemoving, b.targetAdding = []int32{}, []int32{}
}

// populateTargetELR (KIP-966): while the target ISR is below min ISR, the
// replicas that were in the ISR or ELR and are not in the target ISR become
// (or stay) eligible, unless they shut down uncleanly; the last-known ELR
// keeps the others. At or above min ISR both empty. The lists come in the
// JVM's HashSet order, as Kafka builds them.
func (b *Builder) populateTargetELR() {
	if !b.ctx.ELR {
		return
	}
	if len(b.targetISR) >= b.ctx.MinISR {
		b.targetELR, b.targetLastKnownELR = []int32{}, []int32{}
		return
	}
	candidates := jvmorder.NewIntSetOf(b.targetELR)
	candidates.AddAll(b.p.ISR)
	elr := []int32{}
	for _, r := range candidates.Values() {
		if !slices.Contains(b.targetISR, r) && !slices.Contains(b.uncleanShutdown, r) {
			elr = append(elr, r)
		}
	}
	b.targetELR = elr
	candidates.AddAll(b.targetLastKnownELR)
	lke := []int32{}
	for _, r := range candidates.Values() {
		if !slices.Contains(b.targetISR, r) && !slices.Contains(b.targetELR, r) {
			lke = append(lke, r)
		}
	}
	b.targetLastKnownELR = lke
}
