package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Bootstrap names where an admin request starts, as kafka-metadata-quorum's
// connection flags do.
type Bootstrap struct {
	Addrs []string // HOST:PORT, asked in turn
	// Brokers is --bootstrap-server: a broker takes the request and forwards
	// it to the active controller. Otherwise (--bootstrap-controller) the
	// request goes to the active controller, found with DescribeCluster.
	Brokers bool
}

// ResponseError is a Kafka error code in an answer with the message the
// server sent along (nil when none: Kafka's tools then print the code's
// default message).
type ResponseError struct {
	Code    int16
	Message *string
}

func (e *ResponseError) Error() string {
	return kerr.ErrorForCode(e.Code).Error() + errMsg(e.Message)
}

// Unwrap lets errors.Is match the kerr error of the code.
func (e *ResponseError) Unwrap() error { return kerr.ErrorForCode(e.Code) }

// maxRequestTimeout is the TimeoutMs an AddRaftVoter carries at most: Kafka's
// admin client caps it at request.timeout.ms, 30 s by default.
const maxRequestTimeout = 30 * time.Second

// AddRaftVoter asks the active controller to add voter id with directory dir
// and the given endpoints, as Kafka's Admin.addRaftVoter does: no cluster id,
// AckWhenCommitted (the version's default) so the answer waits for the new
// voter set to commit.
func AddRaftVoter(ctx context.Context, b Bootstrap, id int32, dir [16]byte, listeners []kmsg.AddRaftVoterRequestListener) error {
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID, req.Listeners = id, dir, listeners
	req.TimeoutMillis = int32(maxRequestTimeout / time.Millisecond)
	if d, ok := ctx.Deadline(); ok {
		req.TimeoutMillis = int32(max(0, min(time.Until(d), maxRequestTimeout)) / time.Millisecond)
	}
	return callController(ctx, b, req, func(r kmsg.Response) (int16, *string) {
		resp := r.(*kmsg.AddRaftVoterResponse)
		return resp.ErrorCode, resp.ErrorMessage
	})
}

// RemoveRaftVoter asks the active controller to remove voter id with
// directory dir (Admin.removeRaftVoter).
func RemoveRaftVoter(ctx context.Context, b Bootstrap, id int32, dir [16]byte) error {
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.VoterID, req.VoterDirectoryID = id, dir
	return callController(ctx, b, req, func(r kmsg.Response) (int16, *string) {
		resp := r.(*kmsg.RemoveRaftVoterResponse)
		return resp.ErrorCode, resp.ErrorMessage
	})
}

// UnregisterController asks the active controller to drop controller id's
// registration from the cluster metadata (Admin.unregisterController).
func UnregisterController(ctx context.Context, b Bootstrap, id int32) error {
	req := kmsg.NewPtrUnregisterControllerRequest()
	req.ControllerID = id
	return callController(ctx, b, req, func(r kmsg.Response) (int16, *string) {
		resp := r.(*kmsg.UnregisterControllerResponse)
		return resp.ErrorCode, resp.ErrorMessage
	})
}

// callController sends req to the active controller (or a bootstrap
// broker) and returns the answer's error as a *ResponseError. Like Kafka's
// admin client it retries, with backoff until ctx ends, only what finding
// the controller again can fix: no connection, no leader known yet, and
// NOT_CONTROLLER. Every other error code is final.
func callController(ctx context.Context, b Bootstrap, req kmsg.Request, errOf func(kmsg.Response) (int16, *string)) error {
	if len(b.Addrs) == 0 {
		return errors.New("admin: no bootstrap address")
	}
	return withRetries(ctx, "", func(n int) (retry bool, err error) {
		target, retry, err := controllerTarget(ctx, b, n)
		if err != nil {
			return retry, err
		}
		resp, err := Request(ctx, target, req)
		if err != nil {
			if unsupported := notAdvertised(ctx, target, req.Key()); unsupported != nil {
				return false, unsupported
			}
			return true, fmt.Errorf("%s to %s: %w", kmsg.NameForKey(req.Key()), target, err)
		}
		code, msg := errOf(resp)
		if code == 0 {
			return false, nil
		}
		return code == kerr.NotController.Code, &ResponseError{Code: code, Message: msg}
	})
}

// controllerTarget picks the address of one attempt: the attempt's
// bootstrap broker, or the active controller as a bootstrap controller
// names it.
func controllerTarget(ctx context.Context, b Bootstrap, attempt int) (addr string, retry bool, err error) {
	addr = b.Addrs[attempt%len(b.Addrs)]
	if b.Brokers {
		return addr, false, nil
	}
	_, leader, retry, err := findLeader(ctx, addr)
	return leader, retry, err
}

// notAdvertised tells, after a failed request, whether addr's ApiVersions
// lacks the request's key, as an UNSUPPORTED_VERSION error with the message
// of Kafka's client ("The node does not support ADD_RAFT_VOTER"); nil when
// the key is advertised or ApiVersions fails too. A node closes the
// connection on a key it does not serve, which would otherwise be retried
// until ctx ends.
func notAdvertised(ctx context.Context, addr string, key int16) error {
	resp, err := Request(ctx, addr, kmsg.NewPtrApiVersionsRequest())
	if err != nil {
		return nil
	}
	for _, k := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		if k.ApiKey == key {
			return nil
		}
	}
	msg := "The node does not support " + upperSnake(kmsg.NameForKey(key))
	return &ResponseError{Code: kerr.UnsupportedVersion.Code, Message: &msg}
}

// upperSnake turns kmsg's request name (AddRaftVoter) into Kafka's ApiKeys
// name (ADD_RAFT_VOTER).
func upperSnake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}
