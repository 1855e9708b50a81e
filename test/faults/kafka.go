package faults

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Mixed quorums: a node named in Options.Kafka runs Apache Kafka's
// kafka.tools.TestRaftServer (the jars of interop/lib, or
// KRAFTD_INTEROP_LIB) on the same partition, cluster id and topic id as
// test-kraft-server-start, behind the same mesh. It has no commit journal
// and answers no DescribeQuorum, so its leadership is derived from what
// the kraftd nodes report (derivedSample), and its log counts toward the
// majorities the checker asks for.

// kafkaJVMFlags keep a TestRaftServer small and quick to start on a
// loaded 2-core machine.
var kafkaJVMFlags = []string{"-Xmx256m", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"}

// kafkaCommand is node nd's TestRaftServer command line.
func (c *Cluster) kafkaCommand(nd *Node) *exec.Cmd {
	args := append(append([]string(nil), kafkaJVMFlags...), "-Djdk.net.hosts.file="+nd.hosts, "-cp", c.classpath, "kafka.tools.TestRaftServer",
		"--config", nd.cfg, "--replica-directory-id", dirIDs[nd.ID-1],
		"--throughput", fmt.Sprint(c.opts.Throughput), "--record-size", "64")
	return exec.Command(c.java, args...)
}

// derivedSample is Kafka node id's leadership as the kraftd nodes see it:
// when one of them names id the leader in its latest stats line, the
// sample has that epoch and the highest high watermark a kraftd follower
// reported for it (a lower bound of the leader's own).
func (c *Cluster) derivedSample(id int32) (Sample, bool) {
	s := Sample{At: time.Now(), Node: id, Leader: id, HW: -1, Derived: true}
	found := false
	for _, other := range c.IDs {
		if c.nodes[other].kafka || !c.Running(other) {
			continue
		}
		st := c.lastStats(other)
		if st.LeaderID != id || st.Role == "" || !fresh(c.nodes[other].out) {
			continue
		}
		if !found || st.Epoch > s.Epoch {
			s.Epoch, s.HW = st.Epoch, -1
		}
		if st.Epoch == s.Epoch {
			s.HW = max(s.HW, st.HighWatermark)
		}
		found = true
	}
	return s, found
}

// fresh reports whether a stats file was written within a second (stats
// lines come every 200 ms from a live node).
func fresh(path string) bool {
	st, err := os.Stat(path)
	return err == nil && time.Since(st.ModTime()) < time.Second
}

// kind names the implementation node id runs.
func (c *Cluster) kind(id int32) string {
	if c.nodes[id].kafka {
		return "Kafka"
	}
	return "kraftd"
}

// kraftdIDs are the nodes that run kraftd: only their file layer takes
// disk faults.
func (c *Cluster) kraftdIDs() []int32 {
	var ids []int32
	for _, id := range c.IDs {
		if !c.nodes[id].kafka {
			ids = append(ids, id)
		}
	}
	return ids
}

// observable reports whether a node that tells the sampler who leads runs
// besides victim: a kraftd node, or in controller runs any node.
func (c *Cluster) observable(victim int32) bool {
	ids := c.kraftdIDs()
	if c.opts.Controllers {
		ids = c.IDs // Kafka controllers answer DescribeQuorum too
	}
	for _, id := range ids {
		if id != victim && c.Running(id) {
			return true
		}
	}
	return false
}
