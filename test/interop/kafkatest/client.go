package kafkatest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client is a real Kafka client (franz-go) of a test cluster's brokers: topics are created
// through the brokers (which forward CreateTopics to the active controller), records are
// produced with acks=all and consumed back.
type Client struct {
	*kgo.Client
	Admin *kadm.Client
	seeds []string
}

// clientOpts are the options every client of the harness uses. Idempotent produce is off:
// a broker needs a producer id block from the active controller (AllocateProducerIds)
// before its first idempotent write, and tests produce while no controller is active.
// Without idempotence a retried batch may be written twice; checks allow duplicates.
func clientOpts(seeds []string) []kgo.Opt {
	return []kgo.Opt{
		kgo.SeedBrokers(seeds...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(),
		kgo.ProducerLinger(0),
		kgo.RecordDeliveryTimeout(2 * time.Minute),
		kgo.MetadataMinAge(250 * time.Millisecond),
		kgo.MetadataMaxAge(5 * time.Second),
		kgo.RetryBackoffFn(func(int) time.Duration { return 200 * time.Millisecond }),
	}
}

// NewClient connects to the brokers at seeds (host:port); it is closed when the test ends.
func NewClient(t testing.TB, seeds ...string) *Client {
	t.Helper()
	cl, err := kgo.NewClient(clientOpts(seeds)...)
	if err != nil {
		t.Fatalf("kafkatest: client: %v", err)
	}
	t.Cleanup(cl.Close)
	return &Client{Client: cl, Admin: kadm.NewClient(cl), seeds: seeds}
}

// CreateTopic creates a topic, retrying every failure until ctx ends: while the cluster
// has no active controller the brokers cannot forward the request, and just after a new
// controller activates it may count too few unfenced brokers for the replication factor.
// A create that finds the topic already there counts: an earlier attempt may have
// succeeded after its response was lost.
//
// Each attempt uses new connections: a broker advertises a forwarded API such as
// CreateTopics in ApiVersions only if the controller its forwarding channel last reached
// supports it, and a client keeps what a connection's ApiVersions said for the
// connection's life (franz-go then fails the request as "broker is too old").
func (c *Client) CreateTopic(ctx context.Context, name string, partitions int32, replicas int16) error {
	for {
		err := c.createOnce(ctx, name, partitions, replicas)
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafkatest: create topic %s: %w (last error: %v%s)", name, ctx.Err(), err, createHint(err))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// createHint explains franz-go's "broker is too old" (its error value is unexported): no
// broker advertises CreateTopics, because the controller each broker's forwarding channel
// last reached did not advertise it, and a broker forwards nothing that could move its
// channel on to another controller.
func createHint(err error) string {
	if !strings.Contains(err.Error(), "broker is too old") {
		return ""
	}
	return "; the brokers advertise no CreateTopics in ApiVersions: a broker offers a forwarded API only if the controller its forwarding channel last reached advertised it"
}

func (c *Client) createOnce(ctx context.Context, name string, partitions int32, replicas int16) error {
	cl, err := kgo.NewClient(clientOpts(c.seeds)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err = kadm.NewClient(cl).CreateTopic(ctx, partitions, replicas, nil, name)
	return err
}

// Produce writes n records with values "<prefix>-<i>" to topic with acks=all and
// returns the values every in-sync replica acknowledged; err is the first failure.
func (c *Client) Produce(ctx context.Context, topic, prefix string, n int) (acked []string, err error) {
	rs := make([]*kgo.Record, n)
	for i := range rs {
		rs[i] = &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, "%s-%d", prefix, i)}
	}
	for _, r := range c.ProduceSync(ctx, rs...) {
		if r.Err != nil {
			err = cmp.Or(err, fmt.Errorf("kafkatest: produce to %s: %w", topic, r.Err))
			continue
		}
		acked = append(acked, string(r.Record.Value))
	}
	return acked, err
}

// ConsumeAll reads topic from its start with a fresh client (no consumer group: a group
// needs __consumer_offsets and a coordinator, which tests do not judge) until every value
// of want has been read, or ctx ends. Duplicates are allowed (see clientOpts).
func (c *Client) ConsumeAll(ctx context.Context, topic string, want []string) error {
	opts := append(clientOpts(c.seeds), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fmt.Errorf("kafkatest: consumer: %w", err)
	}
	defer cl.Close()
	missing := make(map[string]bool, len(want))
	for _, v := range want {
		missing[v] = true
	}
	for len(missing) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("kafkatest: consume %s: %d of %d acked records never read (e.g. %s): %w", topic, len(missing), len(want), sample(missing), ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { delete(missing, string(r.Value)) })
	}
	return nil
}

func sample(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks[:min(3, len(ks))], ", ")
}

// LackingCreateTopics returns the brokers of addrs whose ApiVersions offer no
// CreateTopics: a broker offers a forwarded API only if the controller its forwarding
// channel last reached advertised it, and then clients cannot create topics through it.
func LackingCreateTopics(ctx context.Context, addrs []string) ([]string, error) {
	var lacking []string
	for _, addr := range addrs {
		resp, err := requestTo(ctx, addr, kmsg.NewPtrApiVersionsRequest())
		if err != nil {
			return nil, err
		}
		keys := resp.(*kmsg.ApiVersionsResponse).ApiKeys
		if !slices.ContainsFunc(keys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.ApiKey == kmsg.CreateTopics.Int16() }) {
			lacking = append(lacking, addr)
		}
	}
	return lacking, nil
}

// requestTo sends one request to the broker at addr and to no other.
func requestTo(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("kafkatest: %s to %s: %w", kmsg.NameForKey(req.Key()), addr, err)
	}
	return resp, nil
}

// TopicsOn returns the topics the broker at addr serves in its own metadata, with how
// many partitions of each have a leader.
func TopicsOn(ctx context.Context, addr string) (map[string]int, error) {
	resp, err := requestTo(ctx, addr, kmsg.NewPtrMetadataRequest()) // no topics: all of them
	if err != nil {
		return nil, err
	}
	topics := map[string]int{}
	for _, t := range resp.(*kmsg.MetadataResponse).Topics {
		if t.ErrorCode != 0 || t.Topic == nil {
			continue
		}
		led := 0
		for _, p := range t.Partitions {
			if p.ErrorCode == 0 && p.Leader >= 0 {
				led++
			}
		}
		topics[*t.Topic] = led
	}
	return topics, nil
}

// WaitTopicsEverywhere waits until every broker of addrs serves every topic of want
// (name -> partitions) with a leader for each partition.
func WaitTopicsEverywhere(ctx context.Context, addrs []string, want map[string]int) error {
	for {
		var lacking []string
		for _, addr := range addrs {
			got, err := TopicsOn(ctx, addr)
			if err != nil {
				lacking = append(lacking, err.Error())
				continue
			}
			for topic, n := range want {
				if got[topic] != n {
					lacking = append(lacking, fmt.Sprintf("broker %s: %s has %d of %d partitions led", addr, topic, got[topic], n))
				}
			}
		}
		if len(lacking) == 0 {
			return nil
		}
		slices.Sort(lacking)
		select {
		case <-ctx.Done():
			return fmt.Errorf("kafkatest: topics missing on brokers: %s", strings.Join(lacking[:min(5, len(lacking))], "; "))
		case <-time.After(250 * time.Millisecond):
		}
	}
}
