package controller

import (
	"slices"
	"testing"

	"github.com/kraftd/kraftd/controller/cluster"
	"github.com/kraftd/kraftd/protocol/metadata"
)

// An operation's records replay at once, except that each broker registration change
// ends a run: the lifecycle manager reads that broker from the image right after it.
func TestReplayRuns(t *testing.T) {
	topic := cluster.Record{Record: &metadata.TopicRecord{}}
	part := cluster.Record{Record: metadata.NewPartitionRecord()}
	change := cluster.Record{Record: metadata.NewBrokerRegistrationChangeRecord()}
	partChange := cluster.Record{Record: metadata.NewPartitionChangeRecord()}
	reg := cluster.Record{Record: metadata.NewRegisterBrokerRecord()}
	for _, c := range []struct {
		name string
		recs []cluster.Record
		want [][2]int
	}{
		{"none", nil, nil},
		{"a topic of three partitions", []cluster.Record{topic, part, part, part}, [][2]int{{0, 4}}},
		{"a registration", []cluster.Record{reg}, [][2]int{{0, 1}}},
		{"an unfencing electing leaders", []cluster.Record{change, partChange, partChange}, [][2]int{{0, 1}, {1, 3}}},
		{"leaving ISRs, then fenced", []cluster.Record{partChange, partChange, change}, [][2]int{{0, 3}}},
		{"two changes", []cluster.Record{reg, change, partChange, change}, [][2]int{{0, 2}, {2, 4}}},
	} {
		if got := replayRuns(c.recs); !slices.Equal(got, c.want) {
			t.Errorf("%s: runs %v, want %v", c.name, got, c.want)
		}
	}
}
