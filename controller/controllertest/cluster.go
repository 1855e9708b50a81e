// Package controllertest drives controller applications deterministically
// on real raft drivers: a rafttest.InteractionEnv (in-memory logs, a
// message queue that moves when told, virtual clocks) with a controller.App
// registered on every node, ticked and snapshotted by the harness the way
// the node's loop does it, but inline. It checks, after every command, that
// every image a node publishes equals every other image published at the
// same offset, by any node, before or after a crash: replay from the log,
// from a snapshot plus the log, and the image kept in memory all agree.
//
// For tests only: the product binary never links it.
package controllertest

import (
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/kraftd/kraftd/controller"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/raft"
	"github.com/kraftd/kraftd/raft/rafttest"
)

// Cluster is a simulated quorum of controller applications.
type Cluster struct {
	t    *testing.T
	Env  *rafttest.InteractionEnv
	opts controller.Options
	apps map[int32]*controller.App
	// seen is the first image published at each offset, by any node.
	seen map[int64]*image.Image
	// Snapshots counts the snapshots each node wrote.
	Snapshots map[int32]int
	// Compared counts the images checked against one published earlier.
	Compared int
	// starts counts each node's application starts.
	starts map[int32]int
	// OnPublish, when set, sees every image a node publishes, after the
	// comparison with the first image published at its offset: where a
	// test checks invariants of its own.
	OnPublish func(id int32, im *image.Image)
}

// New returns an empty cluster; opts is the template of every node's
// application (Start is each node's clock at its start).
func New(t *testing.T, opts controller.Options) *Cluster {
	c := &Cluster{t: t, opts: opts, apps: map[int32]*controller.App{}, seen: map[int64]*image.Image{},
		Snapshots: map[int32]int{}, starts: map[int32]int{}}
	c.Env = rafttest.NewInteractionEnv(t, &rafttest.InteractionOpts{OnStart: c.start})
	return c
}

// start gives a (re)started node a fresh application, as a restarted
// process has: its state comes back from the node's snapshot and log.
func (c *Cluster) start(id int32, d *raft.Driver) {
	o := c.opts
	o.NodeID, o.Start = id, c.Env.Now(id)
	o.OnPublish = func(im *image.Image) { c.check(id, im) }
	c.starts[id]++
	if o.Active != nil {
		ac := *o.Active
		ac.Cluster.NodeID = id
		// Each process draws its own seed in the product; one seed shared
		// by every node and restart would hand out the same topic ids
		// again.
		ac.Seed ^= int64(id)<<40 ^ int64(c.starts[id])<<20
		o.Active = &ac
	}
	app, err := controller.New(o)
	if err != nil {
		c.t.Fatal(err)
	}
	d.Register(app)
	c.apps[id] = app
}

// check compares a published image with the first one published at its
// offset.
func (c *Cluster) check(id int32, im *image.Image) {
	off := im.Provenance().Offset
	first, ok := c.seen[off]
	if !ok {
		c.seen[off] = im
		if c.OnPublish != nil {
			c.OnPublish(id, im)
		}
		return
	}
	c.Compared++
	if d := image.Diff(first, im, 10); d != nil {
		c.t.Fatalf("node %d published at offset %d an image unlike the first one there: %v", id, off, d)
	}
	if c.OnPublish != nil {
		c.OnPublish(id, im)
	}
}

// App is node id's application; nil for an unknown node.
func (c *Cluster) App(id int32) *controller.App { return c.apps[id] }

// Do runs one InteractionEnv command (see rafttest.InteractionEnv.Handle),
// then lets every running node's application tick and write the snapshot
// it asks for. It returns the command's transcript.
func (c *Cluster) Do(cmd string, args ...string) string {
	d := &datadriven.TestData{Pos: "controllertest", Cmd: cmd}
	for _, a := range args {
		k, v, ok := cut(a)
		arg := datadriven.CmdArg{Key: k}
		if ok {
			arg.Vals = []string{v}
		}
		d.CmdArgs = append(d.CmdArgs, arg)
	}
	out := c.Env.Handle(c.t, d)
	c.settle()
	return out
}

func cut(s string) (string, string, bool) {
	for i := range len(s) {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// settle is the rest of a loop round on every running node: Tick, then the
// snapshot the application asks for, written inline, then retention (the
// log drops what its newest snapshot covers).
func (c *Cluster) settle() {
	for _, id := range slices.Sorted(maps.Keys(c.apps)) {
		app := c.apps[id]
		d := c.Env.Driver(id)
		if d == nil {
			continue
		}
		if err := app.Err(); err != nil {
			c.t.Fatalf("node %d failed: %v", id, err)
		}
		now := c.Env.Now(id)
		app.Tick(now, d.Status(), driverWriter{d})
		job, ok := app.NextSnapshot()
		if !ok {
			continue
		}
		app.SnapshotWritten(c.writeSnapshot(id, d, job, now))
	}
}

func (c *Cluster) writeSnapshot(id int32, d *raft.Driver, job node.SnapshotJob, now time.Time) node.SnapshotResult {
	l := c.Env.Log(id)
	if latest, ok := l.LatestSnapshot(); ok && latest.Offset >= job.ID.Offset {
		return node.SnapshotResult{ID: job.ID, Exists: true, At: now}
	}
	w, err := l.CreateSnapshot(job.ID)
	if err != nil {
		return node.SnapshotResult{ID: job.ID, Err: err, At: now}
	}
	head, next := d.SnapshotHeaderBatch(job.ID, job.LastContainedMs, now.UnixMilli())
	err = node.WriteSnapshot(w, head, next, job)
	if err == nil {
		err = w.Freeze()
	}
	size := w.Size()
	_ = w.Close()
	if err != nil {
		c.t.Fatalf("node %d: snapshot %v: %v", id, job.ID, err)
	}
	c.Snapshots[id]++
	l.DeleteBeforeSnapshot()
	return node.SnapshotResult{ID: job.ID, Bytes: size, At: now}
}

// driverWriter is node.Writer over a simulated node's driver: the appends
// of an active controller.
type driverWriter struct{ d *raft.Driver }

func (w driverWriter) Append(now time.Time, epoch int32, records [][]byte) (int64, error) {
	return w.d.Append(now, epoch, records)
}

func (w driverWriter) WriteEmptySnapshot(raft.OffsetAndEpoch, int64) error { return nil }

func (w driverWriter) UpgradeKRaftVersion(now time.Time, epoch int32, level int16, validateOnly bool) (int64, error) {
	return w.d.UpgradeKRaftVersion(now, epoch, level, validateOnly)
}

// Serve hands node id's application a controller request, as the node's
// loop does, then settles every node as Do does.
func (c *Cluster) Serve(id int32, r node.ControllerRequest) {
	c.t.Helper()
	d := c.Env.Driver(id)
	if d == nil {
		c.t.Fatalf("node %d is down", id)
	}
	c.apps[id].Serve(c.Env.Now(id), d.Status(), driverWriter{d}, r)
	c.settle()
}

// Propose appends records as one batch on node id, which must lead, and
// returns the batch's last offset.
func (c *Cluster) Propose(id int32, recs ...metadata.Record) int64 {
	c.t.Helper()
	d := c.Env.Driver(id)
	if d == nil {
		c.t.Fatalf("node %d is down", id)
	}
	vals := make([][]byte, len(recs))
	for i, r := range recs {
		lo, hi := r.ValidVersions()
		v := hi
		if _, ok := r.(*metadata.FeatureLevelRecord); ok {
			v = lo
		}
		b, err := metadata.Append(nil, r, v)
		if err != nil {
			c.t.Fatal(err)
		}
		vals[i] = b
	}
	st := d.Status()
	last, err := d.Append(c.Env.Now(id), st.Epoch, vals)
	if err != nil {
		c.t.Fatalf("node %d append: %v", id, err)
	}
	return last
}

// Leader is the node that leads, -1 when none does.
func (c *Cluster) Leader() int32 {
	for _, id := range slices.Sorted(maps.Keys(c.apps)) {
		if d := c.Env.Driver(id); d != nil && d.Status().Role == raft.RoleLeader {
			return id
		}
	}
	return -1
}

// Ids formats node ids as command arguments.
func Ids(ids ...int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(int(id))
	}
	return out
}
