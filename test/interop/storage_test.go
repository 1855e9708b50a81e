package interop

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKafkaFormattedDirReadByKraftd: a log dir formatted by Kafka's storage tool is accepted
// by kraftd's storage package (same ids, same `info` text).
func TestKafkaFormattedDirReadByKraftd(t *testing.T) {
	env := kafkatest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	work := t.TempDir()
	dir := filepath.Join(work, "data")
	cfg := kafkatest.ControllerConfig{NodeID: 3, Port: kafkatest.FreePort(t)}
	config := filepath.Join(work, "server.properties")
	if err := kafkatest.ControllerProps(cfg, dir).WriteFile(config); err != nil {
		t.Fatal(err)
	}
	id := kafkatest.NewUUID()
	out, err := env.StorageFormat(ctx, config, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kafka-storage format: %s", strings.TrimSpace(out))
	kafkaMeta, err := kafkatest.MetaProperties(dir)
	if err != nil {
		t.Fatal(err)
	}

	mp, err := storage.ReadMetaProperties(dir)
	if err != nil {
		t.Fatalf("kraftd rejects Kafka's meta.properties: %v", err)
	}
	if mp.Version != 1 || mp.ClusterID != id || mp.NodeID != 3 || mp.DirectoryID.String() != kafkaMeta["directory.id"] {
		t.Errorf("kraftd read %+v (directory id %s), Kafka wrote %v", mp, mp.DirectoryID, kafkaMeta)
	}
	node, err := storage.Load([]string{dir}, dir, 3)
	if err != nil {
		t.Fatalf("kraftd start-up checks reject Kafka's dir: %v", err)
	}
	if node.ClusterID != id || node.DirectoryID.String() != kafkaMeta["directory.id"] {
		t.Errorf("Load: cluster %s directory %s, want %s and %s", node.ClusterID, node.DirectoryID, id, kafkaMeta["directory.id"])
	}

	kafkaInfo, err := env.StorageInfo(ctx, config)
	if err != nil {
		t.Fatal(err)
	}
	ourInfo, err := storage.Info([]string{dir})
	if err != nil {
		t.Fatalf("kraftd info: %v\n%s", err, ourInfo)
	}
	if ourInfo != kafkaInfo {
		t.Errorf("info texts differ:\nkafka-storage info:\n%q\nkraftd info:\n%q", kafkaInfo, ourInfo)
	}
}

// TestKraftdFormattedDirUsedByKafka: a log dir formatted by kraftd (storage.Format) is
// accepted by Kafka's storage tool and log dump tool, and a real Kafka controller starts on
// it, bootstraps from kraftd's bootstrap snapshot and elects itself; metadatalog then reads
// the segment Kafka wrote there.
func TestKraftdFormattedDirUsedByKafka(t *testing.T) {
	t.Parallel() // see interop/doc.go
	env := kafkatest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	work := t.TempDir()
	dir := filepath.Join(work, "data")
	id := kafkatest.NewUUID()
	var progress strings.Builder
	if err := storage.Format(storage.FormatOptions{Dirs: []string{dir}, MetadataDir: dir, ClusterID: id, NodeID: 1, Out: &progress}); err != nil {
		t.Fatal(err)
	}
	ours, err := storage.ReadMetaProperties(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := kafkatest.ControllerConfig{NodeID: 1, ClusterID: id, Port: kafkatest.FreePort(t), NoFormat: true, Dir: dir}
	config := filepath.Join(work, "server.properties")
	if err := kafkatest.ControllerProps(cfg, dir).WriteFile(config); err != nil {
		t.Fatal(err)
	}

	info, err := env.StorageInfo(ctx, config)
	if err != nil {
		t.Fatalf("kafka-storage info rejects kraftd's dir: %v", err)
	}
	for _, want := range []string{"cluster.id=" + id, "directory.id=" + ours.DirectoryID.String(), "node.id=1", "version=1"} {
		if !strings.Contains(info, want) {
			t.Errorf("kafka-storage info lacks %q:\n%s", want, info)
		}
	}
	if strings.Contains(info, "problem") {
		t.Errorf("kafka-storage info found problems:\n%s", info)
	}

	boot := filepath.Join(dir, "__cluster_metadata-0", storage.BootstrapSnapshotName)
	dump, err := env.DumpLog(ctx, kafkatest.DumpOptions{ClusterMetadataDecoder: true}, boot)
	if err != nil {
		t.Fatalf("kafka-dump-log rejects kraftd's bootstrap snapshot %s: %v", boot, err)
	}
	files, err := kafkatest.ParseDumpLog(dump)
	if err != nil {
		t.Fatal(err)
	}
	mvRecord := `{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":` +
		strconv.Itoa(int(features.LatestProduction.Level)) + `}}`
	if len(files) != 1 || len(files[0].Batches) < 2 || !hasRecord(files[0], "payload: "+mvRecord) ||
		!hasRecordPrefix(files[0], "SnapshotHeader ") || !hasRecordPrefix(files[0], "SnapshotFooter ") {
		t.Errorf("kafka-dump-log of kraftd's bootstrap snapshot lacks header, %s or footer:\n%s", mvRecord, dump)
	}
	for _, b := range files[0].Batches {
		if b.Fields["isvalid"] != "true" {
			t.Errorf("kafka-dump-log finds an invalid batch: %v", b.Fields)
		}
	}

	ctrl := env.StartController(t, cfg)
	if err := ctrl.WaitLog("Completed transition to Leader", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	// The controller appends the bootstrap records, read from kraftd's file, once it leads.
	if err := ctrl.WaitLog("Replayed a FeatureLevelRecord", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Stop(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(ctrl.PartitionDir, "00000000000000000000.log")
	dump, err = env.DumpLog(ctx, kafkatest.DumpOptions{ClusterMetadataDecoder: true}, seg)
	if err != nil {
		t.Fatal(err)
	}
	files, err = kafkatest.ParseDumpLog(dump)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || !hasRecord(files[0], "payload: "+mvRecord) {
		t.Errorf("Kafka did not bootstrap from kraftd's snapshot (want %s in its log):\n%s", mvRecord, dump)
	}
	// And kraftd reads the log Kafka wrote on kraftd's dir (after a clean shutdown).
	readKafkaLogWithMetadatalog(t, env, ctrl.PartitionDir)
}

func hasRecord(f kafkatest.DumpFile, rest string) bool {
	for _, b := range f.Batches {
		for _, r := range b.Records {
			if r.Rest == rest {
				return true
			}
		}
	}
	return false
}

func hasRecordPrefix(f kafkatest.DumpFile, prefix string) bool {
	for _, b := range f.Batches {
		for _, r := range b.Records {
			if strings.HasPrefix(r.Rest, prefix) {
				return true
			}
		}
	}
	return false
}
