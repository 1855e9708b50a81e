package controller_test

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/image"
)

// netState is what a broker can reach.
type netState int8

const (
	netOK       netState = iota
	netCutCtrl           // not the controllers: no heartbeats, no metadata; replication goes on
	netIsolated          // nothing: no controllers, no other broker, no client
)

// pstate is a partition as a broker knows it: from the metadata it
// fetched, or from an AlterPartition answer newer than that.
type pstate struct {
	leader, leaderEpoch, partitionEpoch int32
	isr, replicas                       []int32
	lrs                                 int8
}

// proposal is an ISR change a leader asked for and has no final answer to.
// Until the metadata passes the state it was made from, its ISR counts
// with the committed one for acknowledgements (Kafka's maximal ISR).
type proposal struct {
	isr                         []int32
	lrs                         int8
	leaderEpoch, partitionEpoch int32
	sent                        bool // in flight
	dead                        bool // refused: wait for the metadata to move past it
	kind                        byte // 's'hrink, 'e'xpand, 'r'ecovered
}

type alterPart struct {
	k  tpKey
	pr *proposal
}

// simBroker is a broker as the controller sees it, and as far as the
// write model needs: its log of each partition is a count in bsim.held.
type simBroker struct {
	s         *bsim
	id        int32
	up        bool
	net       netState
	incN      int
	epoch     int64 // this incarnation's acknowledged epoch, -1 before
	prevEpoch int64 // PreviousBrokerEpoch: the epoch of a clean shutdown, else -1
	fenced    bool
	shutdown  bool // asking for a controlled shutdown
	shutAt    time.Time
	view      *image.Image // the committed metadata fetched (kept across restarts, as on disk)
	ctrl      int32        // the controller it talks to, -1 to look for one

	reg, hb, alter                      *bReq
	alterParts                          []alterPart
	nextReg, nextHB, nextFetch, nextISR time.Time

	over   map[tpKey]pstate              // AlterPartition answers newer than the view
	pend   map[tpKey]*proposal           // as leader
	caught map[tpKey]map[int32]time.Time // as leader: when each follower last caught up
	ledAt  map[tpKey]int32               // the leader epoch caught was set up at

	incEpochs map[int]int64 // incarnation -> acknowledged epoch
	lastEpoch int64
	lossInc   int // the last incarnation whose crash lost writes, 0 for none
}

func newBroker(s *bsim, id int32) *simBroker {
	b := &simBroker{s: s, id: id, prevEpoch: -1, lastEpoch: -1, incEpochs: map[int]int64{}}
	b.start()
	return b
}

func (b *simBroker) incarnation() [16]byte {
	return [16]byte{0xb, byte(b.id), byte(b.incN >> 8), byte(b.incN), 0x5e, 0xed}
}

// lossyRegistration: the registration is of an incarnation no later than
// a crash that lost writes; until an incarnation started since registers,
// the controller cannot know.
func (b *simBroker) lossyRegistration(rb *image.Broker) bool {
	return int(rb.IncarnationID[2])<<8|int(rb.IncarnationID[3]) <= b.lossInc
}

// start is a new process: a new incarnation, nothing in memory but the
// metadata on disk.
func (b *simBroker) start() {
	s := b.s
	if b.incN > 0 {
		s.st.restarts++
		s.event("broker %d restarts (incarnation %d, previous epoch %d)", b.id, b.incN+1, b.prevEpoch)
	}
	b.up, b.incN, b.epoch, b.fenced, b.shutdown, b.ctrl = true, b.incN+1, -1, true, false, -1
	b.reg, b.hb, b.alter, b.alterParts = nil, nil, nil, nil
	b.nextReg, b.nextFetch, b.nextISR = s.now, s.now, s.now
	b.over, b.pend, b.caught, b.ledAt = map[tpKey]pstate{}, map[tpKey]*proposal{}, map[tpKey]map[int32]time.Time{}, map[tpKey]int32{}
}

// stop ends the process; a clean stop lets the next incarnation say so. A
// crash may lose the newest writes of each partition (a Kafka broker
// acknowledges before its log is flushed): the incarnation is then lossy,
// and the controller must not let it lead without an unclean election
// once it knows (bsimChecker.afterEvent).
func (b *simBroker) stop(clean bool) {
	s := b.s
	b.up = false
	b.prevEpoch = -1
	if clean {
		if b.epoch >= 0 {
			b.prevEpoch = b.epoch
		}
		return
	}
	for _, k := range sortedKeys(s.held) {
		if h := s.heldOf(k, b.id); h > 0 && s.r.IntN(2) == 0 {
			s.setHeld(k, b.id, max(0, h-1-s.r.IntN(2)))
			b.lossInc = b.incN
		}
	}
}

// serving: this incarnation's registration was acknowledged and the
// broker has fetched metadata holding it, so it serves partitions.
func (b *simBroker) serving() bool {
	if !b.up || b.epoch < 0 || b.view == nil {
		return false
	}
	rb, ok := b.view.Broker(b.id)
	return ok && rb.Epoch == b.epoch
}

func partitionOf(im *image.Image, k tpKey) (image.Partition, bool) {
	if im == nil {
		return image.Partition{}, false
	}
	return im.Partition(k.topic, k.part)
}

// local is the partition as the broker knows it.
func (b *simBroker) local(k tpKey) (pstate, bool) {
	p, ok := partitionOf(b.view, k)
	if !ok {
		return pstate{}, false
	}
	st := pstate{leader: p.Leader(), leaderEpoch: p.LeaderEpoch(), partitionEpoch: p.PartitionEpoch(),
		isr: p.ISR(), replicas: p.Replicas(), lrs: p.LeaderRecoveryState()}
	if o, ok := b.over[k]; ok && o.partitionEpoch > st.partitionEpoch {
		o.replicas = st.replicas
		return o, true
	}
	return st, true
}

// led lists the partitions the broker leads as it knows them.
func (b *simBroker) led() []tpKey {
	var out []tpKey
	if b.view == nil {
		return nil
	}
	for tp := range b.view.PartitionsLedBy(b.id) {
		k := tpKey{tp.TopicID, tp.Partition}
		if l, ok := b.local(k); ok && l.leader == b.id {
			out = append(out, k)
		}
	}
	return out
}

// setView takes newer committed metadata: answers and proposals it passed
// are dropped, as a Kafka broker resets a partition's state on a newer
// partition epoch.
func (b *simBroker) setView(im *image.Image) {
	b.view = im
	for _, k := range sortedKeys(b.over) {
		if p, ok := partitionOf(im, k); !ok || p.PartitionEpoch() >= b.over[k].partitionEpoch {
			delete(b.over, k)
		}
	}
	for _, k := range sortedKeys(b.pend) {
		pr := b.pend[k]
		if p, ok := partitionOf(im, k); !ok || p.PartitionEpoch() > pr.partitionEpoch || p.LeaderEpoch() > pr.leaderEpoch {
			delete(b.pend, k)
		}
	}
}

// tick is the broker's periodic work at the current time.
func (b *simBroker) tick() {
	s := b.s
	if !b.up {
		return
	}
	if b.shutdown && s.now.Sub(b.shutAt) > maxShutdown {
		s.event("broker %d gives up waiting for its controlled shutdown and stops", b.id)
		s.st.forcedShutdowns++
		b.stop(true)
		return
	}
	if !s.now.Before(b.nextFetch) {
		b.fetch()
		b.nextFetch = s.now.Add(time.Duration(2+s.r.IntN(6)) * simTick)
	}
	switch {
	case b.epoch < 0:
		if b.reg == nil && !s.now.Before(b.nextReg) {
			b.register()
		}
	case b.hb == nil && !s.now.Before(b.nextHB):
		b.heartbeat()
	}
	if b.alter == nil && !s.now.Before(b.nextISR) {
		b.maintainISR()
		b.nextISR = s.now.Add(time.Duration(3+s.r.IntN(5)) * simTick)
	}
}

// fetch reads the committed metadata of a controller node (any: each
// holds a prefix of the same log); the broker's offset never goes back.
func (b *simBroker) fetch() {
	s := b.s
	if b.net != netOK {
		return
	}
	var up []int32
	for id := int32(1); id <= 3; id++ {
		if s.c.Env.Driver(id) != nil {
			up = append(up, id)
		}
	}
	if len(up) == 0 {
		return
	}
	im := s.c.App(up[s.r.IntN(len(up))]).Image()
	if _, ok := im.MetadataVersion(); !ok {
		return
	}
	if b.view == nil || im.Provenance().Offset > b.view.Provenance().Offset {
		b.setView(im)
	}
}

// controller is where the broker sends its requests.
func (b *simBroker) controller() int32 {
	s := b.s
	if b.ctrl < 0 || s.c.Env.Driver(b.ctrl) == nil {
		b.ctrl = s.active()
		if b.ctrl < 0 {
			b.ctrl = int32(1 + s.r.IntN(3))
		}
	}
	return b.ctrl
}

func (b *simBroker) register() {
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.Version = 4
	req.BrokerID, req.ClusterID, req.IncarnationID = b.id, "test-cluster", b.incarnation()
	req.LogDirs = [][16]byte{{0xd, byte(b.id), 0xd1}}
	req.PreviousBrokerEpoch = b.prevEpoch
	if b.id%2 == 0 {
		rack := fmt.Sprintf("rack%d", b.id%3)
		req.Rack = &rack
	}
	l := kmsg.NewBrokerRegistrationRequestListener()
	l.Name, l.Host, l.Port = "PLAINTEXT", fmt.Sprintf("broker%d", b.id), 9092
	req.Listeners = append(req.Listeners, l)
	for _, r := range features.Supported() {
		f := kmsg.NewBrokerRegistrationRequestFeature()
		f.Name, f.MinSupportedVersion, f.MaxSupportedVersion = r.Name, r.Min, r.Max
		req.Features = append(req.Features, f)
	}
	b.reg = b.s.send(b, b.controller(), req)
}

func (b *simBroker) heartbeat() {
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.Version = 1
	req.BrokerID, req.BrokerEpoch = b.id, b.epoch
	req.CurrentMetadataOffset = -1
	if b.view != nil {
		req.CurrentMetadataOffset = b.view.Provenance().Offset
	}
	req.WantFence = !b.serving() // Kafka's broker asks to stay fenced until it caught up
	req.WantShutdown = b.shutdown
	if !b.s.calm && b.s.r.IntN(20) == 0 {
		// It waited behind other requests; past the deadline it is
		// answered REQUEST_TIMED_OUT.
		b.s.late = time.Duration(b.s.r.IntN(20)) * simTick
	}
	b.hb = b.s.send(b, b.controller(), req)
}

// eligible is what a Kafka leader checks before adding a follower to the
// ISR: registered at the epoch it fetches with, unfenced, not shutting down.
func (b *simBroker) eligible(r int32) bool {
	rb, ok := b.view.Broker(r)
	return ok && !rb.Fenced && !rb.InControlledShutdown && rb.Epoch == b.s.brokers[r-1].epoch
}

// maintainISR is the leader's ISR work: a RECOVERING partition is
// declared recovered; followers that have not caught up for lagMax leave
// the ISR; a caught-up eligible follower joins it (now and then an
// ineligible one, for the controller to refuse). Proposals that lost
// their answer are sent again. All go in one AlterPartition.
func (b *simBroker) maintainISR() {
	s := b.s
	if !b.serving() {
		return
	}
	var parts []alterPart
	for _, k := range b.led() {
		ll, _ := b.local(k)
		if pr := b.pend[k]; pr != nil {
			if !pr.sent && !pr.dead {
				parts = append(parts, alterPart{k, pr})
			}
			continue
		}
		b.initCaught(k, ll)
		var next []int32
		kind := byte('r')
		if ll.lrs == 1 {
			next = []int32{b.id}
		} else {
			var lag []int32
			for _, m := range ll.isr {
				if m != b.id && s.now.Sub(b.caught[k][m]) > lagMax {
					lag = append(lag, m)
				}
			}
			if len(lag) > 0 {
				next, kind = slices.DeleteFunc(slices.Clone(ll.isr), func(m int32) bool { return slices.Contains(lag, m) }), 's'
			} else {
				for _, r := range ll.replicas {
					if !slices.Contains(ll.isr, r) && s.canReplicate(b, s.brokers[r-1], k, ll) && (b.eligible(r) || s.r.IntN(10) == 0) {
						// It fetches in this leader epoch: it has caught up.
						s.setHeld(k, r, s.heldOf(k, b.id))
						next, kind = append(slices.Clone(ll.isr), r), 'e'
						break
					}
				}
			}
		}
		if next == nil {
			continue
		}
		pr := &proposal{isr: next, leaderEpoch: ll.leaderEpoch, partitionEpoch: ll.partitionEpoch, kind: kind}
		b.pend[k] = pr
		parts = append(parts, alterPart{k, pr})
	}
	if len(parts) == 0 {
		return
	}
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	req.BrokerID, req.BrokerEpoch = b.id, b.epoch
	for _, ap := range parts {
		ap.pr.sent = true
		if n := len(req.Topics); n == 0 || req.Topics[n-1].TopicID != ap.k.topic {
			t := kmsg.NewAlterPartitionRequestTopic()
			t.TopicID = ap.k.topic
			req.Topics = append(req.Topics, t)
		}
		p := kmsg.NewAlterPartitionRequestTopicPartition()
		p.Partition, p.LeaderEpoch, p.PartitionEpoch, p.LeaderRecoveryState = ap.k.part, ap.pr.leaderEpoch, ap.pr.partitionEpoch, ap.pr.lrs
		for _, m := range ap.pr.isr {
			st := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			st.BrokerID, st.BrokerEpoch = m, -1
			if f := s.brokers[m-1]; f.up && f.epoch >= 0 {
				st.BrokerEpoch = f.epoch // as the follower's fetches carry it (KIP-903)
			}
			p.NewEpochISR = append(p.NewEpochISR, st)
		}
		req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, p)
	}
	s.st.alterSent++
	b.alterParts = parts
	b.alter = s.send(b, b.controller(), req)
}

// initCaught starts the followers' catch-up clocks when the broker first
// acts as leader in a leader epoch (Kafka counts the ISR as caught up
// then). Its metadata may be stale: whether the current leader holds
// every acknowledged write is checked on the newest image
// (bsimChecker.afterEvent).
func (b *simBroker) initCaught(k tpKey, ll pstate) {
	if e, ok := b.ledAt[k]; ok && e == ll.leaderEpoch {
		return
	}
	s := b.s
	b.ledAt[k] = ll.leaderEpoch
	b.caught[k] = map[int32]time.Time{}
	for _, m := range ll.isr {
		b.caught[k][m] = s.now
	}
}

// answer handles the answer (or the timeout) of one of its requests.
func (b *simBroker) answer(q *bReq, a bAnswer) {
	s := b.s
	if a.resp == nil {
		// Refused whole, lost or timed out: look for the controller again.
		b.ctrl = -1
		if a.code == kerr.NotController.Code {
			s.st.notController++
		}
	}
	switch q.req.(type) {
	case *kmsg.BrokerRegistrationRequest:
		b.reg = nil
		b.nextReg = s.now.Add(200 * time.Millisecond)
		if a.resp == nil {
			if a.code == kerr.DuplicateBrokerRegistration.Code {
				s.st.staleRegistrations++
				b.nextReg = s.now.Add(time.Second)
			}
			return
		}
		r := a.resp.(*kmsg.BrokerRegistrationResponse)
		if r.ErrorCode != 0 {
			s.fail("broker %d: registration answered %v", b.id, kerr.ErrorForCode(r.ErrorCode))
			return
		}
		b.registered(r.BrokerEpoch)
	case *kmsg.BrokerHeartbeatRequest:
		b.hb = nil
		b.nextHB = s.now.Add(200 * time.Millisecond)
		if a.resp == nil {
			return
		}
		r := a.resp.(*kmsg.BrokerHeartbeatResponse)
		if r.ErrorCode != 0 {
			return
		}
		b.nextHB = s.now.Add(hbInterval)
		if b.fenced != r.IsFenced {
			s.event("broker %d (epoch %d) is told fenced=%v", b.id, b.epoch, r.IsFenced)
			if !r.IsFenced {
				s.st.unfences++
			}
		}
		b.fenced = r.IsFenced
		if r.ShouldShutdown {
			if !b.shutdown { // Kafka's broker cannot take its request back
				s.fail("broker %d told to shut down without asking", b.id)
				return
			}
			if im := s.latest(); im != nil {
				for tp := range im.PartitionsLedBy(b.id) {
					s.fail("broker %d told to shut down while it leads %s at offset %d", b.id, tpKey{tp.TopicID, tp.Partition}, im.Provenance().Offset)
				}
			}
			s.event("broker %d completes its controlled shutdown", b.id)
			s.st.shutdowns++
			b.stop(true)
		}
	case *kmsg.AlterPartitionRequest:
		b.alterAnswer(a)
	}
}

// registered takes the epoch of an acknowledged registration: one epoch an
// incarnation, growing from one incarnation to the next.
func (b *simBroker) registered(epoch int64) {
	s := b.s
	if e, ok := b.incEpochs[b.incN]; ok && e != epoch {
		s.fail("broker %d incarnation %d registered again with epoch %d, first %d", b.id, b.incN, epoch, e)
		return
	}
	if _, ok := b.incEpochs[b.incN]; !ok && epoch <= b.lastEpoch {
		s.fail("broker %d incarnation %d got epoch %d, not above %d of an earlier incarnation", b.id, b.incN, epoch, b.lastEpoch)
		return
	}
	if e, ok := s.chk.incs[b.incarnation()]; !ok || e != epoch {
		s.fail("broker %d incarnation %d registered with epoch %d; the committed images have %d (%v)", b.id, b.incN, epoch, e, ok)
		return
	}
	b.incEpochs[b.incN], b.lastEpoch, b.epoch = epoch, max(b.lastEpoch, epoch), epoch
	b.nextHB = s.now.Add(simTick)
	s.st.registrations++
	s.event("broker %d incarnation %d registered with epoch %d", b.id, b.incN, epoch)
}

// alterAnswer applies an AlterPartition answer as a Kafka leader does:
// success takes the answered state; INELIGIBLE_REPLICA reverts to the
// committed state; NOT_CONTROLLER and lost answers send again; an answer
// saying the controller knows a newer state waits for the metadata.
func (b *simBroker) alterAnswer(a bAnswer) {
	s := b.s
	parts := b.alterParts
	b.alter, b.alterParts = nil, nil
	b.nextISR = s.now.Add(200 * time.Millisecond)
	var r *kmsg.AlterPartitionResponse
	if a.resp != nil {
		r = a.resp.(*kmsg.AlterPartitionResponse)
	}
	if r == nil || r.ErrorCode != 0 {
		for _, ap := range parts {
			ap.pr.sent = false
		}
		if r != nil && r.ErrorCode == kerr.NotController.Code {
			b.ctrl = -1
		}
		return
	}
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			k := tpKey{rt.TopidID, rp.Partition}
			i := slices.IndexFunc(parts, func(ap alterPart) bool { return ap.k == k })
			if i < 0 {
				s.fail("broker %d: AlterPartition answered partition %s it did not ask about", b.id, k)
				return
			}
			asked := parts[i].pr
			current := b.pend[k] == asked
			switch rp.ErrorCode {
			case 0:
				s.st.alterOK++
				if rp.LeaderID != b.id || !slices.Equal(rp.ISR, asked.isr) || rp.LeaderRecoveryState != asked.lrs {
					s.fail("broker %d asked %s ISR %v recovery %d and was answered leader %d ISR %v recovery %d",
						b.id, k, asked.isr, asked.lrs, rp.LeaderID, rp.ISR, rp.LeaderRecoveryState)
					return
				}
				st := pstate{leader: rp.LeaderID, leaderEpoch: rp.LeaderEpoch, partitionEpoch: rp.PartitionEpoch, isr: rp.ISR, lrs: rp.LeaderRecoveryState}
				if l, ok := b.local(k); ok && st.partitionEpoch > l.partitionEpoch {
					b.over[k] = st
				}
				if current {
					delete(b.pend, k)
				}
				switch asked.kind {
				case 's':
					s.st.isrShrinks++
				case 'e':
					s.st.isrExpands++
				default:
					s.st.recovered++
				}
				s.event("broker %d: %s ISR %v recovery %d at partition epoch %d", b.id, k, rp.ISR, rp.LeaderRecoveryState, rp.PartitionEpoch)
			case kerr.IneligibleReplica.Code:
				s.st.alterRefused++
				if current {
					delete(b.pend, k)
				}
			case kerr.NotController.Code:
				asked.sent = false
				b.ctrl = -1
			case kerr.FencedLeaderEpoch.Code, kerr.InvalidUpdateVersion.Code, kerr.UnknownTopicID.Code, kerr.UnknownTopicOrPartition.Code:
				s.st.alterRefused++
				asked.dead = true
			default:
				s.fail("broker %d: AlterPartition of %s ISR %v at epochs %d/%d answered %v",
					b.id, k, asked.isr, asked.leaderEpoch, asked.partitionEpoch, kerr.ErrorForCode(rp.ErrorCode))
				return
			}
		}
	}
	for _, ap := range parts {
		if ap.pr.sent && !ap.pr.dead && b.pend[ap.k] == ap.pr {
			s.fail("broker %d: AlterPartition answer left out %s", b.id, ap.k)
			return
		}
	}
}

// minISR is the topic's min.insync.replicas as the leader's metadata has
// it.
func (b *simBroker) minISR(k tpKey) int {
	t, ok := b.view.Topic(k.topic)
	if !ok {
		return b.s.minISR
	}
	v, ok := b.view.Config(2, t.Name(), "min.insync.replicas")
	if !ok {
		v, ok = b.view.Config(4, "", "min.insync.replicas")
	}
	n := 0
	if _, err := fmt.Sscan(v, &n); !ok || err != nil {
		return b.s.minISR
	}
	return n
}

func sortedKeys[V any](m map[tpKey]V) []tpKey {
	out := make([]tpKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b tpKey) int {
		if c := slices.Compare(a.topic[:], b.topic[:]); c != 0 {
			return c
		}
		return int(a.part - b.part)
	})
	return out
}
