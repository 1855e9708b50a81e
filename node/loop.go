package node

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/kraftd/kraftd/raft"
)

// maxDrain is how many queued messages the loop steps before it polls the
// driver again, so timers stay punctual under load.
const maxDrain = 256

// shutdownGrace is how much longer than the driver's ShutdownTimeout the
// loop waits, so the driver's own deadline ends a stuck handover first.
const shutdownGrace = time.Second

// loop is the only goroutine that calls the driver, the log (but for a
// leader's flush job, flush.go, and the body of a snapshot being written,
// snapshot.go) and the application. Each round: run due maintenance, poll
// due timers, stop on the application's fatal error (node.Failing),
// publish the status, tick the application, start the snapshot it asks
// for (node.Snapshotter), stamp the round for the metrics (when on:
// metrics.go), then wait for the earliest of: an inbound message, the end
// of a leader fsync run off the loop, the end of a snapshot written off the
// loop, news of which peers can be the active controller, the driver's
// next deadline, the application's next tick, the next maintenance, the
// next probe of voters' software (a leader that defers its leadership:
// deferral.go), the end of ctx. (A goroutine per timer posting into the
// loop, as kfake does, was not needed: one timer re-armed every round
// covers every deadline.)
func (n *Node) loop(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var (
		prev          raft.Status
		first         = true
		done          = ctx.Done() // nil once the shutdown began
		shutdownUntil time.Time    // zero until then
	)
	if done == nil { // a context that is never done: run until a fatal error
		done = make(chan struct{})
	}
	defer n.stopSnapshot()
	nextMaintain := time.Now().Add(n.o.MaintainEvery)
	var nextProbe time.Time // leadership deferral: see probeControllers
	probing := false
	for {
		now := time.Now()
		if !now.Before(nextMaintain) {
			n.doing = activity{op: "maintain"}
			if err := n.maintain(now); err != nil {
				return n.fatal("log maintenance", err)
			}
			nextMaintain = now.Add(n.o.MaintainEvery)
		}
		n.doing = activity{op: "poll"}
		next, err := n.driver.Poll(now)
		if err != nil {
			return n.fatal("poll", err)
		}
		if f, ok := n.o.App.(Failing); ok {
			if err := f.Err(); err != nil {
				return n.fatal("apply committed records", err)
			}
		}
		st := n.driver.Status()
		if n.ctrls != nil && (!now.Before(nextProbe) || st.Role != prev.Role) {
			probing = n.probeControllers(st)
			nextProbe = now.Add(probeEvery)
		}
		if first || st.Role != prev.Role || st.Epoch != prev.Epoch || st.LeaderID != prev.LeaderID {
			n.logTransition(prev, st, first)
			first = false
		}
		if !st.Equal(prev) || n.status.Load() == nil {
			moved := st.Epoch != prev.Epoch || st.LeaderID != prev.LeaderID
			n.status.Store(&st)
			prev = st
			if moved {
				n.reg.notify()
			}
		}
		if n.o.App != nil && done != nil {
			n.doing = activity{op: "tick"}
			an := n.o.App.Tick(now, st, writer{n})
			// Appends may have moved the driver's deadline (linger).
			next = earliest(n.driver.Next(), an)
			n.maybeSnapshot(now)
		}
		if done == nil {
			if n.driver.Done() {
				n.lg.Info("graceful shutdown complete", zap.Int32("epoch", st.Epoch))
				return nil
			}
			if !now.Before(shutdownUntil) {
				n.lg.Warn("graceful shutdown did not finish in time; closing", zap.Duration("bound", n.o.ShutdownTimeout+shutdownGrace))
				return nil
			}
			next = earliest(next, shutdownUntil)
		}
		wake := earliest(next, nextMaintain)
		if probing {
			wake = earliest(wake, nextProbe)
		}
		if n.obs.m != nil {
			wake = earliest(wake, n.noteTurn(now))
		}
		timer.Reset(max(wake.Sub(now), 0))
		waitStart := time.Now()
		select {
		case m := <-n.inbox:
			if err := n.stepQueued(m); err != nil {
				return err
			}
		case r := <-n.ctrlq: // nil without a controller: never ready
			n.serveControllerQueue(r)
		case f := <-n.flushed:
			n.doing = activity{op: "flush done"}
			if err := n.driver.FlushDone(time.Now(), f.job, f.err); err != nil {
				return n.fatal("flush", err)
			}
		case err := <-n.snapshotEnded():
			n.doing = activity{op: "snapshot done"}
			n.snapshotDone(err)
		case <-n.ctrls.changes():
			if err := n.applyControllers(time.Now()); err != nil {
				return err
			}
		case <-timer.C:
		case <-done:
			done = nil
			shutdownUntil = time.Now().Add(n.o.ShutdownTimeout + shutdownGrace)
			n.lg.Info("shutting down gracefully", zap.Int32("epoch", st.Epoch), zap.Stringer("role", st.Role))
			n.doing = activity{op: "shutdown"}
			n.driver.Shutdown(time.Now())
		}
		if n.obs.m != nil {
			n.obs.m.Raft().Idle(time.Since(waitStart))
		}
		// Stop the timer without racing a fired value into the next round.
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// stepQueued steps m and whatever else is queued, up to maxDrain messages,
// before the loop polls again.
func (n *Node) stepQueued(m raft.Message) error {
	if err := n.step(m); err != nil {
		return err
	}
	for i := 0; i < maxDrain; i++ {
		select {
		case m := <-n.inbox:
			if err := n.step(m); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

func (n *Node) step(m raft.Message) error {
	if ref, ok := m.Ref.(*reqRef); ok && ref.taken != nil {
		// Off the inbox: whatever the request waits for now (a parked Fetch, a
		// commit) no longer holds the reading of other connections' requests.
		ref.taken()
	}
	n.doing = activity{op: "step", msg: m}
	if err := n.driver.Step(time.Now(), m); err != nil {
		return n.fatal("step", err)
	}
	return nil
}

// maintain applies log retention (metadata.max.retention.*). An error is
// fatal like a log error in the driver.
func (n *Node) maintain(now time.Time) error {
	cleaned, err := n.log.MaybeClean(now)
	if cleaned {
		n.lg.Info("log retention removed old segments and snapshots", zap.Int64("log_start_offset", n.log.StartOffset()))
	}
	return err
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (n *Node) fatal(op string, err error) error {
	st := n.driver.Status()
	n.lg.Error("fatal raft error: stopping the node", zap.String("op", op), zap.Error(err),
		zap.Int32("epoch", st.Epoch), zap.Stringer("role", st.Role))
	return fmt.Errorf("raft %s: %w", op, err)
}

// logTransition writes one line per state transition, epoch change or
// leader change.
func (n *Node) logTransition(prev, st raft.Status, first bool) {
	fields := []zap.Field{zap.Int32("epoch", st.Epoch),
		zap.Int32("leader_id", st.LeaderID), zap.Stringer("role", st.Role),
		zap.Int64("high_watermark", st.HighWatermark), zap.Int64("log_end_offset", st.LogEndOffset)}
	if first {
		n.lg.Info("initial quorum state", fields...)
		return
	}
	what := "state transition"
	level := zap.InfoLevel
	switch {
	case st.Role != prev.Role:
		fields = append(fields, zap.String("transition", prev.Role.String()+" -> "+st.Role.String()))
		if st.Epoch == prev.Epoch && st.LeaderID == prev.LeaderID {
			// The raft core logs every role transition itself.
			level = zap.DebugLevel
		}
	case st.Epoch != prev.Epoch:
		what = "epoch change"
	default:
		what = "leader change"
	}
	if st.Epoch != prev.Epoch {
		fields = append(fields, zap.Int32("previous_epoch", prev.Epoch))
	}
	if st.LeaderID != prev.LeaderID {
		fields = append(fields, zap.Int32("previous_leader_id", prev.LeaderID))
	}
	if ce := n.lg.Check(level, what); ce != nil {
		ce.Write(fields...)
	}
}
