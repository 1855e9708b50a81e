package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/metadatalog"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/test/interop/kafkatest"
	"github.com/kraftd/kraftd/topics"
	"github.com/kraftd/kraftd/workload"
)

var (
	buildOnce sync.Once
	buildDir  string
	binPath   string
	buildErr  error
)

// Binary builds cmd/controller with -tags faultfs once per test binary;
// RemoveBinary (from TestMain) deletes it.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "kraftd-faults-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "controller")
		root, err := kafkatest.KraftdRoot()
		if err != nil {
			buildErr = err
			return
		}
		cmd := exec.Command(goTool(), "build", "-tags", "faultfs", "-o", binPath, "./cmd/controller")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build -tags faultfs: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// goTool is the go command that runs the tests.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// RemoveBinary deletes the binary Binary built.
func RemoveBinary() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

const perfTopic = "__raft_performance_test"

// describe asks node id, directly (not through the mesh), for the quorum;
// only a leader answers.
func (c *Cluster) describe(id int32, timeout time.Duration) (Sample, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dq, err := admin.DescribeQuorumAt(ctx, fmt.Sprintf("127.0.0.1:%d", c.nodes[id].Port), topics.ClusterMetadata)
	if err != nil {
		return Sample{}, false
	}
	p := dq.Topics[0].Partitions[0]
	return Sample{At: time.Now(), Node: id, Epoch: p.LeaderEpoch, HW: p.HighWatermark, Leader: p.LeaderID}, true
}

func (c *Cluster) paused(id int32) bool {
	nd := c.nodes[id]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	return nd.paused
}

// sample records node id's leader answers every 100 ms until shutdown;
// each node has its own sampler so a dead or stopped one (whose requests
// wait for their timeout) does not thin out the others' samples.
func (c *Cluster) sample(id int32) {
	defer c.sampled.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
		if !c.Running(id) || c.paused(id) {
			continue
		}
		describe := c.describe
		if c.nodes[id].kafka && !c.opts.Controllers {
			describe = func(id int32, _ time.Duration) (Sample, bool) { return c.derivedSample(id) }
		}
		if s, ok := describe(id, 500*time.Millisecond); ok {
			c.mu.Lock()
			s.Round = c.round
			c.samples = append(c.samples, s)
			c.mu.Unlock()
		}
	}
}

// latest returns the most recent sample (ok false: none yet).
func (c *Cluster) latest() (Sample, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.samples) == 0 {
		return Sample{}, false
	}
	return c.samples[len(c.samples)-1], true
}

// maxHW is the highest high watermark any leader reported so far.
func (c *Cluster) maxHW() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	hw := int64(-1)
	for _, s := range c.samples {
		hw = max(hw, s.HW)
	}
	return hw
}

// WaitLeader waits up to d for a leader that has committed in its epoch
// and returns its sample.
func (c *Cluster) WaitLeader(d time.Duration) Sample {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if s, ok := c.latest(); ok && s.HW > 0 && time.Since(s.At) < time.Second && c.Running(s.Node) && !c.paused(s.Node) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("no leader committing within %v", d)
	return Sample{}
}

// BeginRound starts a fault round named fault; the sampler tags what it
// sees with it.
func (c *Cluster) BeginRound(fault string) *Round {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round++
	r := &Round{N: c.round, Fault: fault, Start: time.Now(), Bound: LivenessBound}
	c.rounds = append(c.rounds, r)
	return r
}

// Healed marks r's fault healed now and waits (up to twice the bound, so a
// slow recovery is measured rather than cut off) for a leader to report a
// high watermark above every one reported before; it returns the time that
// took, or false. The checker judges it against the bound.
func (c *Cluster) Healed(r *Round) (time.Duration, bool) {
	before := c.maxHW()
	c.mu.Lock()
	r.Healed = time.Now()
	c.mu.Unlock()
	deadline := r.Healed.Add(2 * r.Bound)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, s := range c.samples {
			if s.At.After(r.Healed) && s.HW > before && s.Epoch > r.MinEpoch {
				r.Recovered = s.At
				c.mu.Unlock()
				return r.Recovered.Sub(r.Healed), true
			}
		}
		c.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
	return 0, false
}

// WaitCaughtUp waits until every running node reports (in its stats lines)
// a high watermark at least the leader's current one, so the checker's
// agreement rule covers all of the log.
func (c *Cluster) WaitCaughtUp(d time.Duration) {
	c.t.Helper()
	leader := c.WaitLeader(d)
	target := leader.HW
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c.opts.Controllers {
			// Ask whoever leads now: leadership may have moved since.
			if s, ok := c.latest(); ok && c.caughtUp(s.Node, target) {
				return
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		ok := true
		for _, id := range c.IDs {
			if c.Running(id) && !c.nodes[id].kafka && c.lastStats(id).HighWatermark < target {
				ok = false
			}
		}
		if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("nodes did not reach high watermark %d within %v", target, d)
}

// lastStats is node id's latest periodic stats line.
func (c *Cluster) lastStats(id int32) workload.Stats {
	b, _ := os.ReadFile(c.nodes[id].out)
	last := workload.Stats{HighWatermark: -1}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var s workload.Stats
		if json.Unmarshal(sc.Bytes(), &s) == nil && !s.Final {
			last = s
		}
	}
	return last
}

// History reads every node's journal and reported high watermark first,
// then every log: an ack or a high watermark read earlier was committed
// before the logs were read, and committed data is never truncated, so the
// logs read later must hold it even while the cluster runs on.
func (c *Cluster) History() (History, error) {
	h := History{Voters: len(c.IDs)}
	hw := map[int32]int64{}
	for _, id := range c.IDs {
		hw[id] = -1 // controllers print no stats: their leaders' samples speak
		if !c.opts.Controllers {
			hw[id] = c.lastStats(id).HighWatermark
		}
		acks, err := readJournal(c.nodes[id].journal)
		if err != nil {
			return h, fmt.Errorf("node %d: %w", id, err)
		}
		for _, e := range acks {
			h.Acks = append(h.Acks, Ack{Node: id, JournalEntry: e})
		}
	}
	c.mu.Lock()
	h.Samples = append([]Sample(nil), c.samples...)
	for _, r := range c.rounds {
		h.Rounds = append(h.Rounds, *r)
	}
	c.mu.Unlock()
	for _, id := range c.IDs {
		l, err := c.readLiveLog(id)
		if err != nil {
			return h, fmt.Errorf("node %d: %w", id, err)
		}
		l.Node, l.HW = id, hw[id]
		h.Logs = append(h.Logs, l)
	}
	return h, nil
}

// readLiveLog reads a running node's log. Retention may delete a segment
// while it is read, and a follower may truncate and rewrite its
// uncommitted tail between the open's verification and the read, so a
// failed read is tried again a few times; if it still fails, the batches
// read before the failure are the log. That is sound: a node only ever
// truncates above its high watermark, and were the cut below the one it
// reported, the checker would report the log ending there.
func (c *Cluster) readLiveLog(id int32) (NodeLog, error) {
	var l NodeLog
	var err error
	for i := 0; i < 5; i++ {
		if l, err = c.ReadLog(id); err == nil {
			return l, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(l.Batches) > 0 {
		return l, nil
	}
	return NodeLog{}, err
}

func readJournal(path string) ([]workload.JournalEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return workload.ReadJournal(f)
}

// partitionDir is node id's directory of the replicated partition.
func (c *Cluster) partitionDir(id int32) string {
	return topics.PartitionDir(c.nodes[id].DataDir, c.topic())
}

// ReadLog reads node id's batches and log start with metadatalog
// (read-only: a running node's torn tail is ignored).
func (c *Cluster) ReadLog(id int32) (NodeLog, error) {
	dir := c.partitionDir(id)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return NodeLog{}, nil
	}
	l, err := metadatalog.OpenReadOnly(dir)
	if err != nil {
		return NodeLog{}, err
	}
	defer l.Close()
	var out []Batch
	err = l.Batches(l.StartOffset(), func(b []byte) error {
		h, err := protocol.CheckBatch(b)
		if err != nil {
			return err
		}
		dec, _, err := protocol.DecodeBatch(b[:h.Size()])
		if err != nil {
			return err
		}
		values := make([][]byte, len(dec.Records))
		for i, r := range dec.Records {
			values[i] = r.Value
		}
		out = append(out, Batch{Base: h.BaseOffset, Last: h.LastOffset(), Epoch: h.PartitionLeaderEpoch, Control: h.IsControl(),
			CRC: workload.RecordsCRC(values), BatchCRC: h.CRC})
		return nil
	})
	// On error, what was read before it comes back too (readLiveLog).
	return NodeLog{Batches: out, Start: l.StartOffset()}, err
}

// Check runs the checker over the history so far (after round) and fails
// the test with every violation; it returns the history for summaries.
func (c *Cluster) Check() History {
	c.t.Helper()
	h, err := c.History()
	if err != nil {
		c.t.Fatalf("read history: %v", err)
	}
	c.mu.Lock()
	round := c.round
	c.mu.Unlock()
	for _, v := range Check(h, round) {
		c.t.Errorf("violation: %v", v)
	}
	return h
}

// Summary is one line on a history: acks, samples, rounds by fault kind
// and recovery times.
func Summary(h History) string {
	kinds := map[string]int{}
	var rec []time.Duration
	for _, r := range h.Rounds {
		kinds[strings.Fields(r.Fault)[0]]++
		if !r.Recovered.IsZero() {
			rec = append(rec, r.Recovered.Sub(r.Healed))
		}
	}
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(ks)
	var logs []string
	for _, l := range h.Logs {
		logs = append(logs, fmt.Sprintf("%d:end %d hw %d", l.Node, endOf(l.Batches), l.HW))
	}
	return fmt.Sprintf("acks %d, samples %d, rounds %d (%s), recovery %s, logs [%s]",
		len(h.Acks), len(h.Samples), len(h.Rounds), strings.Join(ks, " "), Percentiles(rec), strings.Join(logs, ", "))
}

// Percentiles formats median, p99 and max of ds.
func Percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n/a"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("median %v p99 %v max %v (n=%d)", r(at(0.5)), r(at(0.99)), r(s[len(s)-1]), len(s))
}
