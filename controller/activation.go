package controller

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// activation is what a controller appends when it becomes active, and the
// line it logs about it (Kafka 4.4.0's ActivationRecordsGenerator):
//
//   - a log without a metadata.version ("empty"): the bootstrap records,
//     inside a metadata transaction from 3.6-IV1 (Begin "Bootstrap records",
//     the records, a cluster-level min.insync.replicas ConfigRecord when the
//     bootstrap enables ELR, End), preceded by an Abort "Controller
//     failover" when an earlier leader's bootstrap transaction was left
//     open; below 3.6-IV1 the same records without markers, as one batch;
//   - any other log: an Abort "Controller failover" when a transaction is
//     open, nothing otherwise.
//
// An open transaction at a metadata.version without transactions cannot be
// closed: the error is fatal, as Kafka's RuntimeException is.
type activation struct {
	records []cluster.Record
	atomic  bool
	message string
}

// bootstrapSource names where the bootstrap records came from, in Kafka's
// words.
const (
	bootstrapFromSnapshot = "the bootstrap snapshot"
	bootstrapDefault      = "the default bootstrap"
)

func activationRecords(committed *image.Loader, minISR string) (activation, error) {
	txStart, open := committed.Transaction()
	if !open {
		txStart = -1
	}
	if mv, ok := committed.Image().MetadataVersion(); ok {
		return nonEmptyActivation(txStart, mv)
	}
	boot, versions, source := bootstrapRecords(committed)
	return emptyActivation(txStart, boot, versions, source, minISR)
}

func nonEmptyActivation(txStart int64, mv metadata.Level) (activation, error) {
	a := activation{atomic: true, message: "Performing controller activation."}
	if txStart >= 0 {
		if !mv.Has(metadata.GateMetadataTransactions) {
			return a, fmt.Errorf("Detected in-progress transaction at offset %d, but the metadata.version %s does not support transactions. Cannot continue.",
				txStart, levelName(mv))
		}
		a.message += fmt.Sprintf(" Aborting in-progress metadata transaction at offset %d.", txStart)
		a.records = append(a.records, cluster.Record{Record: &metadata.AbortTransactionRecord{Reason: ptr("Controller failover")}})
	}
	return a, nil
}

func emptyActivation(txStart int64, boot []metadata.Record, versions []int16, source, minISR string) (activation, error) {
	mv := bootstrapLevel(boot)
	tx := mv.Has(metadata.GateMetadataTransactions)
	a := activation{atomic: !tx, message: "Performing controller activation."}
	begin := cluster.Record{Record: &metadata.BeginTransactionRecord{Name: ptr("Bootstrap records")}}
	if txStart >= 0 {
		if !tx {
			return a, fmt.Errorf("Detected partial bootstrap records transaction at %d, but the metadata.version %s does not support transactions. Cannot continue.",
				txStart, levelName(mv))
		}
		a.message += fmt.Sprintf(" Aborting partial bootstrap records transaction at offset %d. Re-appending %d bootstrap record(s) in new metadata transaction at metadata.version %s from bootstrap source '%s'.",
			txStart, len(boot), levelName(mv), source)
		a.records = append(a.records, cluster.Record{Record: &metadata.AbortTransactionRecord{Reason: ptr("Controller failover")}}, begin)
	} else {
		a.message += fmt.Sprintf(" The metadata log appears to be empty. Appending %d bootstrap record(s) ", len(boot))
		if tx {
			a.records = append(a.records, begin)
			a.message += "in metadata transaction "
		}
		a.message += fmt.Sprintf("at metadata.version %s from bootstrap source '%s'.", levelName(mv), source)
	}
	for i, r := range boot {
		a.records = append(a.records, cluster.Record{Record: r, Version: versions[i]})
	}
	if featureLevel(boot, "eligible.leader.replicas.version") > 0 {
		a.records = append(a.records, cluster.Record{Record: &metadata.ConfigRecord{
			ResourceType: 4, ResourceName: "", Name: "min.insync.replicas", Value: ptr(minISR)}})
	}
	if tx {
		a.records = append(a.records, cluster.Record{Record: &metadata.EndTransactionRecord{}})
	}
	return a, nil
}

// bootstrapRecords are the records of the bootstrap snapshot 0-0, or, with
// none, Kafka's BootstrapMetadata.fromVersion(latestProduction): the
// metadata.version and every other feature at its default level for it,
// by name.
func bootstrapRecords(committed *image.Loader) ([]metadata.Record, []int16, string) {
	if recs, ok := committed.Bootstrap(); ok {
		return recs, committed.BootstrapVersions(), bootstrapFromSnapshot
	}
	mv := features.LatestProduction
	recs := []metadata.Record{&metadata.FeatureLevelRecord{Name: features.MetadataVersionName, FeatureLevel: mv.Level}}
	levels := map[string]int16{}
	for _, n := range features.Names() {
		if n != features.MetadataVersionName && n != features.KRaftVersionName {
			levels[n] = features.DefaultLevel(n, mv)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(levels)) {
		if levels[n] > 0 {
			recs = append(recs, &metadata.FeatureLevelRecord{Name: n, FeatureLevel: levels[n]})
		}
	}
	return recs, make([]int16, len(recs)), bootstrapDefault
}

// bootstrapLevel is the bootstrap's metadata.version; a bootstrap without
// one counts as the lowest level.
func bootstrapLevel(boot []metadata.Record) metadata.Level {
	if l := featureLevel(boot, features.MetadataVersionName); l > 0 {
		return metadata.Level(l)
	}
	return metadata.MinLevel
}

func featureLevel(boot []metadata.Record, name string) int16 {
	for _, r := range boot {
		if f, ok := r.(*metadata.FeatureLevelRecord); ok && f.Name == name {
			return f.FeatureLevel
		}
	}
	return 0
}

// levelName is the metadata.version's name as Kafka prints it ("4.4-IV2").
func levelName(l metadata.Level) string {
	if mv, err := features.MetadataVersionByLevel(int16(l)); err == nil {
		return mv.Name
	}
	return fmt.Sprintf("level %d", l)
}

func ptr[T any](v T) *T { return &v }
