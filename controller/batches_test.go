package controller_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/controllertest"
)

// Fencing a broker that is in more than 10,000 partitions writes its
// records in several batches of at most 10,000 (Kafka's
// MAX_RECORDS_PER_BATCH for a non-atomic result), and all of them: every
// partition leaves the broker behind.
func TestFencingSpansBatchesOfAtMost10000(t *testing.T) {
	c, lead := activeCluster(t)
	epochs := threeBrokers(t, c, lead)
	const topics, partitions = 3, 4000
	id := controllertest.Ids(lead)[0]
	all := append(controllertest.Ids(1, 2, 3), "100ms")
	for i := range topics {
		var a answer
		c.Serve(lead, request(createTopic("t"+strconv.Itoa(i), partitions, 3), &a))
		for range 300 {
			if a.n > 0 {
				break
			}
			c.Do("tick", all...)
			c.Do("stabilize")
		}
		if resp, ok := a.resp.(*kmsg.CreateTopicsResponse); !ok || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("creating t%d: %+v", i, a)
		}
	}
	created := c.App(lead).Image().Provenance().Offset
	// Brokers 2 and 3 heartbeat; broker 1's session runs out.
	for range 12 {
		for b := int32(2); b <= 3; b++ {
			hb := kmsg.NewPtrBrokerHeartbeatRequest()
			hb.Version = 1
			hb.BrokerID, hb.BrokerEpoch = b, epochs[b]
			hb.CurrentMetadataOffset = c.App(lead).Image().Provenance().Offset
			a := &answer{}
			r := request(hb, a)
			r.Arrived = c.Env.Now(lead)
			c.Serve(lead, r)
		}
		for range 10 {
			c.Do("tick", all...)
			c.Do("stabilize")
		}
	}
	c.Do("stabilize")
	im := c.App(lead).Image()
	if b, _ := im.Broker(1); b == nil || !b.Fenced {
		t.Fatalf("broker 1 after its session: %+v", b)
	}
	got := 0
	for range im.PartitionsInISR(1) {
		got++
	}
	if got != 0 {
		t.Fatalf("broker 1 still in %d ISRs after it was fenced", got)
	}
	// The fencing's batches follow the topics' creation.
	largest, after := 0, 0
	for _, m := range regexp.MustCompile(`(\d+)\.\.(\d+)@`).FindAllStringSubmatch(c.Do("log", id), -1) {
		base, _ := strconv.ParseInt(m[1], 10, 64)
		last, _ := strconv.ParseInt(m[2], 10, 64)
		n := int(last - base + 1)
		largest = max(largest, n)
		if base > created {
			after += n
		}
	}
	if largest > 10000 {
		t.Fatalf("a batch of %d records: more than Kafka's 10,000", largest)
	}
	if after < topics*partitions {
		t.Fatalf("%d records after the topics were created, want at least one per partition (%d)", after, topics*partitions)
	}
}
