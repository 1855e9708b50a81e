package controller_test

// The world around the brokers: the write model (followers copying their
// leaders' logs, acks=all writes), broker faults, and the admin.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/image"
)

// canReplicate: follower f fetches from leader l in l's leader epoch (a
// Kafka leader refuses fetches at another epoch), both running and on the
// network.
func (s *bsim) canReplicate(l, f *simBroker, k tpKey, ll pstate) bool {
	if l == f || !l.serving() || !f.serving() || l.net == netIsolated || f.net == netIsolated {
		return false
	}
	lf, ok := f.local(k)
	return ok && lf.leader == l.id && lf.leaderEpoch == ll.leaderEpoch
}

func (s *bsim) heldOf(k tpKey, id int32) int { return s.held[k][id] }

func (s *bsim) setHeld(k tpKey, id int32, n int) {
	if s.held[k] == nil {
		s.held[k] = map[int32]int{}
	}
	s.held[k][id] = n
}

// replicate lets every follower that fetches from its leader copy the
// leader's log (followers catch up at once in this model).
func (s *bsim) replicate() {
	for _, l := range s.brokers {
		if !l.serving() || l.net == netIsolated {
			continue
		}
		for _, k := range l.led() {
			ll, _ := l.local(k)
			l.initCaught(k, ll)
			for _, r := range ll.replicas {
				if f := s.brokers[r-1]; s.canReplicate(l, f, k, ll) {
					s.setHeld(k, r, s.heldOf(k, l.id)) // a follower's log becomes its leader's
					l.caught[k][r] = s.now
				}
			}
		}
	}
}

// produce acknowledges a write (acks=all) on a random partition if one of
// the brokers that think they lead it can: RECOVERED, an ISR of at least
// min.insync.replicas, and every member of its maximal ISR fetching from
// it. Those members then hold the write.
func (s *bsim) produce() {
	im := s.latest()
	if im == nil {
		return
	}
	var all []tpKey
	for t := range im.Topics() {
		for pid := range t.Partitions() {
			all = append(all, tpKey{t.ID(), pid})
		}
	}
	if len(all) == 0 {
		return
	}
	k := all[s.r.IntN(len(all))]
	var leaders []*simBroker
	for _, b := range s.brokers {
		if l, ok := b.local(k); ok && l.leader == b.id && b.serving() && b.net != netIsolated {
			leaders = append(leaders, b)
		}
	}
	if len(leaders) == 0 {
		s.st.refusedWrites++
		return
	}
	l := leaders[s.r.IntN(len(leaders))]
	ll, _ := l.local(k)
	maximal := slices.Clone(ll.isr)
	if s.sloppy {
		maximal = []int32{l.id}
	}
	if pr := l.pend[k]; pr != nil && !s.sloppy {
		for _, m := range pr.isr {
			if !slices.Contains(maximal, m) {
				maximal = append(maximal, m)
			}
		}
	}
	ok := ll.lrs == 0 && len(ll.isr) >= l.minISR(k)
	for _, m := range maximal {
		if ok && m != l.id && !s.canReplicate(l, s.brokers[m-1], k, ll) {
			ok = false
		}
	}
	if !ok {
		s.st.refusedWrites++
		return
	}
	if h := s.heldOf(k, l.id); h < s.acked[k] {
		s.fail("broker %d acknowledges a write to %s at leader epoch %d holding %d writes; %d were acknowledged",
			l.id, k, ll.leaderEpoch, h, s.acked[k])
		return
	}
	s.acked[k]++
	for _, m := range maximal {
		s.setHeld(k, m, s.acked[k])
	}
	s.st.writes++
	s.event("broker %d acknowledges write %d to %s at leader epoch %d, ISR %v, maximal ISR %v", l.id, s.acked[k], k, ll.leaderEpoch, ll.isr, maximal)
}

// brokerFault crashes, restarts, cuts off, heals or shuts down a broker,
// keeping at most maxBad impaired.
func (s *bsim) brokerFault() {
	var down, fine, cut, running []*simBroker
	for _, b := range s.brokers {
		switch {
		case !b.up:
			down = append(down, b)
		case b.net != netOK:
			cut = append(cut, b)
		default:
			fine = append(fine, b)
		}
		if b.up && !b.shutdown {
			running = append(running, b)
		}
	}
	bad := len(down) + len(cut)
	pick := func(bs []*simBroker) *simBroker { return bs[s.r.IntN(len(bs))] }
	var moves []func()
	if bad < s.maxBad && len(running) > 0 {
		moves = append(moves, func() {
			b := pick(running)
			s.event("broker %d (epoch %d) crashes", b.id, b.epoch)
			s.st.crashes++
			b.stop(false)
		}, func() {
			b := pick(running)
			if !b.serving() || b.net != netOK {
				return
			}
			s.event("broker %d (epoch %d) begins a controlled shutdown", b.id, b.epoch)
			b.shutdown, b.shutAt, b.nextHB = true, s.now, s.now
		})
	}
	if bad < s.maxBad && len(fine) > 0 {
		moves = append(moves, func() {
			b := pick(fine)
			b.net = netCutCtrl + netState(s.r.IntN(2))
			s.st.cuts++
			s.event("broker %d loses %s", b.id, map[netState]string{netCutCtrl: "the controllers", netIsolated: "the network"}[b.net])
		})
	}
	if len(down) > 0 {
		moves = append(moves, func() { pick(down).start() })
	}
	if len(cut) > 0 {
		moves = append(moves, func() {
			b := pick(cut)
			b.net = netOK
			s.event("broker %d is back on the network", b.id)
		})
	}
	if len(moves) > 0 {
		moves[s.r.IntN(len(moves))]()
	}
}

// The admin's requests: answered or not, they change nothing in the
// brokers; the images show what they did.

func (s *bsim) createTopic() {
	id := s.active()
	if id < 0 {
		return
	}
	s.topics++
	name := fmt.Sprintf("t%d", s.topics)
	if s.topics > 2 && s.r.IntN(4) == 0 {
		name = fmt.Sprintf("t%d", 1+s.r.IntN(s.topics-1)) // perhaps deleted: a new topic id
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 7, 30000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, int32(1+s.r.IntN(4)), 3
	if v := s.r.IntN(3); v > 0 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		val := fmt.Sprint(v)
		c.Name, c.Value = "min.insync.replicas", &val
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	s.event("admin creates %s (%d partitions) on controller %d", name, t.NumPartitions, id)
	s.send(nil, id, req)
}

// someTopic is a random topic of the newest image.
func (s *bsim) someTopic() (*image.Topic, bool) {
	var ts []*image.Topic
	if im := s.latest(); im != nil {
		for t := range im.Topics() {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil, false
	}
	return ts[s.r.IntN(len(ts))], true
}

func (s *bsim) deleteTopic() {
	id := s.active()
	t, ok := s.someTopic()
	if id < 0 || !ok {
		return
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	dt := kmsg.NewDeleteTopicsRequestTopic()
	name := t.Name()
	dt.Topic = &name
	req.Topics = append(req.Topics, dt)
	s.event("admin deletes %s on controller %d", name, id)
	s.send(nil, id, req)
}

func (s *bsim) createPartitions() {
	id := s.active()
	t, ok := s.someTopic()
	if id < 0 || !ok || t.PartitionCount() >= 8 {
		return
	}
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	ct := kmsg.NewCreatePartitionsRequestTopic()
	ct.Topic, ct.Count = t.Name(), int32(t.PartitionCount()+1+s.r.IntN(2))
	req.Topics = append(req.Topics, ct)
	s.event("admin grows %s to %d partitions on controller %d", t.Name(), ct.Count, id)
	s.send(nil, id, req)
}

// alterMinISR sets a topic's min.insync.replicas or removes it (the
// controller clears the topic's ELRs with it).
func (s *bsim) alterMinISR() {
	id := s.active()
	t, ok := s.someTopic()
	if id < 0 || !ok {
		return
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, t.Name()
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Op = "min.insync.replicas", kmsg.IncrementalAlterConfigOpDelete
	val := "the default"
	if v := s.r.IntN(3); v > 0 {
		val = fmt.Sprint(v)
		c.Op, c.Value = kmsg.IncrementalAlterConfigOpSet, &val
	}
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	s.event("admin sets min.insync.replicas of %s to %s on controller %d", t.Name(), val, id)
	s.send(nil, id, req)
}

// electPreferred asks for preferred leaders on every partition.
func (s *bsim) electPreferred() {
	id := s.active()
	if id < 0 {
		return
	}
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType, req.TimeoutMillis = 2, 0, 30000
	s.event("admin asks for preferred leaders on controller %d", id)
	s.send(nil, id, req)
}

// unregister removes a broker that is down and fenced, as an operator
// does for a broker gone for good (it registers anew if it comes back).
func (s *bsim) unregister() {
	id := s.active()
	im := s.latest()
	if id < 0 || im == nil {
		return
	}
	var gone []int32
	for _, b := range s.brokers {
		if rb, ok := im.Broker(b.id); ok && !b.up && rb.Fenced {
			gone = append(gone, b.id)
		}
	}
	if len(gone) == 0 {
		return
	}
	req := kmsg.NewPtrUnregisterBrokerRequest()
	req.BrokerID = gone[s.r.IntN(len(gone))]
	s.event("admin unregisters broker %d on controller %d", req.BrokerID, id)
	s.send(nil, id, req)
}

func (s *bsim) adminAnswer(q *bReq, a bAnswer) {
	if a.resp == nil {
		s.st.adminRefused++
		return
	}
	var codes []int16
	switch r := a.resp.(type) {
	case *kmsg.CreateTopicsResponse:
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				s.st.created++
			}
			codes = append(codes, t.ErrorCode)
		}
	case *kmsg.DeleteTopicsResponse:
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				s.st.deleted++
			}
			codes = append(codes, t.ErrorCode)
		}
	case *kmsg.IncrementalAlterConfigsResponse:
		for _, r := range r.Resources {
			if r.ErrorCode == 0 {
				s.st.configs++
			}
			codes = append(codes, r.ErrorCode)
		}
	case *kmsg.ElectLeadersResponse:
		codes = append(codes, r.ErrorCode)
		s.st.preferred++
	case *kmsg.UnregisterBrokerResponse:
		if r.ErrorCode == 0 {
			s.st.unregistered++
		}
		codes = append(codes, r.ErrorCode)
	case *kmsg.CreatePartitionsResponse:
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				s.st.grown++
			}
			codes = append(codes, t.ErrorCode)
		}
	}
	for _, c := range codes {
		if c != 0 {
			s.st.adminRefused++
		}
	}
	s.event("admin: %s answered %v", kmsg.NameForKey(q.req.Key()), codes)
}
