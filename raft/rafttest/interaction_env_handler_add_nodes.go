package rafttest

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// handleAddNodes creates nodes with the next free ids and starts them.
// By default they are the static voters (controller.quorum.voters) of a
// quorum of every node so far, with pre-vote on. Options:
//
//   - voters=(1,2,3): the voter set, when not every node is a voter;
//   - pre-vote=false: Vote v0-v1 only, as against Kafka 3.x peers;
//   - dirs: static voters with a directory id each, as Kafka's format
//     writes in meta.properties;
//   - dynamic: formatted --initial-controllers (a bootstrap snapshot of
//     the voters, bootstrap servers instead of static voters);
//   - observer: formatted --no-initial-controllers, bootstrap servers only
//     (needs voters=);
//   - defer: Config.DeferLeadership.
//
// Node n listens on 127.0.0.1:9000+n and has directory DirectoryID(n).
// Every node exists before any starts, so first sends find their peers.
//
// Example:
//
//	add-nodes 3
//	----
//	> 1 starts
//	  1 persist epoch=0 leader=none voted=none
//	  1->3 Fetch v18 replica=1 epoch=0 offset=0 last-fetched-epoch=0 hw=-1 max-wait=500ms
//	  1 is Unattached epoch=0 leader=none voted=none
//	  1 log end=0 hw=-1
//	> 2 starts
//	  ...
func (e *InteractionEnv) handleAddNodes(t *testing.T, d *datadriven.TestData) {
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "add-nodes: how many?")
	}
	count := e.parseID(t, d, d.CmdArgs[0].Key)
	first := int32(1)
	if len(e.nodes) > 0 {
		first = e.nodes[len(e.nodes)-1].id + 1
	}
	var voters []int32
	preVote, deferring := true, false
	dyn := static
	for _, a := range d.CmdArgs[1:] {
		switch a.Key {
		case "defer":
			deferring = true
		case "dynamic":
			dyn = dynamicVoter
		case "observer":
			dyn = dynamicObserver
		case "dirs":
			dyn = staticWithDirs
		case "voters":
			for _, v := range a.Vals {
				voters = append(voters, e.parseID(t, d, v))
			}
		case "pre-vote":
			d.ScanArgs(t, "pre-vote", &preVote)
		default:
			d.Fatalf(t, "add-nodes: unknown argument %q", a.Key)
		}
	}
	if voters == nil && dyn == dynamicObserver {
		d.Fatalf(t, "add-nodes observer: name the voters (voters=(...))")
	}
	if voters == nil {
		for id := int32(1); id < first+count; id++ {
			voters = append(voters, id)
		}
	}
	var added []*envNode
	for id := first; id < first+count; id++ {
		added = append(added, e.addNode(id, voters, preVote, deferring, dyn))
	}
	for _, n := range added {
		e.printf("> %d starts", n.id)
		n.startDriver()
	}
}

// dynamicMode is how add-nodes formats and configures a node.
type dynamicMode int

const (
	static          dynamicMode = iota // controller.quorum.voters, kraft.version 0
	staticWithDirs                     // the same, with directory ids
	dynamicVoter                       // bootstrap snapshot with the voters, bootstrap servers
	dynamicObserver                    // no snapshot, bootstrap servers
)
