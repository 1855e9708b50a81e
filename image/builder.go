package image

import (
	"fmt"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// Builder replays records onto an image (Kafka's MetadataDelta and the
// controller managers' replay methods in one). It is not safe for concurrent
// use; the images it hands out are.
//
// Replay checks what a Kafka 4.4 standby controller checks and fails where
// it would halt. A record that fails changes nothing: each replay method
// checks everything before it writes.
type Builder struct {
	st        state
	own       *owner // what this builder created since its last Image
	supported map[string]features.Range
}

// Options tunes a Builder.
type Options struct {
	// SupportedFeatures are the feature ranges this node supports: a
	// FeatureLevelRecord outside its feature's range fails, and a feature
	// not listed supports level 0 only (Kafka's
	// QuorumFeatures.localSupportedFeature). Nil means features.Supported(),
	// what a Kafka 4.4 controller supports without unstable versions.
	SupportedFeatures []features.Range
}

// NewBuilder returns a builder that starts from im.
func NewBuilder(im *Image, opts Options) *Builder {
	ranges := opts.SupportedFeatures
	if ranges == nil {
		ranges = features.Supported()
	}
	b := &Builder{st: im.st, own: newOwner(), supported: make(map[string]features.Range, len(ranges))}
	for _, r := range ranges {
		b.supported[r.Name] = r
	}
	return b
}

// Image returns the image as replayed so far. It costs O(1): the builder
// goes on with a new owner, so nothing the image holds is written again.
func (b *Builder) Image() *Image {
	im := &Image{st: b.st}
	b.own = newOwner()
	return im
}

// Provenance returns the offset and epoch of the last record replayed.
func (b *Builder) Provenance() Provenance { return b.st.prov }

// Advance moves the provenance to offset and epoch without a record: past a
// control batch, or a transaction marker the Loader handled.
func (b *Builder) Advance(offset int64, epoch int32) {
	b.st.prov = Provenance{offset, epoch}
}

// ReplayError says which record failed and why. The caller treats it as
// fatal, as a Kafka controller halts on a replay failure: the log and this
// node disagree.
type ReplayError struct {
	Offset  int64
	Type    string // the record's schema name
	Version int16
	Reason  string
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("image: %s v%d at offset %d: %s", e.Type, e.Version, e.Offset, e.Reason)
}

// Replay applies one record at version, from the batch of leader epoch
// epoch at offset. Transaction records (Begin, End, Abort) are the Loader's;
// handed here they fail.
func (b *Builder) Replay(offset int64, epoch int32, rec metadata.Record, version int16) error {
	if err := b.replay(offset, rec); err != nil {
		return &ReplayError{Offset: offset, Type: rec.TypeName(), Version: version, Reason: err.Error()}
	}
	b.st.prov = Provenance{offset, epoch}
	return nil
}

func (b *Builder) replay(offset int64, rec metadata.Record) error {
	switch r := rec.(type) {
	case *metadata.RegisterBrokerRecord:
		return b.registerBroker(offset, r)
	case *metadata.UnregisterBrokerRecord:
		return b.unregisterBroker(r)
	case *metadata.TopicRecord:
		return b.createTopic(r)
	case *metadata.PartitionRecord:
		return b.setPartition(r)
	case *metadata.ConfigRecord:
		return b.setConfig(r)
	case *metadata.PartitionChangeRecord:
		return b.changePartition(r)
	case *metadata.FenceBrokerRecord:
		return b.changeBroker(r.Id, r.Epoch, brokerChange{fenced: ptr(true)})
	case *metadata.UnfenceBrokerRecord:
		return b.changeBroker(r.Id, r.Epoch, brokerChange{fenced: ptr(false)})
	case *metadata.RemoveTopicRecord:
		return b.removeTopic(r)
	case *metadata.DelegationTokenRecord:
		b.setToken(r)
	case *metadata.UserScramCredentialRecord:
		b.setScram(r)
	case *metadata.FeatureLevelRecord:
		return b.setFeature(r)
	case *metadata.ClientQuotaRecord:
		b.setQuota(r)
	case *metadata.ProducerIdsRecord:
		return b.setProducerIDs(r)
	case *metadata.BrokerRegistrationChangeRecord:
		return b.brokerRegistrationChange(r)
	case *metadata.AccessControlEntryRecord:
		b.setACL(r)
	case *metadata.RemoveAccessControlEntryRecord:
		return b.removeACL(r)
	case *metadata.NoOpRecord, *metadata.ZkMigrationStateRecord:
		// Nothing but the offset: NoOp keeps brokers' offsets moving;
		// ZkMigrationState is a 3.x migration leftover Kafka 4 ignores.
	case *metadata.RemoveUserScramCredentialRecord:
		return b.removeScram(r)
	case *metadata.RemoveDelegationTokenRecord:
		b.st.tokens.delete(b.own, r.TokenId)
	case *metadata.RegisterControllerRecord:
		return b.registerController(r)
	case *metadata.ClearElrRecord:
		return b.clearELR(r)
	case *metadata.UnregisterControllerRecord:
		if _, ok := b.st.controllers.delete(b.own, r.ControllerId); !ok {
			return fmt.Errorf("controller %d is not registered", r.ControllerId)
		}
	case *metadata.BeginTransactionRecord, *metadata.EndTransactionRecord, *metadata.AbortTransactionRecord:
		return fmt.Errorf("a transaction marker outside a loader")
	default:
		return fmt.Errorf("record type %d has no replay", rec.APIKey())
	}
	return nil
}

func ptr[T any](v T) *T { return &v }
