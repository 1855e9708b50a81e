package replication

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// ProducerIDBlockSize is the number of producer ids a broker gets at a time
// (ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE).
const ProducerIDBlockSize = 1000

// AllocateProducerIDs hands a broker the next block of producer ids (api 67)
// as ProducerIdControlManager.generateNextProducerId does: the broker's
// epoch must be current, the block starts at the image's next producer id,
// and a ProducerIdsRecord moves that on by a block. Refusals are the
// response's error code (STALE_BROKER_EPOCH, or UNKNOWN_SERVER_ERROR once
// the ids run out); Kafka's message does not travel.
func AllocateProducerIDs(op Op, req *kmsg.AllocateProducerIDsRequest) Result[*kmsg.AllocateProducerIDsResponse] {
	resp := kmsg.NewPtrAllocateProducerIDsResponse()
	resp.Version = req.Version
	if err := CheckBrokerEpoch(op.Image, req.BrokerID, req.BrokerEpoch); err != nil {
		resp.ErrorCode = err.Code
		return Result[*kmsg.AllocateProducerIDsResponse]{Response: resp}
	}
	// Before any block the image says -1; Kafka's empty block starts at 0.
	first := max(op.Image.NextProducerID(), 0)
	if first > math.MaxInt64-ProducerIDBlockSize {
		resp.ErrorCode = kerr.UnknownServerError.Code
		return Result[*kmsg.AllocateProducerIDsResponse]{Response: resp}
	}
	resp.ProducerIDStart = first
	resp.ProducerIDLen = ProducerIDBlockSize
	rec := &metadata.ProducerIdsRecord{BrokerId: req.BrokerID, BrokerEpoch: req.BrokerEpoch, NextProducerId: first + ProducerIDBlockSize}
	return Result[*kmsg.AllocateProducerIDsResponse]{Records: []Record{{rec, 0}}, Response: resp}
}
