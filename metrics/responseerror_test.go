package metrics

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestResponseError(t *testing.T) {
	fetch := kmsg.NewPtrFetchResponse()
	for _, code := range []int16{0, kerr.FencedLeaderEpoch.Code} {
		tp := kmsg.NewFetchResponseTopic()
		p := kmsg.NewFetchResponseTopicPartition()
		p.ErrorCode = code
		tp.Partitions = append(tp.Partitions, p)
		fetch.Topics = append(fetch.Topics, tp)
	}
	if got := ResponseError(fetch); got != kerr.FencedLeaderEpoch.Code {
		t.Errorf("partition error: got %d, want %d", got, kerr.FencedLeaderEpoch.Code)
	}
	fetch.ErrorCode = kerr.InconsistentClusterID.Code
	if got := ResponseError(fetch); got != kerr.InconsistentClusterID.Code {
		t.Errorf("top-level error: got %d, want it to win", got)
	}
	if got := ResponseError(kmsg.NewPtrVoteResponse()); got != 0 {
		t.Errorf("no error: got %d", got)
	}
}
