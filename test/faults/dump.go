package faults

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/kraftd/kraftd/test/interop/kafkatest"
)

// CompareWithKafkaDump ends a mixed run: it kills every node (a kill -9
// keeps all they wrote in the page cache) and reads every node's segments,
// kraftd's and Kafka's, with Kafka's own kafka-dump-log. Each batch must be
// valid by Kafka's reading (its CRC), and the batches (offsets, epoch, CRC,
// control flag) must be exactly those metadatalog reads, the ones the
// checker judged.
func (c *Cluster) CompareWithKafkaDump() {
	c.t.Helper()
	env := kafkatest.Require(c.t)
	for _, id := range c.IDs {
		if c.signal(id, syscall.SIGKILL) {
			c.WaitExit(id, 10*time.Second)
		}
	}
	for _, id := range c.IDs {
		ours, err := c.ReadLog(id)
		if err != nil {
			c.t.Fatalf("node %d (%s): metadatalog: %v", id, c.kind(id), err)
		}
		theirs, err := dumpLog(env, c.partitionDir(id))
		if err != nil {
			c.t.Fatalf("node %d (%s): kafka-dump-log: %v", id, c.kind(id), err)
		}
		if err := sameBatches(ours.Batches, theirs); err != nil {
			c.t.Errorf("node %d (%s): metadatalog and kafka-dump-log disagree: %v", id, c.kind(id), err)
		}
		c.t.Logf("node %d (%s): kafka-dump-log reads %d valid batches, as metadatalog does", id, c.kind(id), len(theirs))
	}
}

// dumpLog reads the segments of the partition in dir with kafka-dump-log;
// an invalid batch is an error.
func dumpLog(env *kafkatest.Env, dir string) ([]Batch, error) {
	segs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(segs) == 0 {
		return nil, nil
	}
	sort.Strings(segs) // names are zero-padded base offsets
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := env.DumpLog(ctx, kafkatest.DumpOptions{}, segs...)
	if err != nil {
		return nil, err
	}
	files, err := kafkatest.ParseDumpLog(out)
	if err != nil {
		return nil, err
	}
	var bs []Batch
	for _, f := range files {
		for _, b := range f.Batches {
			if b.Fields["isvalid"] != "true" {
				return nil, fmt.Errorf("%s: invalid batch %v", f.Path, b.Fields)
			}
			base, err1 := b.Int("baseOffset")
			last, err2 := b.Int("lastOffset")
			epoch, err3 := b.Int("partitionLeaderEpoch")
			crc, err4 := strconv.ParseUint(b.Fields["crc"], 10, 32)
			for _, err := range []error{err1, err2, err3, err4} {
				if err != nil {
					return nil, fmt.Errorf("%s: %v", f.Path, err)
				}
			}
			bs = append(bs, Batch{Base: base, Last: last, Epoch: int32(epoch), Control: b.Fields["isControl"] == "true", BatchCRC: uint32(crc)})
		}
	}
	return bs, nil
}

// sameBatches compares two readings of one log, ignoring the CRC of record
// values, which only metadatalog's reading computes.
func sameBatches(ours, theirs []Batch) error {
	if len(ours) != len(theirs) {
		return fmt.Errorf("%d batches against %d", len(ours), len(theirs))
	}
	for i := range ours {
		a, b := ours[i], theirs[i]
		a.CRC = 0
		if a != b {
			return fmt.Errorf("batch %d: %+v against %+v", i, a, b)
		}
	}
	return nil
}
