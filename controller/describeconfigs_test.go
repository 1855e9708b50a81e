package controller_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeConfigs is answered by every controller, active or standby, from
// its committed image: a cluster config the active controller committed is
// listed by all, and each describes its own BROKER resource only.
func TestDescribeConfigsOnEveryNode(t *testing.T) {
	c, lead := activeCluster(t)
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeBroker
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "log.retention.ms", kmsg.StringPtr("5000")
	res.Configs = append(res.Configs, cfg)
	alter.Resources = append(alter.Resources, res)
	if r := serveCommitted(t, c, lead, alter).(*kmsg.IncrementalAlterConfigsResponse); r.Resources[0].ErrorCode != 0 {
		t.Fatalf("alter: %+v", r)
	}
	for id := int32(1); id <= 3; id++ {
		req := kmsg.NewPtrDescribeConfigsRequest()
		for _, name := range []string{"", strconv.Itoa(int(id)), strconv.Itoa(int(id%3 + 1))} {
			r := kmsg.NewDescribeConfigsRequestResource()
			r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBroker, name
			r.ConfigNames = []string{"log.retention.ms"}
			req.Resources = append(req.Resources, r)
		}
		resp, code, _ := c.App(id).DescribeConfigs(req)
		if code != 0 || len(resp.Resources) != 3 {
			t.Fatalf("node %d: %d %+v", id, code, resp)
		}
		for i, r := range resp.Resources[:2] {
			if r.ErrorCode != 0 || len(r.Configs) != 1 || r.Configs[0].Value == nil || *r.Configs[0].Value != "5000" {
				t.Errorf("node %d (leader %d), resource %d: %+v", id, lead, i, r)
			}
		}
		other := resp.Resources[2]
		want := fmt.Sprintf("Unexpected broker id, expected %d or empty string, but received %d", id, id%3+1)
		if other.ErrorCode != kerr.InvalidRequest.Code || other.ErrorMessage == nil || *other.ErrorMessage != want {
			t.Errorf("node %d, another broker: %+v", id, other)
		}
	}
}
