package admin

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clientID names kraftd's admin requests in the controllers' logs.
const clientID = "kraftd-admin"

// Request sends one request to addr with a short-lived franz-go client,
// which negotiates versions with ApiVersions first, as Kafka's admin client
// does. ctx bounds the whole exchange.
func Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(clientID),
		kgo.DialTimeout(5*time.Second), kgo.RetryTimeout(0))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	seeds := cl.SeedBrokers()
	if len(seeds) == 0 {
		return nil, fmt.Errorf("admin: no seed broker for %s", addr)
	}
	return seeds[0].Request(ctx, req)
}
