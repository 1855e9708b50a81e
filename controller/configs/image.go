package configs

import (
	"maps"
	"strconv"

	"github.com/kraftd/kraftd/image"
)

// Current is a resource's configuration in the image, for Context.Current.
func Current(im *image.Image, resType int8, name string) map[string]string {
	return maps.Collect(im.Configs(resType, name))
}

// TopicLayers are the layers of a topic's effective configuration as the
// controller with id nodeID resolves it: its static properties, the
// cluster BROKER "" record, its own BROKER "<nodeID>" record and the
// topic's record.
func TopicLayers(im *image.Image, static map[string]string, nodeID int32, topic string) Layers {
	return Layers{
		Static:  static,
		Cluster: Current(im, BrokerResource, ""),
		Node:    Current(im, BrokerResource, strconv.Itoa(int(nodeID))),
		Topic:   Current(im, TopicResource, topic),
	}
}
