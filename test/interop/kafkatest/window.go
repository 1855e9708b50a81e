package kafkatest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kafka 4.4's QuorumController logs these when it takes and gives up the active
// controller role (its raft client became leader and it replayed the log; or it lost the
// leadership). A kraftd node runs no QuorumController and never logs them.
const (
	ActivationLine   = "Becoming the active controller at epoch "
	RenunciationLine = "Renouncing the leadership due to a metadata log event"
)

// jvmLogTime is log4j2's default %d layout (see serverLog4j), in the JVM's local zone.
const jvmLogTime = "2006-01-02 15:04:05,000"

var activationRE = regexp.MustCompile(`^\[([0-9-]+ [0-9:,]+)\] .*` + ActivationLine + `(\d+)`)

// Activation is one JVM controller becoming the active controller.
type Activation struct {
	Node  int32
	At    time.Time // the log line's timestamp (millisecond precision)
	Epoch int32
}

// Activations returns every activation the quorum's Kafka controllers have logged, in
// every process they ran, ordered by time.
func (q *MixedRaft) Activations() []Activation {
	var all []Activation
	for _, n := range q.Nodes {
		if n.Side != SideKafka {
			continue
		}
		for _, p := range n.procs {
			all = append(all, parseActivations(p.LogPath, n.ID)...)
		}
	}
	slices.SortFunc(all, func(a, b Activation) int { return a.At.Compare(b.At) })
	return all
}

func parseActivations(path string, id int32) []Activation {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var r []Activation
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if a, ok := parseActivation(sc.Text(), id); ok {
			r = append(r, a)
		}
	}
	return r
}

func parseActivation(line string, id int32) (Activation, bool) {
	if !strings.Contains(line, ActivationLine) {
		return Activation{}, false
	}
	m := activationRE.FindStringSubmatch(line)
	if m == nil {
		return Activation{}, false
	}
	at, err := time.ParseInLocation(jvmLogTime, m[1], time.Local)
	epoch, err2 := strconv.ParseInt(m[2], 10, 32)
	if err != nil || err2 != nil {
		return Activation{}, false
	}
	return Activation{Node: id, At: at, Epoch: int32(epoch)}, true
}

// ActiveController returns the Kafka controller that is active now as its own log tells:
// a running JVM whose current process last logged an activation, with no renunciation
// after it, and still leads the raft epoch it activated in.
func (q *MixedRaft) ActiveController() (int32, bool) {
	best, bestEpoch := int32(-1), int32(-1)
	for _, n := range q.Nodes {
		if n.Side != SideKafka || !n.Running() {
			continue
		}
		epoch, active := activeIn(n.Proc.Log())
		if !active || epoch <= bestEpoch {
			continue
		}
		if st, ok := n.State(); ok && st.Role == "Leader" && st.Epoch == epoch {
			best, bestEpoch = n.ID, epoch
		}
	}
	return best, best >= 0
}

// activeIn reports whether a controller's output ends active, and in which epoch.
func activeIn(out string) (int32, bool) {
	a := strings.LastIndex(out, ActivationLine)
	if a < 0 || strings.LastIndex(out, RenunciationLine) > a {
		return -1, false
	}
	digits := out[a+len(ActivationLine):]
	end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end <= 0 {
		return -1, false
	}
	epoch, err := strconv.ParseInt(digits[:end], 10, 32)
	return int32(epoch), err == nil
}

// WaitActiveController waits until some Kafka controller is active.
func (q *MixedRaft) WaitActiveController(timeout time.Duration) (int32, error) {
	deadline := time.Now().Add(timeout)
	for {
		if id, ok := q.ActiveController(); ok {
			return id, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("kafkatest: no active Kafka controller within %v", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Outage is a kill -9 of the active controller and the controller-less window after it:
// until a Kafka controller logged its activation.
type Outage struct {
	Killed int32
	At     time.Time
	// Window is the time from the kill to the next activation; Open when none followed
	// yet (Window is then the time so far).
	Window time.Duration
	Open   bool
	Next   Activation // the activation that closed the window
}

// Outages records the kills of a run and measures the windows they opened.
type Outages struct {
	q     *MixedRaft
	kills []Outage
}

// NewOutages starts recording kills of q's active controllers.
func (q *MixedRaft) NewOutages() *Outages { return &Outages{q: q} }

// KillActive kills -9 the active Kafka controller (waiting up to timeout for one) and
// records the kill time.
func (o *Outages) KillActive(timeout time.Duration) (int32, error) {
	id, err := o.q.WaitActiveController(timeout)
	if err != nil {
		return -1, err
	}
	// The kill time is taken just before the signal: the window then includes the (short)
	// time the kernel takes to end the JVM, which a real crash does not wait for either.
	o.kills = append(o.kills, Outage{Killed: id, At: time.Now()})
	o.q.Kill(id)
	return id, nil
}

// Windows measures each recorded kill's controller-less window from the logs so far.
func (o *Outages) Windows() []Outage {
	acts := o.q.Activations()
	r := make([]Outage, len(o.kills))
	for i, k := range o.kills {
		r[i] = k
		// JVM timestamps have millisecond precision: a kill taken at 12.3456 s and an
		// activation logged at 12.345 s before it must not count; activations at or after
		// the kill's millisecond do.
		at := k.At.Truncate(time.Millisecond)
		j := slices.IndexFunc(acts, func(a Activation) bool { return !a.At.Before(at) })
		if j < 0 {
			r[i].Open, r[i].Window = true, time.Since(k.At)
			continue
		}
		r[i].Next, r[i].Window = acts[j], acts[j].At.Sub(at)
	}
	return r
}

// WaitWindowClosed waits until the last kill's window has closed, or timeout passes
// (then the returned outage is Open).
func (o *Outages) WaitWindowClosed(timeout time.Duration) Outage {
	deadline := time.Now().Add(timeout)
	for {
		ws := o.Windows()
		if len(ws) == 0 {
			return Outage{}
		}
		last := ws[len(ws)-1]
		if !last.Open || time.Now().After(deadline) {
			return last
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WindowStats summarises windows: median and max (zero when there are none). Open
// windows count with their length so far, a lower bound.
func WindowStats(ws []Outage) (median, maximum time.Duration) {
	if len(ws) == 0 {
		return 0, 0
	}
	ds := make([]time.Duration, len(ws))
	for i, w := range ws {
		ds[i] = w.Window
	}
	slices.Sort(ds)
	median = ds[len(ds)/2]
	if len(ds)%2 == 0 {
		median = (ds[len(ds)/2-1] + ds[len(ds)/2]) / 2
	}
	return median, ds[len(ds)-1]
}

// WindowsLine is one parseable line for a run's windows, e.g.
// "controllerless-windows quorum=kafka,kafka,kraftd kills=5 open=0 median_ms=1510 max_ms=2301 windows_ms=1510,1320,2301,1711,1402".
func WindowsLine(label string, ws []Outage) string {
	median, maximum := WindowStats(ws)
	open := 0
	ms := make([]string, len(ws))
	for i, w := range ws {
		ms[i] = strconv.FormatInt(w.Window.Milliseconds(), 10)
		if w.Open {
			open++
			ms[i] = ">" + ms[i]
		}
	}
	return fmt.Sprintf("controllerless-windows quorum=%s kills=%d open=%d median_ms=%d max_ms=%d windows_ms=%s",
		label, len(ws), open, median.Milliseconds(), maximum.Milliseconds(), strings.Join(ms, ","))
}

// WaitLoaded waits until Kafka controller id's current process has loaded the metadata
// log up to the high watermark, so that it can be elected and activate at once.
func (q *MixedRaft) WaitLoaded(id int32, timeout time.Duration) error {
	n := q.Node(id)
	if n.Side != SideKafka || n.Proc == nil {
		return fmt.Errorf("kafkatest: node %d is not a running Kafka controller", id)
	}
	return n.Proc.WaitLog(jvmCaughtUp, timeout)
}

// KraftdLead is an epoch a kraftd node led and how soon a Kafka controller led the quorum
// after it (a metadata quorum has no active controller while kraftd leads; once a Kafka
// controller leads, its own activation follows, as after any election).
type KraftdLead struct {
	Node  int32
	Epoch int32
	At    time.Time // kraftd's "became leader" log line
	// Followed is when the Kafka controller that took over (Next) logged that it follows
	// kraftd in the epoch (zero if it did not): only from then could it catch up and take
	// over, when it was down or starting at kraftd's election.
	Followed time.Time
	// Unfollowed: kraftd had no Kafka successor to hand over to in the epoch: the Kafka
	// controller that led next never followed it (or, while the epoch is open, no Kafka
	// controller follows it). The epoch ended some other way: kraftd's check-quorum
	// resignation, or a hand-over to a Kafka controller that then died, after which the
	// next one was elected on its own timeout.
	Unfollowed bool
	// Handoff is the time from the later of At and Followed to Next.
	Handoff time.Duration
	Open    bool       // no Kafka controller led a later epoch yet (Handoff is the time so far)
	Next    Activation // the first Kafka controller to lead a later epoch (its raft election)
	// Resigned: kraftd logged, in the epoch, that it resigned to hand leadership to a voter
	// that can act as the active controller (leadership deferral).
	Resigned bool
}

// KraftdResignedLine is what a kraftd leader logs when it resigns to hand leadership over.
const KraftdResignedLine = "resigning to hand leadership to a voter that can act as the active controller"

// KraftdLeads returns every epoch a kraftd node of the quorum led, in every process it
// ran, with the activation that followed, ordered by time.
func (q *MixedRaft) KraftdLeads() []KraftdLead {
	follows, raftLeads := q.jvmRaftTransitions()
	var leads []KraftdLead
	for _, n := range q.Nodes {
		if n.Side != SideKraftd {
			continue
		}
		for _, p := range n.procs {
			leads = append(leads, parseKraftdLeads(p.Log(), n.ID)...)
		}
	}
	matchKraftdLeads(leads, follows, raftLeads, time.Now())
	slices.SortFunc(leads, func(a, b KraftdLead) int { return a.At.Compare(b.At) })
	return leads
}

// matchKraftdLeads fills in each kraftd lead's successor: the first Kafka controller to
// lead a later epoch (raftLeads, by time), when that one followed kraftd in the epoch
// (follows, keyed by epoch, leader, follower), and the hand-over time from the later of
// the two; an epoch no Kafka controller has led after yet is open at now.
func matchKraftdLeads(leads []KraftdLead, follows map[[3]int32]time.Time, raftLeads []Activation, now time.Time) {
	for i := range leads {
		l := &leads[i]
		j := slices.IndexFunc(raftLeads, func(a Activation) bool { return a.Epoch > l.Epoch && !a.At.Before(l.At) })
		if j < 0 {
			l.Open, l.Handoff, l.Unfollowed = true, now.Sub(l.At), true
			for k := range follows {
				if k[0] == l.Epoch && k[1] == l.Node {
					l.Unfollowed = false
				}
			}
			continue
		}
		l.Next = raftLeads[j]
		from := l.At
		f, ok := follows[[3]int32{l.Epoch, l.Node, l.Next.Node}]
		l.Followed, l.Unfollowed = f, !ok
		if f.After(from) {
			from = f
		}
		l.Handoff = l.Next.At.Sub(from)
	}
}

// parseKraftdLeads reads the "became leader" lines of a kraftd JSON log. Its timestamps
// have millisecond precision, as the JVM's do.
func parseKraftdLeads(out string, id int32) []KraftdLead {
	var leads []KraftdLead
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, `"became leader"`) && !strings.Contains(line, KraftdResignedLine) {
			continue
		}
		var v struct {
			TS    string `json:"ts"`
			Msg   string `json:"msg"`
			Epoch int32  `json:"epoch"`
		}
		if json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		if v.Msg == KraftdResignedLine {
			if n := len(leads); n > 0 && leads[n-1].Epoch == v.Epoch {
				leads[n-1].Resigned = true
			}
			continue
		}
		if v.Msg != "became leader" {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z0700", v.TS)
		if err != nil {
			continue
		}
		leads = append(leads, KraftdLead{Node: id, Epoch: v.Epoch, At: at.Truncate(time.Millisecond)})
	}
	return leads
}

var (
	jvmFollowRE = regexp.MustCompile(`^\[([0-9-]+ [0-9:,]+)\] .*Completed transition to FollowerState\(fetchTimeoutMs=\d+, epoch=(\d+), leader=(\d+)`)
	jvmLeaderRE = regexp.MustCompile(`^\[([0-9-]+ [0-9:,]+)\] .*Completed transition to Leader\(.*\bepoch=(\d+)`)
)

// jvmRaftTransitions reads the Kafka controllers' raft transitions: per (epoch, leader,
// Kafka controller) the earliest time that controller followed that leader in that epoch,
// and every epoch a Kafka controller won, ordered by time.
func (q *MixedRaft) jvmRaftTransitions() (follows map[[3]int32]time.Time, leads []Activation) {
	follows = map[[3]int32]time.Time{}
	for _, n := range q.Nodes {
		if n.Side != SideKafka {
			continue
		}
		for _, p := range n.procs {
			for _, line := range strings.Split(p.Log(), "\n") {
				if m := jvmFollowRE.FindStringSubmatch(line); m != nil {
					at, ok1 := parseJVMTime(m[1])
					epoch, ok2 := parseInt32(m[2])
					leader, ok3 := parseInt32(m[3])
					k := [3]int32{epoch, leader, n.ID}
					if t, seen := follows[k]; ok1 && ok2 && ok3 && (!seen || at.Before(t)) {
						follows[k] = at
					}
				} else if m := jvmLeaderRE.FindStringSubmatch(line); m != nil {
					at, ok1 := parseJVMTime(m[1])
					epoch, ok2 := parseInt32(m[2])
					if ok1 && ok2 {
						leads = append(leads, Activation{Node: n.ID, At: at, Epoch: epoch})
					}
				}
			}
		}
	}
	slices.SortFunc(leads, func(a, b Activation) int { return a.At.Compare(b.At) })
	return follows, leads
}

func parseJVMTime(s string) (time.Time, bool) {
	at, err := time.ParseInLocation(jvmLogTime, s, time.Local)
	return at, err == nil
}

func parseInt32(s string) (int32, bool) {
	v, err := strconv.ParseInt(s, 10, 32)
	return int32(v), err == nil
}
