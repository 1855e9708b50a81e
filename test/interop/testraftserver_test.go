package interop

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/testenv"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// TestKafkaTestRaftServer runs Kafka's TestRaftServer as a single voter (the harness later
// mixed-quorum tests build on) and checks with kafka-dump-log what its workload wrote: a
// LeaderChange control record, then data records of the requested size at contiguous
// offsets in the leader's epoch.
func TestKafkaTestRaftServer(t *testing.T) {
	env := kafkatest.Require(t)
	const recordSize = 100
	srv := env.StartTestRaftServer(t, kafkatest.RaftServerConfig{NodeID: 1, Throughput: 500, RecordSize: recordSize,
		Log4jLevels: map[string]string{kafkatest.LeaderStateLogger: "DEBUG"}})
	if err := srv.WaitLog("Completed transition to Leader", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	// The workload commits records past the LeaderChange at offset 0.
	testenv.WaitFor(t, 30*time.Second, "TestRaftServer to commit workload records", func() bool { return srv.LeaderHighWatermark() > 1 })
	u, err := srv.Usage()
	if err != nil || u.CPU <= 0 || u.PeakRSS <= 0 {
		t.Errorf("usage %+v: %v", u, err)
	}
	t.Logf("TestRaftServer usage so far: CPU %v, peak RSS %d MiB", u.CPU, u.PeakRSS>>20)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{DeepIteration: true}, filepath.Join(srv.PartitionDir, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || len(files[0].Batches) < 2 {
		t.Fatalf("expected a LeaderChange batch and data batches:\n%s", out)
	}
	next := int64(0)
	data := 0
	for i, b := range files[0].Batches {
		base, err := b.Int("baseOffset")
		if err != nil || base != next {
			t.Fatalf("batch %d base offset %d (%v), want %d", i, base, err, next)
		}
		last, _ := b.Int("lastOffset")
		next = last + 1
		if b.Fields["isvalid"] != "true" || b.Fields["partitionLeaderEpoch"] != "1" {
			t.Errorf("batch %d: %v", i, b.Fields)
		}
		for _, r := range b.Records {
			if i == 0 {
				if b.Fields["isControl"] != "true" || !strings.HasPrefix(r.Rest, "LeaderChange: ") {
					t.Errorf("first batch is not the LeaderChange control batch: %v %+v", b.Fields, r)
				}
				continue
			}
			data++
			if r.Fields["valueSize"] != "100" || r.Fields["keySize"] != "-1" {
				t.Errorf("data record %+v, want a %d-byte value and no key", r.Fields, recordSize)
			}
		}
	}
	if data == 0 {
		t.Errorf("TestRaftServer wrote no data records:\n%s", out)
	}
	t.Logf("TestRaftServer wrote %d records of %d bytes in %d batches", data, recordSize, len(files[0].Batches)-1)
}
