package main

// The hostile-client suite: each attack of package hostile against one node
// of a running quorum of real processes. Every case asserts that the quorum
// keeps one leader and keeps committing the workload (commits during the
// attack), that the attacked node's peak RSS stays under hostileRSSBound,
// that nothing reached disk that the quorum did not commit (logs
// byte-identical below the high watermark, no batch from an epoch no leader
// was elected in) and that nothing panicked (every node still running, no
// panic in any node's stderr).
//
// KRAFTD_HOSTILE_DURATION sets each attack's duration (default 2s); the
// suite ends with a table of each attack's peak RSS and commit rate next to
// the rate without it (go test -v). The rate is a figure, judged only by
// make soak-hostile (which sets the duration): there a commit rate under
// hostileMinRate of the rate before the attack fails; in make test, on a
// machine shared with other tests, it is only reported.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/internal/hostile"
	"github.com/kraftd/kraftd/topics"
)

const (
	// hostileRSSBound is the attacked node's peak RSS allowed during an
	// attack: an idle test node uses about 30 MiB, its workload's log is a
	// few MiB, so 128 MiB leaves room for the Go heap's growth but not for
	// memory that scales with what a client sends or asks for.
	hostileRSSBound = 128 << 20
	// hostileMinRate is make soak-hostile's goal: the commit rate during an
	// attack, at least, as a fraction of the rate just before it (the
	// workload offers 2000 records/s; the attack client shares the machine's
	// two cores).
	hostileMinRate = 0.5
	// hostileSettle is added to an attack's window before the rate is
	// measured, so a forced election (forged leaders) may recover in it.
	hostileSettle = time.Second
	// hostileBaseline is the window the rate without attack is measured in.
	hostileBaseline = 1500 * time.Millisecond
)

// hostileSoak: make soak-hostile's run (KRAFTD_HOSTILE_DURATION set), which
// judges the commit rates against hostileMinRate.
func hostileSoak() bool { return os.Getenv("KRAFTD_HOSTILE_DURATION") != "" }

func hostileDuration(t *testing.T) time.Duration {
	s := os.Getenv("KRAFTD_HOSTILE_DURATION")
	if s == "" {
		return 2 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		t.Fatalf("KRAFTD_HOSTILE_DURATION=%q: want a positive duration", s)
	}
	return d
}

// perfPartition is the workload's partition; the cluster id is null.
var perfPartition = hostile.Partition{Topic: topics.RaftPerformanceTest, TopicID: topics.RaftPerformanceTestID}

// attackCase is one attack: at the leader or at a follower.
type attackCase struct {
	name       string
	atFollower bool
	run        func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error)
}

// quorumView is what an attack may know of the quorum it attacks.
type quorumView struct {
	addr     string // the target's listener
	target   int32
	leader   int32
	other    int32 // a voter that is neither the target nor the leader (or the leader)
	epoch    int32
	attacker int32 // an id outside the voter set
}

var hostileAttacks = []attackCase{
	{name: "FetchFlood", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.FetchFlood(ctx, q.addr, hostile.FetchFloodParams{Partition: perfPartition, Conns: 32, PerConn: 200, ReplicaID: q.attacker})
	}},
	{name: "FetchSnapshotFlood", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.FetchFlood(ctx, q.addr, hostile.FetchFloodParams{Partition: perfPartition, Conns: 32, PerConn: 200, ReplicaID: q.attacker,
			Snapshot: true, SnapshotID: kmsg.FetchSnapshotRequestTopicPartitionSnapshotID{EndOffset: 0, Epoch: 0}})
	}},
	{name: "SlowFrame100MB", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.SlowFrame(ctx, q.addr, hostile.SlowFrameParams{Conns: 16, Announce: 100 << 20, Rate: 256 << 10})
	}},
	{name: "SlowFrameOverBodyLimit", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.SlowFrame(ctx, q.addr, hostile.SlowFrameParams{Conns: 16, Announce: 1<<20 + 64, Rate: 256 << 10})
	}},
	{name: "Slowloris", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.Slowloris(ctx, q.addr, hostile.SlowlorisParams{Conns: 1000, Interval: 500 * time.Millisecond})
	}},
	{name: "ConnectStorm", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.ConnectStorm(ctx, q.addr, hostile.ConnectStormParams{Total: 20000, Rate: 2000, Open: 100})
	}},
	{name: "GarbageBody", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.Garbage(ctx, q.addr, hostile.GarbageParams{Frames: 1 << 20, MaxBody: 4096, Seed: 1})
	}},
	{name: "MaxValues", run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		r, err := hostile.MaxValues(ctx, q.addr, perfPartition)
		<-ctx.Done() // the quorum is judged over the whole window
		return r, err
	}},
	{name: "ForgedLeaders", atFollower: true, run: func(ctx context.Context, q quorumView, d time.Duration) (hostile.Result, error) {
		return hostile.ForgedLeaders(ctx, q.addr, hostile.ForgedLeadersParams{Partition: perfPartition, Target: q.target,
			Epoch: q.epoch, Voter: q.other, Attacker: q.attacker, Rounds: max(1, int(d/(5*time.Second))), Interval: 5 * time.Second})
	}},
}

// hostileRow is one line of the measurement table.
type hostileRow struct {
	attack         string
	target         string
	peakRSS        int64
	before, during float64
	result         hostile.Result
}

// TestHostile runs every attack against one node of a 3-node quorum. The
// quorum is shared between cases; a case that leaves it broken (a node
// exited, no leader) gets the next case a fresh one.
func TestHostile(t *testing.T) {
	skipShort(t)
	d := hostileDuration(t)
	var rows []hostileRow
	var c *cluster
	for _, a := range hostileAttacks {
		// The cluster belongs to the parent test, so it outlives each case
		// (a subtest's cleanup would stop it after every attack).
		if c == nil || !c.allRunning() {
			if c != nil {
				c.stopAll()
			}
			c = startHostileCluster(t, 3, nil, nil)
		}
		t.Run(a.name, func(t *testing.T) {
			c.t = t
			if l, _ := c.leader(); l < 0 {
				c.waitLeader(10*time.Second, 0)
			}
			rows = append(rows, c.judgeAttack(a, d))
		})
		c.t = t
	}
	logHostileTable(t, rows)
}

// startHostileCluster starts voters real nodes, with extraVoters (e.g. a
// fake one) in their voter set and props added to their properties, and
// waits for the workload's first commit. Its lifetime is the calling test's.
func startHostileCluster(t *testing.T, voters int, extraVoters, props []string) *cluster {
	c := newCluster(t, voters)
	if extraVoters != nil || props != nil {
		c.voters = strings.Join(append([]string{c.voters}, extraVoters...), ",")
		c.extra = append(append([]string(nil), c.extra...), props...)
		for _, p := range c.nodes {
			c.writeConfig(p, "controller")
		}
	}
	for id := range c.nodes {
		c.start(id)
	}
	c.waitLeader(15*time.Second, 0)
	// A first batch committed: the workload runs.
	c.waitFor(10*time.Second, "first commits", func() bool { return c.committedHW() > 0 })
	return c
}

func (c *cluster) allRunning() bool {
	for _, p := range c.nodes {
		if !p.running() {
			return false
		}
	}
	return true
}

// judgeAttack runs a against the leader (or a follower) and asserts the
// suite's properties.
func (c *cluster) judgeAttack(a attackCase, d time.Duration) hostileRow {
	t := c.t
	t.Helper()
	leader, epoch := c.waitLeader(10*time.Second, 0)
	q := quorumView{target: leader, leader: leader, epoch: epoch, attacker: 1000}
	for id := range c.nodes {
		if id != leader {
			if a.atFollower && q.target == leader {
				q.target = id
			} else {
				q.other = id
			}
		}
	}
	if q.other == 0 {
		q.other = leader
	}
	q.addr = fmt.Sprintf("127.0.0.1:%d", c.nodes[q.target].port)
	ref := q.other // counts commits; never the attacked node
	if ref == q.target {
		ref = leader
	}
	before := c.commitRate(ref, hostileBaseline)
	resetPeakRSS(t, c.nodes[q.target])

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start, committed0 := time.Now(), c.committed(ref)
	res, err := a.run(ctx, q, d)
	if err != nil {
		t.Errorf("attack %s: %v", a.name, err)
	}
	// The scenario: the quorum is judged over the attack's whole window, and a
	// forced election may recover within hostileSettle after it.
	if rest := time.Until(start.Add(d)); rest > 0 {
		time.Sleep(rest)
	}
	time.Sleep(hostileSettle)
	committed1 := c.committed(ref)
	during := float64(committed1-committed0) / time.Since(start).Seconds()
	peak := peakRSS(t, c.nodes[q.target])
	role := "leader"
	if q.target != leader {
		role = "follower"
	}
	row := hostileRow{attack: a.name, target: fmt.Sprintf("%s %d", role, q.target), peakRSS: peak, before: before, during: during, result: res}
	t.Logf("%s at %s: %v; peak RSS %.1f MiB; commits %.0f/s (before %.0f/s)", a.name, row.target, res, float64(peak)/(1<<20), during, before)

	c.checkNoPanic()
	if !c.allRunning() {
		t.FailNow() // the reason is logged; the rest needs every node
	}
	if peak > hostileRSSBound {
		t.Errorf("node %d peak RSS %.1f MiB during %s, above the bound of %d MiB", q.target, float64(peak)/(1<<20), a.name, hostileRSSBound>>20)
	}
	if committed1 <= committed0 {
		t.Errorf("node %d saw nothing committed during %s (%v and the settle after it)", ref, a.name, d)
	}
	if hostileSoak() && during < hostileMinRate*before {
		t.Errorf("commit rate %.0f/s during %s, below %.0f%% of the %.0f/s before it", during, a.name, 100*hostileMinRate, before)
	}
	c.checkCommittedLogs()
	return row
}

// committed is node id's count of committed workload records (its latest stats line).
func (c *cluster) committed(id int32) int64 {
	s, _ := c.lastStats(id)
	return s.CommittedRecords
}

// commitRate is the rate at which node id sees records committed over d.
func (c *cluster) commitRate(id int32, d time.Duration) float64 {
	start, n := time.Now(), c.committed(id)
	time.Sleep(d) // the measurement window
	return float64(c.committed(id)-n) / time.Since(start).Seconds()
}

// checkNoPanic fails when a node exited or wrote a panic (or a Go runtime
// fatal error) to its stderr.
func (c *cluster) checkNoPanic() {
	t := c.t
	t.Helper()
	crash := regexp.MustCompile(`^(panic: |fatal error: |goroutine \d+ \[)`)
	for id, p := range c.nodes {
		if !p.running() {
			t.Errorf("node %d is not running: %v", id, p.exitErr)
		}
		f, err := os.Open(p.errPath)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if crash.Match(sc.Bytes()) {
				t.Errorf("node %d stderr: %s", id, sc.Text())
				break
			}
		}
		f.Close()
	}
}

// checkCommittedLogs waits for one leader and for every node to reach the
// leader's current high watermark, then asserts that all logs are
// byte-identical below it and that every batch on every node (committed or
// not) is from an epoch some leader was elected in: an epoch whose
// LeaderChange control batch some log holds.
func (c *cluster) checkCommittedLogs() {
	t := c.t
	t.Helper()
	leader, _ := c.waitLeader(15*time.Second, 0)
	s, _ := c.lastStats(leader)
	hw := s.HighWatermark
	logs := map[int32][]logBatch{}
	c.waitFor(15*time.Second, fmt.Sprintf("every node's log to reach offset %d", hw), func() bool {
		for id, p := range c.nodes {
			l, ok := readLiveLog(p.dataDir)
			if !ok || endOffset(l) < hw {
				return false
			}
			logs[id] = l
		}
		return true
	})
	checkSamePrefix(t, hw, logs)
	elected := map[int32]bool{}
	for _, l := range logs {
		for _, b := range l {
			if b.control {
				elected[b.epoch] = true
			}
		}
	}
	for id, l := range logs {
		for _, b := range l {
			if !elected[b.epoch] {
				t.Fatalf("node %d holds a batch at offset %d from epoch %d, in which no leader was elected", id, b.base, b.epoch)
			}
		}
	}
}

// resetPeakRSS resets the process's VmHWM to its current RSS (clear_refs 5,
// Linux 4.0+), so peakRSS reports the peak since the attack started.
func resetPeakRSS(t *testing.T, p *proc) {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid)
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		t.Fatalf("reset peak RSS of node %d: %v", p.id, err)
	}
}

// peakRSS is the process's VmHWM in bytes (its VmRSS if higher: a process
// that exited reports neither, and the caller fails on the exit).
func peakRSS(t *testing.T, p *proc) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	var peak int64
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("node %d /proc status %s: %q", p.id, k, v)
		}
		peak = max(peak, kb<<10)
	}
	return peak
}

func logHostileTable(t *testing.T, rows []hostileRow) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-24s %-12s %14s %16s %16s  %s\n", "attack", "target", "peak RSS MiB", "commits/s before", "commits/s during", "attack did")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-24s %-12s %14.1f %16.0f %16.0f  %v\n", r.attack, r.target, float64(r.peakRSS)/(1<<20), r.before, r.during, r.result)
	}
	t.Log(b.String())
}

// TestHostileFakeLeader points a fake leader at a follower, one
// malformation per case: the voter set is the three real nodes and voter 4,
// whose address is the fake's listener. The fake claims an epoch with
// BeginQuorumEpoch and serves the follower a valid batch followed by a
// malformed one, with valid CRCs. While the follower follows the fake, the
// three real nodes are 3 of 4 voters and need it to commit, so the rate is
// judged after the attack: the quorum must recover its rate, the follower
// must not crash or bloat, and no log may keep what the fake served. A node
// that a case left stopped is restarted for the next.
func TestHostileFakeLeader(t *testing.T) {
	skipShort(t)
	d := hostileDuration(t)
	fakeAddr := fmt.Sprintf("127.0.0.1:%d", freePorts(t, 1)[0])
	// Segments of 1 MiB, so the fake's 2 MiB batch is larger than a segment.
	c := startHostileCluster(t, 3, []string{"4@" + fakeAddr},
		[]string{"metadata.log.segment.min.bytes=65536", "metadata.log.segment.bytes=1048576"})
	for _, kind := range []hostile.Malformation{hostile.NegativeDelta, hostile.Oversized, hostile.EmptyWithDelta, hostile.ZipBomb} {
		t.Run(kind.String(), func(t *testing.T) {
			c.t = t
			for id, p := range c.nodes {
				if !p.running() {
					c.start(id)
				}
			}
			c.judgeFakeLeader(fakeAddr, kind, d)
		})
	}
	c.t = t
}

func (c *cluster) judgeFakeLeader(fakeAddr string, kind hostile.Malformation, d time.Duration) {
	t := c.t
	t.Helper()
	leader, epoch := c.waitLeader(15*time.Second, 0)
	victim, ref := int32(-1), leader
	for id := range c.nodes {
		if id != leader {
			victim = id
		}
	}
	before := c.commitRate(ref, hostileBaseline)
	resetPeakRSS(t, c.nodes[victim])

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	res, err := hostile.FakeLeader(ctx, fmt.Sprintf("127.0.0.1:%d", c.nodes[victim].port), hostile.FakeLeaderParams{
		Partition: perfPartition, Listen: fakeAddr, LeaderID: 4, VictimID: victim, Epoch: epoch + 1,
		Kinds: []hostile.Malformation{kind}, OversizeBytes: 2 << 20, Claims: max(1, int(d/time.Second)), ClaimEvery: time.Second,
	})
	if err != nil {
		t.Fatalf("fake leader: %v", err)
	}
	peak := peakRSS(t, c.nodes[victim])
	t.Logf("fake leader (%v) at follower %d: %v; peak RSS %.1f MiB", kind, victim, res, float64(peak)/(1<<20))
	if res.Frames == 0 {
		t.Errorf("the fake leader answered nothing: follower %d never fetched from it", victim)
	}
	c.checkNoPanic()
	if !c.allRunning() {
		t.FailNow() // the reason is logged; the rest needs every node
	}
	if peak > hostileRSSBound {
		t.Errorf("node %d peak RSS %.1f MiB under the fake leader, above the bound of %d MiB", victim, float64(peak)/(1<<20), hostileRSSBound>>20)
	}
	leader, _ = c.waitLeader(15*time.Second, 0)
	if ref == victim || !c.nodes[ref].running() {
		ref = leader
	}
	// The quorum commits again once the fake is gone.
	gone := c.committed(ref)
	c.waitFor(15*time.Second, fmt.Sprintf("node %d to see commits after the fake leader", ref), func() bool { return c.committed(ref) > gone })
	after := c.commitRate(ref, hostileBaseline)
	t.Logf("commits %.0f/s after the fake leader (before %.0f/s)", after, before)
	if hostileSoak() && after < hostileMinRate*before {
		t.Errorf("commit rate %.0f/s after the fake leader, below %.0f%% of the %.0f/s before it", after, 100*hostileMinRate, before)
	}
	c.checkCommittedLogs()
	for id, p := range c.nodes {
		l, _ := readLiveLog(p.dataDir)
		for _, b := range l {
			if bytes.Contains(b.raw, []byte("fake leader")) {
				t.Errorf("node %d keeps the fake leader's batch at offset %d (epoch %d)", id, b.base, b.epoch)
			}
		}
	}
}
