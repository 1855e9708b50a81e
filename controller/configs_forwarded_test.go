package controller_test

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// cordoned.log.dirs may only shrink when an admin client sets it on the
// controller directly; a broker's forwarded request (in an Envelope) may
// set any value, as Kafka's ConfigurationControlManager decides with its
// forwarded flag.
func TestCordonedLogDirsGrowOnlyWhenForwarded(t *testing.T) {
	c, lead := activeCluster(t)
	threeBrokers(t, c, lead)
	alter := func(forwarded bool, value string) *kmsg.IncrementalAlterConfigsResponseResource {
		t.Helper()
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.Version = 1
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Op, cfg.Value = "cordoned.log.dirs", kmsg.IncrementalAlterConfigOpSet, &value
		res.Configs = append(res.Configs, cfg)
		req.Resources = append(req.Resources, res)
		var a answer
		r := request(req, &a)
		r.Forwarded = forwarded
		c.Serve(lead, r)
		c.Do("stabilize")
		c.Do("stabilize")
		resp, ok := a.resp.(*kmsg.IncrementalAlterConfigsResponse)
		if !ok || len(resp.Resources) != 1 {
			t.Fatalf("IncrementalAlterConfigs answered %+v", a)
		}
		return &resp.Resources[0]
	}
	if r := alter(false, "/data/a"); r.ErrorCode != kerr.InvalidConfig.Code || r.ErrorMessage == nil ||
		*r.ErrorMessage != "When updating cordoned.log.dirs via controllers,  the new value must be a subset of the current configuration value." {
		t.Fatalf("direct, growing: %+v", r)
	}
	if r := alter(true, "/data/a,/data/b"); r.ErrorCode != 0 {
		t.Fatalf("forwarded: %+v", r)
	}
	if v, ok := c.App(lead).Image().Config(4, "1", "cordoned.log.dirs"); !ok || v != "/data/a,/data/b" {
		t.Fatalf("cordoned.log.dirs after the forwarded change: %q %v", v, ok)
	}
	if r := alter(false, "/data/b"); r.ErrorCode != 0 {
		t.Fatalf("direct, shrinking: %+v", r)
	}
}
