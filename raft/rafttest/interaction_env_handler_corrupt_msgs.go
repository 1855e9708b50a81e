package rafttest

import (
	"bytes"
	"slices"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol"
)

// handleCorrupt forges the last batch of every queued FetchResponse to the
// given nodes, as a broken or hostile leader would: last offset delta -5
// under a valid CRC. The follower must refuse it and append nothing.
//
// Example:
//
//	corrupt-msgs 2
//	----
//	> corrupted 1->2 FetchResponse v18 leader=1 epoch=1 hw=1 batches=[undecodable: ...]
func (e *InteractionEnv) handleCorrupt(t *testing.T, d *datadriven.TestData) {
	to := e.ids(t, d)
	for _, m := range e.queue {
		r, ok := m.resp.(*kmsg.FetchResponse)
		if !ok || !slices.Contains(to, m.to) || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
			continue
		}
		p := &r.Topics[0].Partitions[0]
		data := bytes.Clone(p.RecordBatches)
		last := -1
		for pos := 0; pos < len(data); {
			h, err := protocol.ParseBatchHeader(data[pos:])
			if err != nil {
				break
			}
			last, pos = pos, pos+h.Size()
		}
		if last < 0 {
			continue
		}
		p.RecordBatches = append(data[:last], Reseal(data[last:], BatchLastOffsetDeltaAt, uint32(0xfffffffb))...)
		e.printf("> corrupted %s", describeEnvelope(m))
	}
}
