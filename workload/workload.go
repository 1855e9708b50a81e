package workload

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// maxLatencyMicros is the histograms' range (60 s); longer latencies are
// recorded as 60 s.
const maxLatencyMicros = 60_000_000

// Config are test-kraft-server-start's workload flags.
type Config struct {
	Throughput   int // records/s; 0 = unthrottled
	RecordSize   int // bytes
	MaxInFlight  int // unthrottled: appended but not yet committed records, at most
	StatsFormat  StatsFormat
	StatsEvery   time.Duration
	AppendTick   time.Duration // granularity of throttled appends
	MaxPerAppend int           // records per Append call
	// SnapshotEvery takes a snapshot after this many committed record bytes
	// (metadata.log.max.record.bytes.between.snapshots); 0 = never.
	SnapshotEvery int64
	// Observe appends nothing: an observer prints commit stats only.
	Observe bool
	// Warmup excludes appends made this soon after start from the summary
	// histogram (they still count in the periodic stats).
	Warmup time.Duration
	// Journal, when set, receives every batch this node appended as
	// leader and saw committed (--commit-journal).
	Journal *Journal
}

// pendingAppend is one Append call awaiting commit. Latency is measured
// from when each record was offered (its due time under --throughput), not
// from the Append call, so records that waited for the next append tick or
// behind a slow flush are charged for it (no coordinated omission).
type pendingAppend struct {
	first, last int64         // offsets
	due         time.Time     // offered time of the record at offset first
	step        time.Duration // offered-time spacing of the following records (0: all at due)
}

// Workload is TestRaftServer's workload: while leader it appends records and
// measures commit latency (from when a record is offered to HandleCommit on
// the leader). It is a node.Application: used only on the node's loop
// goroutine (Tick, and the listener callbacks inside the driver's Poll and
// Step), so it needs no locks.
type Workload struct {
	cfg    Config
	out    io.Writer
	lg     *zap.Logger
	nodeID int32
	voter  bool // in controller.quorum.voters

	// Leadership as seen by tick: appends are made only in leaderEpoch.
	leaderEpoch int32 // -1 when not leader
	leaderSince time.Time
	nextAppend  time.Time // throttled: no append before (AppendTick after the last)
	appended    int64     // records appended in this leadership
	pending     []pendingAppend
	inFlight    int
	seq         uint64
	// spare is the slab of an append the driver refused: nothing holds it,
	// so the next try reuses it instead of allocating (and zeroing) anew.
	spare      []byte
	last       raft.LeaderAndEpoch
	lastStatus raft.Status // as of the last tick (for the final summary)

	// Counters.
	committed      int64 // data records committed (any node)
	committedBytes int64
	hwOffset       int64               // last committed offset + 1
	lastCommitted  raft.OffsetAndEpoch // end offset and epoch of the last committed batch
	sinceSnapshot  int64               // committed record bytes since the last snapshot
	lastCommitMs   int64               // wall clock ms of the last commit (snapshot header timestamp)

	// Interval stats.
	intervalStart     time.Time
	intervalCommitted int64
	intervalBytes     int64
	interval          *hdrhistogram.Histogram // µs
	total             *hdrhistogram.Histogram // µs
	nextStats         time.Time
	started           time.Time
	appendErrors      int64
	clock             func() time.Time // commit observation time (tests replace it)
	stopped           bool             // a non-retriable append error
	csvHeaderDone     bool             // --stats-format csv printed its header
}

var _ node.Application = (*Workload)(nil)

// New returns the workload of node nodeID (voter: in
// controller.quorum.voters); stats lines go to out.
func New(cfg Config, nodeID int32, voter bool, out io.Writer, lg *zap.Logger, now time.Time) *Workload {
	if cfg.StatsEvery <= 0 {
		cfg.StatsEvery = 5 * time.Second
	}
	if cfg.AppendTick <= 0 {
		cfg.AppendTick = time.Millisecond
	}
	if cfg.MaxPerAppend <= 0 {
		cfg.MaxPerAppend = 4096
	}
	return &Workload{
		cfg: cfg, out: out, lg: lg, nodeID: nodeID, voter: voter, leaderEpoch: -1, stopped: cfg.Observe,
		last:          raft.LeaderAndEpoch{LeaderID: -1},
		interval:      hdrhistogram.New(1, maxLatencyMicros, 3),
		total:         hdrhistogram.New(1, maxLatencyMicros, 3),
		clock:         time.Now,
		intervalStart: now, nextStats: now.Add(cfg.StatsEvery), started: now,
	}
}

// Tick appends what is due through wr, snapshots and prints stats when due;
// it returns when it wants to run next.
func (w *Workload) Tick(now time.Time, st raft.Status, wr node.Writer) time.Time {
	w.lastStatus = st
	w.maybeSnapshot(wr)
	if !now.Before(w.nextStats) {
		w.printStats(now, st, false)
		w.nextStats = now.Add(w.cfg.StatsEvery)
	}
	next := w.flushJournal(now, w.nextStats)
	if st.Role != raft.RoleLeader || w.stopped {
		if w.leaderEpoch != -1 {
			w.loseLeadership()
		}
		return next
	}
	if w.leaderEpoch != st.Epoch {
		w.loseLeadership()
		w.leaderEpoch = st.Epoch
		w.leaderSince = now
		w.nextAppend = time.Time{}
		w.appended = 0
	}
	var want int
	if w.cfg.Throughput > 0 {
		// The loop ticks the workload on every round (each message, each flush), so
		// without a bound it would append a batch of a few records per round.
		if now.Before(w.nextAppend) {
			return earliest(next, w.nextAppend)
		}
		// An open loop, as TestRaftServer's: every record that has fallen due is
		// offered. Only the leader's append buffer (ErrBufferFull, a memory bound)
		// holds records back, and they are charged latency from their due time.
		due := int64(now.Sub(w.leaderSince).Seconds() * float64(w.cfg.Throughput))
		want = int(due - w.appended)
		if want > 0 {
			w.nextAppend = now.Add(w.cfg.AppendTick)
		}
		// Wake when the next record is due, no more often than AppendTick.
		nextDue := w.leaderSince.Add(time.Duration(float64(w.appended+int64(max(want, 0))+1) / float64(w.cfg.Throughput) * float64(time.Second)))
		next = earliest(next, later(nextDue, now.Add(w.cfg.AppendTick)))
	} else {
		want = w.cfg.MaxInFlight - w.inFlight
	}
	for want > 0 {
		k := min(want, w.cfg.MaxPerAppend)
		due, step := now, time.Duration(0)
		if w.cfg.Throughput > 0 {
			step = time.Second / time.Duration(w.cfg.Throughput)
			due = w.leaderSince.Add(time.Duration(float64(w.appended+1) / float64(w.cfg.Throughput) * float64(time.Second)))
		}
		if !w.appendRecords(wr, now, st.Epoch, k, due, step) {
			break
		}
		want -= k
	}
	return next
}

// appendRecords appends k records; false when the driver refused (not
// leader any more, buffer full): try again later.
func (w *Workload) appendRecords(wr node.Writer, now time.Time, epoch int32, k int, due time.Time, step time.Duration) bool {
	// One slab per call; each record: 8-byte sequence, 4-byte node id,
	// 4-byte epoch, zeros (as TestRaftServer's zero payload). A refused
	// append's slab is reused: only the first 16 bytes of each record are
	// ever written, so its zeros are still zeros.
	var slab []byte
	if n := k * w.cfg.RecordSize; cap(w.spare) >= n {
		slab, w.spare = w.spare[:n], nil
	} else {
		slab = make([]byte, n)
	}
	recs := make([][]byte, k)
	for i := range recs {
		r := slab[i*w.cfg.RecordSize : (i+1)*w.cfg.RecordSize]
		w.seq++
		if len(r) >= 16 {
			binary.BigEndian.PutUint64(r, w.seq)
			binary.BigEndian.PutUint32(r[8:], uint32(w.nodeID))
			binary.BigEndian.PutUint32(r[12:], uint32(epoch))
		}
		recs[i] = r
	}
	last, err := wr.Append(now, epoch, recs)
	if err != nil {
		w.spare = slab
		w.seq -= uint64(k)
		w.appendErrors++
		switch {
		case errors.Is(err, raft.ErrBufferFull), errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrInvalidEpoch), errors.Is(err, raft.ErrShutdown):
		case errors.Is(err, raft.ErrRecordTooLarge) && k > 1:
			// One Append call is one batch; with small segments (and so small batches) a
			// backlog must be split. Halve until it fits.
			w.cfg.MaxPerAppend = max(1, k/2)
		default:
			w.lg.Error("workload append failed; the workload stops", zap.Error(err), zap.Int("records", k))
			w.stopped = true
		}
		return false
	}
	w.pending = append(w.pending, pendingAppend{first: last - int64(k) + 1, last: last, due: due, step: step})
	w.inFlight += k
	w.appended += int64(k)
	return true
}

func (w *Workload) loseLeadership() {
	w.leaderEpoch = -1
	w.pending = w.pending[:0]
	w.inFlight = 0
}

// HandleCommit counts committed data records and, on the leader, records the
// latency of its own appends.
func (w *Workload) HandleCommit(batches []raft.CommittedBatch) {
	now := w.clock()
	for _, b := range batches {
		w.hwOffset = b.LastOffset + 1
		w.lastCommitted = raft.OffsetAndEpoch{Offset: b.LastOffset + 1, Epoch: b.Epoch}
		w.lastCommitMs = now.UnixMilli()
		if b.Control {
			continue
		}
		n := int64(len(b.Records))
		w.committed += n
		w.intervalCommitted += n
		for _, r := range b.Records {
			w.committedBytes += int64(len(r))
			w.intervalBytes += int64(len(r))
			w.sinceSnapshot += int64(len(r))
		}
		if w.leaderEpoch < 0 || b.Epoch != w.leaderEpoch {
			continue
		}
		if w.cfg.Journal != nil {
			w.cfg.Journal.add(JournalEntry{Base: b.BaseOffset, Last: b.LastOffset, Epoch: b.Epoch, CRC: RecordsCRC(b.Records)})
		}
		for len(w.pending) > 0 && w.pending[0].first <= b.LastOffset {
			p := &w.pending[0]
			upto := min(p.last, b.LastOffset)
			cnt := upto - p.first + 1
			inTotal := p.due.Sub(w.started) >= w.cfg.Warmup
			if p.step == 0 {
				us := latencyMicros(now.Sub(p.due))
				_ = w.interval.RecordValues(us, cnt)
				if inTotal {
					_ = w.total.RecordValues(us, cnt)
				}
			} else {
				for i := int64(0); i < cnt; i++ {
					us := latencyMicros(now.Sub(p.due.Add(time.Duration(i) * p.step)))
					_ = w.interval.RecordValue(us)
					if inTotal {
						_ = w.total.RecordValue(us)
					}
				}
				p.due = p.due.Add(time.Duration(cnt) * p.step)
			}
			w.inFlight -= int(cnt)
			if upto == p.last {
				w.pending = w.pending[1:]
			} else {
				p.first = upto + 1
			}
		}
	}
	if len(w.pending) == 0 {
		w.pending = nil // let the backing array go
	}
}

// HandleLoadSnapshot: the performance test has no state, so loading a
// snapshot only moves the committed position.
func (w *Workload) HandleLoadSnapshot(id raft.OffsetAndEpoch, r raft.SnapshotReader) {
	w.hwOffset = id.Offset
	w.lastCommitted = id
	w.sinceSnapshot = 0
}

// maybeSnapshot writes a snapshot of the (empty) workload state at the last
// committed batch once enough record bytes were committed since the last
// one, as a Kafka controller does on
// metadata.log.max.record.bytes.between.snapshots. It runs on the loop,
// outside the driver's rounds. A failure is logged and retried at the next
// threshold; the log itself is untouched by it.
func (w *Workload) maybeSnapshot(wr node.Writer) {
	if w.cfg.SnapshotEvery <= 0 || w.sinceSnapshot < w.cfg.SnapshotEvery || w.lastCommitted.Offset <= 0 {
		return
	}
	w.sinceSnapshot = 0
	if err := wr.WriteEmptySnapshot(w.lastCommitted, w.lastCommitMs); err != nil {
		w.lg.Warn("snapshot failed", zap.Int64("offset", w.lastCommitted.Offset), zap.Int32("epoch", w.lastCommitted.Epoch), zap.Error(err))
		return
	}
	w.lg.Info("snapshot written", zap.Int64("offset", w.lastCommitted.Offset), zap.Int32("epoch", w.lastCommitted.Epoch))
}

// flushJournal fsyncs the commit journal when its batch is due and returns
// next, or the journal's due time when that is earlier. A journal that
// cannot be written stops the workload: it could not tell its acks.
func (w *Workload) flushJournal(now, next time.Time) time.Time {
	j := w.cfg.Journal
	if j == nil {
		return next
	}
	due := j.due()
	if due.IsZero() {
		return next
	}
	if now.Before(due) {
		return earlier(next, due)
	}
	if err := j.Flush(now); err != nil && !w.stopped {
		w.lg.Error("commit journal failed; the workload stops", zap.Error(err))
		w.stopped = true
	}
	return next
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (w *Workload) HandleLeaderChange(l raft.LeaderAndEpoch) { w.last = l }

func (w *Workload) BeginShutdown() {}

// Stats is one line of --stats-json, or one row of --stats-format csv
// (field names are parsed by tools).
type Stats struct {
	ElapsedSec       float64 `json:"elapsed_sec"` // since the workload started, at the end of the interval
	NodeID           int32   `json:"node_id"`
	LeaderID         int32   `json:"leader_id"`
	Epoch            int32   `json:"epoch"`
	Role             string  `json:"role"`
	CurrentState     string  `json:"current_state"` // Kafka's raft-metrics current-state
	HighWatermark    int64   `json:"high_watermark"`
	LogEndOffset     int64   `json:"log_end_offset"`
	CommittedRecords int64   `json:"committed_records"`
	IntervalSec      float64 `json:"interval_sec"`
	RecordsPerSec    float64 `json:"records_per_sec"`
	MBPerSec         float64 `json:"mb_per_sec"`
	LatencyCount     int64   `json:"latency_count"`
	P50Ms            float64 `json:"p50_ms"`
	P75Ms            float64 `json:"p75_ms"`
	P99Ms            float64 `json:"p99_ms"`
	P999Ms           float64 `json:"p999_ms"`
	MaxMs            float64 `json:"max_ms"`
	CPUSeconds       float64 `json:"cpu_seconds"`
	PeakRSSMB        float64 `json:"peak_rss_mb"`
	Final            bool    `json:"final"`
}

// StatsFormat is how the workload prints its stats lines.
type StatsFormat int

const (
	StatsText  StatsFormat = iota // one readable line per interval and a summary
	StatsJSON                     // one Stats object per line (tools parse it)
	StatsKafka                    // TestRaftServer's "Throughput (bytes/second): ..." line
	StatsCSV                      // a header row, then one row per interval (the Stats fields), the summary's final=true
)

var statsFormatNames = []string{"text", "json", "kafka", "csv"}

func (f StatsFormat) String() string {
	if int(f) < len(statsFormatNames) {
		return statsFormatNames[f]
	}
	return fmt.Sprintf("StatsFormat(%d)", int(f))
}

// Set parses a format name (a flag value).
func (f *StatsFormat) Set(s string) error {
	i := slices.Index(statsFormatNames, s)
	if i < 0 {
		return fmt.Errorf("unknown stats format %q (text, json, kafka or csv)", s)
	}
	*f = StatsFormat(i)
	return nil
}

// Type names the flag value's type in usage text.
func (f *StatsFormat) Type() string { return "format" }

// PrintSummary prints the final stats line: totals since start and the
// latency histogram after the warm-up, with the status of the last tick.
func (w *Workload) PrintSummary(now time.Time) { w.printStats(now, w.lastStatus, true) }

func (w *Workload) printStats(now time.Time, st raft.Status, final bool) {
	h := w.interval
	elapsed := now.Sub(w.intervalStart).Seconds()
	committed, bytes := w.intervalCommitted, w.intervalBytes
	if final {
		h = w.total
		elapsed = now.Sub(w.started).Seconds()
		committed, bytes = w.committed, w.committedBytes
	}
	s := Stats{
		NodeID: w.nodeID, LeaderID: st.LeaderID, Epoch: st.Epoch, Role: st.Role.String(),
		CurrentState: currentState(st.Role, w.voter), HighWatermark: st.HighWatermark, LogEndOffset: st.LogEndOffset, CommittedRecords: w.committed, IntervalSec: round3(elapsed),
		LatencyCount: h.TotalCount(), Final: final, ElapsedSec: round3(now.Sub(w.started).Seconds()),
	}
	if elapsed > 0 {
		s.RecordsPerSec = round3(float64(committed) / elapsed)
		s.MBPerSec = round3(float64(bytes) / elapsed / 1e6)
	}
	if h.TotalCount() > 0 {
		ms := func(us int64) float64 { return round3(float64(us) / 1000) }
		s.P50Ms, s.P75Ms, s.P99Ms = ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(75)), ms(h.ValueAtQuantile(99))
		s.P999Ms, s.MaxMs = ms(h.ValueAtQuantile(99.9)), ms(h.Max())
	}
	s.CPUSeconds, s.PeakRSSMB = resourceUsage()
	switch w.cfg.StatsFormat {
	case StatsJSON:
		b, _ := json.Marshal(s)
		fmt.Fprintln(w.out, string(b))
	case StatsCSV:
		// A failed write of stats is not worth stopping the workload for (as for the others).
		_ = writeCSV(w.out, !w.csvHeaderDone, s.CSVRecord())
		w.csvHeaderDone = true
	case StatsKafka:
		// TestRaftServer prints while it leads and commits, nothing at shutdown. Its rate
		// is a Kafka Rate, which understates the first minute; this one is the interval's.
		if !final && s.LatencyCount > 0 {
			fmt.Fprintf(w.out, "Throughput (bytes/second): %.2f, Latency (ms): %.1f p75 %.1f p99 %.1f p999\n",
				float64(bytes)/elapsed, s.P75Ms, s.P99Ms, s.P999Ms)
		}
	default:
		prefix := "stats"
		if final {
			prefix = "summary"
		}
		line := fmt.Sprintf("%s: node %d %s epoch %d leader %d: committed %d records (%.1f records/s, %.3f MB/s over %.1fs)",
			prefix, s.NodeID, s.Role, s.Epoch, s.LeaderID, s.CommittedRecords, s.RecordsPerSec, s.MBPerSec, s.IntervalSec)
		if s.LatencyCount > 0 {
			line += fmt.Sprintf(", commit latency ms p50 %.3f p75 %.3f p99 %.3f p99.9 %.3f max %.3f (%d records)",
				s.P50Ms, s.P75Ms, s.P99Ms, s.P999Ms, s.MaxMs, s.LatencyCount)
		}
		if final {
			line += fmt.Sprintf(", cpu %.2fs, peak rss %.1f MB", s.CPUSeconds, s.PeakRSSMB)
		}
		fmt.Fprintln(w.out, line)
	}
	w.interval.Reset()
	w.intervalStart = now
	w.intervalCommitted, w.intervalBytes = 0, 0
}

// currentState names a role as Kafka's raft-metrics current-state gauge
// does (Resigned reports unattached; a non-voter reports observer).
func currentState(r raft.Role, voter bool) string {
	switch r {
	case raft.RoleLeader:
		return "leader"
	case raft.RoleCandidate:
		return "candidate"
	case raft.RoleProspective:
		return "prospective"
	case raft.RoleVoted:
		return "voted"
	case raft.RoleFollower:
		if voter {
			return "follower"
		}
		return "observer"
	}
	if !voter {
		return "observer"
	}
	return "unattached"
}

// latencyMicros clamps a latency into the histograms' range: a value they
// cannot track would be dropped, hiding the worst latencies.
func latencyMicros(d time.Duration) int64 {
	return min(max(d.Microseconds(), 1), maxLatencyMicros)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// resourceUsage returns user+system CPU seconds and peak RSS (MB) of this
// process.
func resourceUsage() (cpuSeconds, peakRSSMB float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return round3(cpu.Seconds()), round3(float64(ru.Maxrss) / 1024) // Maxrss is KiB on Linux
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
