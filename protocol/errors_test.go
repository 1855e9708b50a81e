package protocol

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestTopLevelErrorCode(t *testing.T) {
	vote := kmsg.NewPtrVoteResponse()
	vote.ErrorCode = 104
	fetch := kmsg.NewPtrFetchResponse()
	fetch.ErrorCode = 42
	update := kmsg.NewPtrUpdateRaftVoterResponse()
	update.ErrorCode = 7
	for _, c := range []struct {
		resp kmsg.Response
		code int16
		ok   bool
	}{
		{vote, 104, true},
		{fetch, 42, true},
		{update, 7, true},
		{kmsg.NewPtrFetchSnapshotResponse(), 0, true},
		{kmsg.NewPtrApiVersionsResponse(), 0, false},
		{nil, 0, false},
	} {
		if code, ok := TopLevelErrorCode(c.resp); code != c.code || ok != c.ok {
			t.Errorf("%T: (%d, %v), want (%d, %v)", c.resp, code, ok, c.code, c.ok)
		}
	}
}
