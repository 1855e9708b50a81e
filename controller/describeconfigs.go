package controller

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/configs"
	"github.com/kraftd/kraftd/image"
)

// DescribeConfigs implements node.ConfigDescriber: Kafka 4.4.0's
// controllers answer DescribeConfigs (api 32) themselves, active or not,
// from their committed metadata and their own configuration
// (controller/configs.Describe). It reads only the published image, so it
// runs on the connection's goroutine.
func (a *App) DescribeConfigs(req *kmsg.DescribeConfigsRequest) (*kmsg.DescribeConfigsResponse, int16, string) {
	im := a.Image()
	if im == nil {
		im = image.Empty()
	}
	resp, err := configs.Describe(configs.DescribeSource{Image: im, NodeID: a.o.NodeID, Static: a.o.StaticProperties}, req)
	if err != nil {
		return nil, err.Err.Code, err.Message
	}
	return resp, 0, ""
}
