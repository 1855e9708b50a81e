package image

import (
	"fmt"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// Write emits the image as the records of a snapshot, as Kafka's
// MetadataImage.write emits them: metadata.version first (at version 0, so
// any reader can read what follows), the other features, the brokers, the
// controllers, each topic followed by its partitions, the configuration,
// the client quotas, the producer-id block, the ACLs, the SCRAM credentials
// and the delegation tokens. Each record comes at the version Kafka writes
// at the image's metadata.version, and the order within a section is the
// key order (Kafka's is its hash maps', so snapshots compare as sets).
//
// It fails before a metadata.version, and where the metadata.version cannot
// carry what the image holds (Kafka's ImageWriterOptions loss handler,
// which fails snapshot generation): directories before 3.7-IV2, cordoned
// directories before 4.3-IV0, controllers before 3.7-IV0, delegation tokens
// before 3.6-IV2. As in Kafka, SCRAM credentials below 3.5-IV2 and ELRs
// while eligible.leader.replicas.version is 0 are left out silently. An
// error from emit stops it and is returned.
func (im *Image) Write(emit func(rec metadata.Record, version int16) error) error {
	mv, ok := im.MetadataVersion()
	if !ok {
		return fmt.Errorf("image: no metadata.version to write a snapshot at")
	}
	w := writer{mv: mv, emit: emit}
	w.put(&metadata.FeatureLevelRecord{Name: features.MetadataVersionName, FeatureLevel: int16(mv)}, 0)
	for name, level := range im.Features() {
		w.put(&metadata.FeatureLevelRecord{Name: name, FeatureLevel: level}, 0)
	}
	for br := range im.Brokers() {
		w.broker(br)
	}
	for c := range im.Controllers() {
		w.controller(c)
	}
	elr := im.ELREnabled()
	for t := range im.Topics() {
		w.put(&metadata.TopicRecord{Name: t.name, TopicId: t.id}, 0)
		for pid, p := range t.Partitions() {
			w.partition(t.id, pid, p, elr)
		}
	}
	for c := range im.AllConfigs() {
		w.put(&metadata.ConfigRecord{ResourceType: c.ResourceType, ResourceName: c.ResourceName, Name: c.Name, Value: &c.Value}, 0)
	}
	for q := range im.ClientQuotas() {
		r := &metadata.ClientQuotaRecord{Key: q.Key, Value: q.Value, Entity: []metadata.ClientQuotaRecordEntityData{}}
		for _, p := range q.Entity {
			r.Entity = append(r.Entity, metadata.ClientQuotaRecordEntityData{EntityType: p.Type, EntityName: p.Name})
		}
		w.put(r, 0)
	}
	if next := im.NextProducerID(); next >= 0 {
		w.put(&metadata.ProducerIdsRecord{BrokerId: -1, BrokerEpoch: -1, NextProducerId: next}, 0)
	}
	for a := range im.ACLs() {
		w.put(&metadata.AccessControlEntryRecord{
			Id: a.ID, ResourceType: a.ResourceType, ResourceName: a.ResourceName, PatternType: a.PatternType,
			Principal: a.Principal, Host: a.Host, Operation: a.Operation, PermissionType: a.PermissionType,
		}, 0)
	}
	if mv.Has(metadata.GateScram) {
		for c := range im.ScramCredentials() {
			w.put(&metadata.UserScramCredentialRecord{
				Name: c.Name, Mechanism: c.Mechanism, Salt: c.Salt, StoredKey: c.StoredKey,
				ServerKey: c.ServerKey, Iterations: c.Iterations,
			}, 0)
		}
	}
	for t := range im.DelegationTokens() {
		if !mv.Has(metadata.GateDelegationTokens) {
			w.lose("delegation tokens")
			break
		}
		w.put(&metadata.DelegationTokenRecord{
			Owner: t.Owner, Requester: t.Requester, Renewers: nonNil(t.Renewers), IssueTimestamp: t.IssueTimestamp,
			MaxTimestamp: t.MaxTimestamp, ExpirationTimestamp: t.ExpirationTimestamp, TokenId: t.TokenID,
		}, 0)
	}
	return w.err
}

// writer carries a Write: the first failure stops everything after it.
type writer struct {
	mv   metadata.Level
	emit func(metadata.Record, int16) error
	err  error
}

func (w *writer) put(rec metadata.Record, version int16) {
	if w.err == nil {
		w.err = w.emit(rec, version)
	}
}

func (w *writer) lose(what string) {
	if w.err == nil {
		w.err = fmt.Errorf("image: metadata.version %d cannot carry the %s this image holds", w.mv, what)
	}
}

// version is the version Kafka writes a record type at, at this
// metadata.version.
func (w *writer) version(apiKey int16) int16 {
	v, _ := w.mv.RecordVersion(apiKey)
	return v
}

func (w *writer) broker(br *Broker) {
	r := metadata.NewRegisterBrokerRecord()
	r.BrokerId, r.BrokerEpoch, r.IncarnationId, r.Rack = br.ID, br.Epoch, br.IncarnationID, br.Rack
	r.Fenced, r.InControlledShutdown = br.Fenced, br.InControlledShutdown
	if br.MigratingZkBroker {
		if !w.mv.Has(metadata.GateMigration) {
			w.lose("ZooKeeper migration state of brokers")
		}
		r.IsMigratingZkBroker = true
	}
	if len(br.LogDirs) > 0 && !w.mv.Has(metadata.GateDirectoryAssignment) {
		w.lose("online log directories of brokers")
	}
	r.LogDirs = uuids(br.LogDirs)
	if br.CordonedLogDirs != nil {
		if !w.mv.Has(metadata.GateCordonedLogDirs) {
			w.lose("cordoned log directories of brokers")
		}
		r.CordonedLogDirs = uuids(br.CordonedLogDirs)
	}
	for _, e := range br.Endpoints {
		r.EndPoints = append(r.EndPoints, metadata.RegisterBrokerRecordBrokerEndpoint{
			Name: e.Name, Host: e.Host, Port: e.Port, SecurityProtocol: e.SecurityProtocol})
	}
	for _, f := range br.Features {
		r.Features = append(r.Features, metadata.RegisterBrokerRecordBrokerFeature{
			Name: f.Name, MinSupportedVersion: f.Min, MaxSupportedVersion: f.Max})
	}
	w.put(r, w.version(metadata.RegisterBrokerRecordAPIKey))
}

func (w *writer) controller(c *Controller) {
	if !w.mv.Has(metadata.GateControllerRegistration) {
		w.lose("controller registrations")
		return
	}
	r := &metadata.RegisterControllerRecord{ControllerId: c.ID, IncarnationId: c.IncarnationID, ZkMigrationReady: c.ZkMigrationReady}
	for _, e := range c.Endpoints {
		r.EndPoints = append(r.EndPoints, metadata.RegisterControllerRecordControllerEndpoint{
			Name: e.Name, Host: e.Host, Port: e.Port, SecurityProtocol: e.SecurityProtocol})
	}
	for _, f := range c.Features {
		r.Features = append(r.Features, metadata.RegisterControllerRecordControllerFeature{
			Name: f.Name, MinSupportedVersion: f.Min, MaxSupportedVersion: f.Max})
	}
	w.put(r, w.version(metadata.RegisterControllerRecordAPIKey))
}

func (w *writer) partition(topicID uuid.UUID, pid int32, p Partition, elr bool) {
	r := metadata.NewPartitionRecord()
	r.PartitionId, r.TopicId = pid, topicID
	r.Replicas, r.Isr = nonNil(p.Replicas()), nonNil(p.ISR())
	r.RemovingReplicas, r.AddingReplicas = nonNil(p.RemovingReplicas()), nonNil(p.AddingReplicas())
	r.Leader, r.LeaderRecoveryState, r.LeaderEpoch, r.PartitionEpoch = p.Leader(), p.LeaderRecoveryState(), p.LeaderEpoch(), p.PartitionEpoch()
	// Tagged fields, written only with content (Kafka saves the bytes).
	if elr && len(p.ELR()) > 0 {
		r.EligibleLeaderReplicas = p.ELR()
	}
	if elr && len(p.LastKnownELR()) > 0 {
		r.LastKnownElr = p.LastKnownELR()
	}
	if w.mv.Has(metadata.GateDirectoryAssignment) {
		r.Directories = uuids(p.Directories())
	} else if p.v[pMeta]&metaDirs != 0 {
		w.lose("directory assignments of replicas")
	}
	w.put(r, w.version(metadata.PartitionRecordAPIKey))
}

// nonNil: the record's non-nullable arrays are empty, not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
