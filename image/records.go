package image

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// The replay of the records outside the cluster and the topics: features,
// configuration, client quotas, producer ids, ACLs, SCRAM credentials and
// delegation tokens.

func (b *Builder) setFeature(r *metadata.FeatureLevelRecord) error {
	rng, ok := b.supported[r.Name]
	if !ok {
		rng = features.Range{Name: r.Name}
	}
	if r.FeatureLevel < rng.Min || r.FeatureLevel > rng.Max {
		return fmt.Errorf("feature %s level %d is outside the supported range %d-%d", clip(r.Name), r.FeatureLevel, rng.Min, rng.Max)
	}
	switch r.Name {
	case features.MetadataVersionName:
		if !metadata.Level(r.FeatureLevel).Known() {
			return fmt.Errorf("metadata.version level %d is not one Kafka 4.4 knows", r.FeatureLevel)
		}
		b.st.mv = metadata.Level(r.FeatureLevel)
	case features.KRaftVersionName:
		// Kafka skips it (KAFKA-18979): kraft.version lives in raft's
		// control records, and a FeatureLevelRecord for it was a mistake
		// of older versions that snapshots drop.
	default:
		if r.FeatureLevel == 0 {
			b.st.features.delete(b.own, r.Name)
		} else {
			b.st.features.set(b.own, r.Name, r.FeatureLevel)
		}
	}
	return nil
}

// Kafka's ConfigResource.Type ids.
const (
	unknownResource       int8 = 0
	topicResource         int8 = 2
	brokerResource        int8 = 4
	brokerLoggerResource  int8 = 8
	clientMetricsResource int8 = 16
	groupResource         int8 = 32
)

// configResourceType is Kafka's ConfigResource.Type.forId: an id it does not
// know is UNKNOWN (0).
func configResourceType(t int8) int8 {
	switch t {
	case topicResource, brokerResource, brokerLoggerResource, clientMetricsResource, groupResource:
		return t
	}
	return unknownResource
}

func (b *Builder) setConfig(r *metadata.ConfigRecord) error {
	typ := configResourceType(r.ResourceType)
	if !configSupported(typ, r.Name) {
		// Kafka 4.4 skips it (SupportedConfigChecker), brokers too.
		return nil
	}
	if typ == brokerResource && r.ResourceName != "" && !javaInt(r.ResourceName) {
		return fmt.Errorf("broker resource name %q is not a broker id", clip(r.ResourceName))
	}
	k := configKey(typ, r.ResourceName, r.Name)
	if r.Value == nil {
		b.st.configs.delete(b.own, k)
	} else {
		b.st.configs.set(b.own, k, *r.Value)
	}
	return nil
}

// javaInt reports whether Java's Integer.parseInt accepts s: an optional
// sign, then decimal digits within int32's range. (Java also takes other
// Unicode decimal digits, which no broker id is written with.)
func javaInt(s string) bool {
	neg := strings.HasPrefix(s, "-")
	if neg || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	var v int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
		if v = v*10 + int64(c-'0'); v > 1<<31 {
			return false
		}
	}
	return v < 1<<31 || neg
}

// QuotaEntity is a client quota entity: its parts sorted by type, each
// type once (Kafka keys them by type; the last of a type wins).
type QuotaEntity []QuotaEntityPart

// QuotaEntityPart is one (type, name) of an entity; a nil Name is the
// type's default entity.
type QuotaEntityPart struct {
	Type string // "user", "client-id", "ip"
	Name *string
}

// entityKey encodes an entity canonically, as a map key.
func entityKey(parts []metadata.ClientQuotaRecordEntityData) string {
	e := make(QuotaEntity, len(parts))
	for i, p := range parts {
		e[i] = QuotaEntityPart{p.EntityType, p.EntityName}
	}
	e = byName(e, func(p *QuotaEntityPart) string { return p.Type })
	var b []byte
	for _, p := range e {
		b = appendString(b, p.Type)
		if p.Name == nil {
			b = append(b, 0)
		} else {
			b = appendString(append(b, 1), *p.Name)
		}
	}
	return string(b)
}

func decodeEntity(k string) QuotaEntity {
	b := []byte(k)
	var e QuotaEntity
	for len(b) > 0 {
		var p QuotaEntityPart
		p.Type, b = readString(b)
		null := b[0] == 0
		b = b[1:]
		if !null {
			var name string
			name, b = readString(b)
			p.Name = &name
		}
		e = append(e, p)
	}
	return e
}

func (b *Builder) setQuota(r *metadata.ClientQuotaRecord) {
	k := quotaKey(entityKey(r.Entity), r.Key)
	if r.Remove {
		b.st.quotas.delete(b.own, k)
	} else {
		b.st.quotas.set(b.own, k, r.Value)
	}
}

// setProducerIDs is ProducerIdControlManager.replay: once a block was
// handed out, the next one must start past it.
func (b *Builder) setProducerIDs(r *metadata.ProducerIdsRecord) error {
	if cur := b.st.producerIDs; cur.set && r.NextProducerId <= cur.next {
		return fmt.Errorf("next producer id %d is not greater than the current block's first, %d", r.NextProducerId, cur.next)
	}
	b.st.producerIDs = producerIDs{next: r.NextProducerId, set: true}
	return nil
}

// ACL is an access control entry. Its codes are Kafka's, with the ones
// Kafka 4.4 does not know read as UNKNOWN (0), as its replay reads them.
type ACL struct {
	ID             uuid.UUID
	ResourceType   int8 // ResourceType: 0 UNKNOWN .. 7 USER
	ResourceName   string
	PatternType    int8 // PatternType: 0 UNKNOWN .. 4 PREFIXED
	Principal      string
	Host           string
	Operation      int8 // AclOperation: 0 UNKNOWN .. 15 TWO_PHASE_COMMIT
	PermissionType int8 // AclPermissionType: 0 UNKNOWN .. 3 ALLOW
}

// code maps an enum code outside 0..max to UNKNOWN (0), as Kafka's fromCode.
func code(c int8, max int8) int8 {
	if c < 0 || c > max {
		return 0
	}
	return c
}

// contentKey is the ACL without its id, Kafka's StandardAcl.
func (a *ACL) contentKey() string {
	b := []byte{byte(a.ResourceType), byte(a.PatternType), byte(a.Operation), byte(a.PermissionType)}
	for _, s := range []string{a.ResourceName, a.Principal, a.Host} {
		b = appendString(b, s)
	}
	return string(b)
}

func (b *Builder) setACL(r *metadata.AccessControlEntryRecord) {
	a := &ACL{
		ID: r.Id, ResourceType: code(r.ResourceType, 7), ResourceName: r.ResourceName,
		PatternType: code(r.PatternType, 4), Principal: r.Principal, Host: r.Host,
		Operation: code(r.Operation, 15), PermissionType: code(r.PermissionType, 3),
	}
	b.st.acls.set(b.own, idKey(a.ID), a)
	b.st.aclContents.set(b.own, a.contentKey(), struct{}{})
}

// removeACL is AclControlManager.replay: the id must exist, and its content
// must still be among the contents (Kafka keeps them as a set, so two ids
// with one content cannot both be removed).
func (b *Builder) removeACL(r *metadata.RemoveAccessControlEntryRecord) error {
	a, ok := b.st.acls.get(idKey(r.Id))
	if !ok {
		return fmt.Errorf("no ACL with ID %v", uuid.UUID(r.Id))
	}
	if !b.st.aclContents.has(a.contentKey()) {
		return fmt.Errorf("the content of ACL %v is no longer among the ACLs", uuid.UUID(r.Id))
	}
	b.st.acls.delete(b.own, idKey(r.Id))
	b.st.aclContents.delete(b.own, a.contentKey())
	return nil
}

// ScramCredential is a user's SCRAM credential for one mechanism (1
// SCRAM-SHA-256, 2 SCRAM-SHA-512, 0 for a code Kafka 4.4 does not know).
type ScramCredential struct {
	Name                       string
	Mechanism                  int8
	Salt, StoredKey, ServerKey []byte
	Iterations                 int32
}

func (b *Builder) setScram(r *metadata.UserScramCredentialRecord) {
	c := &ScramCredential{
		Name: r.Name, Mechanism: code(r.Mechanism, 2), Salt: r.Salt, StoredKey: r.StoredKey,
		ServerKey: r.ServerKey, Iterations: r.Iterations,
	}
	b.st.scram.set(b.own, scramKey(c.Mechanism, c.Name), c)
}

func (b *Builder) removeScram(r *metadata.RemoveUserScramCredentialRecord) error {
	if _, ok := b.st.scram.delete(b.own, scramKey(code(r.Mechanism, 2), r.Name)); !ok {
		return fmt.Errorf("no SCRAM credential of mechanism %d for user %q", r.Mechanism, clip(r.Name))
	}
	return nil
}

// DelegationToken is a delegation token's information.
type DelegationToken struct {
	TokenID                                           string
	Owner, Requester                                  string
	Renewers                                          []string
	IssueTimestamp, MaxTimestamp, ExpirationTimestamp int64
}

func (b *Builder) setToken(r *metadata.DelegationTokenRecord) {
	b.st.tokens.set(b.own, r.TokenId, &DelegationToken{
		TokenID: r.TokenId, Owner: r.Owner, Requester: r.Requester, Renewers: slices.Clone(r.Renewers),
		IssueTimestamp: r.IssueTimestamp, MaxTimestamp: r.MaxTimestamp, ExpirationTimestamp: r.ExpirationTimestamp,
	})
}
