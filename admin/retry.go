package admin

import (
	"context"
	"fmt"
	"time"
)

// withRetries runs attempt 0, 1, ... until one succeeds or fails for good
// (retry false), waiting between attempts as Kafka's admin client backs off
// (100 ms, doubling to 1 s) until ctx ends; the error then names ctx's and
// the last attempt's. what prefixes that error ("describe quorum: ").
func withRetries(ctx context.Context, what string, attempt func(n int) (retry bool, err error)) error {
	var lastErr error
	backoff := 100 * time.Millisecond
	for n := 0; ; n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s%w (last error: %v)", what, ctx.Err(), lastErr)
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
		}
		retry, err := attempt(n)
		if err == nil || !retry {
			return err
		}
		lastErr = err
	}
}
