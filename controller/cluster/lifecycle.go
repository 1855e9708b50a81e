package cluster

import (
	"iter"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/partitionchange"
	"github.com/kraftd/kraftd/controller/placement"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

// noBroker stands for "none" in leaderAndISR's broker arguments.
const noBroker int32 = -1

// leaderAndISR is ReplicationControlManager.generateLeaderAndIsrUpdates:
// for each partition, the ISR less remove and unclean, a leader among the
// acceptable brokers (active, or add, and never remove or unclean, with the
// replica's directory online), the topic's min ISR and unclean election, and
// unclean as an unclean-shutdown replica for the ELR. Partitions come from
// the working image; records of this operation are not replayed yet, as in
// Kafka.
func (m *Manager) leaderAndISR(im *image.Image, remove, add, unclean int32, parts iter.Seq[image.TopicPartition]) ([]Record, error) {
	mv, _ := im.MetadataVersion()
	acceptable := func(r int32) bool {
		return r != remove && r != unclean && (r == add || partitionchange.IsActive(im, r))
	}
	var out []Record
	for tp := range parts {
		t, ok := im.Topic(tp.TopicID)
		if !ok {
			continue
		}
		ip, ok := t.Partition(tp.Partition)
		if !ok {
			continue
		}
		p := partitionchange.FromImage(ip)
		b := partitionchange.New(p, partitionchange.Context{
			TopicID: tp.TopicID, PartitionID: tp.Partition, MetadataVersion: mv,
			MinISR: m.settings.minISR(im, t), ELR: im.ELREnabled(),
			Acceptable: partitionchange.Acceptor(im, p, acceptable),
			DefaultDir: func(r int32) uuid.UUID {
				br, _ := im.Broker(r)
				return placement.DefaultDir(br)
			},
		})
		if m.settings.unclean(im, t) {
			b.SetElection(partitionchange.Unclean)
		}
		if unclean != noBroker {
			b.SetUncleanShutdownReplicas([]int32{unclean})
		}
		b.SetTargetISR(slices.DeleteFunc(slices.Clone(p.ISR), func(r int32) bool { return r == remove || r == unclean }))
		rec, v, err := b.Build()
		if err != nil {
			// Kafka throws as well; the partition is one replay should not
			// have let in.
			return nil, unexpected("partition %v-%d: %v", tp.TopicID, tp.Partition, err)
		}
		if rec != nil {
			out = append(out, Record{rec, v})
		}
	}
	return out, nil
}

// concat runs the steps in order and joins their records.
func concat(steps ...func() ([]Record, error)) ([]Record, error) {
	var out []Record
	for _, step := range steps {
		recs, err := step()
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// shutdownRecords are the records of a broker's previous incarnation going
// away at its re-registration (handleBrokerShutdown): with ELR on and an
// unclean shutdown, the broker leaves ISRs and ELRs as an unclean-shutdown
// replica; otherwise it leaves the ISRs.
func (m *Manager) shutdownRecords(im *image.Image, id int32, clean bool) ([]Record, error) {
	if im.ELREnabled() && !clean {
		return concat(
			func() ([]Record, error) { return m.leaderAndISR(im, noBroker, noBroker, id, im.PartitionsInISR(id)) },
			func() ([]Record, error) { return m.leaderAndISR(im, noBroker, noBroker, id, im.PartitionsInELR(id)) })
	}
	return m.leaderAndISR(im, id, noBroker, noBroker, im.PartitionsInISR(id))
}

func changeRecord(id int32, epoch int64) *metadata.BrokerRegistrationChangeRecord {
	r := &metadata.BrokerRegistrationChangeRecord{}
	r.Default()
	r.BrokerId, r.BrokerEpoch = id, epoch
	return r
}

// fenceRecords (handleBrokerFenced): the broker leaves every ISR, then the
// fence record at its registered epoch.
func (m *Manager) fenceRecords(im *image.Image, b *image.Broker) ([]Record, error) {
	out, err := m.leaderAndISR(im, b.ID, noBroker, noBroker, im.PartitionsInISR(b.ID))
	r := changeRecord(b.ID, b.Epoch)
	r.Fenced = 1
	return append(out, Record{r, metadata.BrokerRegistrationChangeFencing}), err
}

// unfenceRecords (handleBrokerUnfenced): the unfence record first, then
// leaders for the leaderless partitions, the broker counting as active.
func (m *Manager) unfenceRecords(im *image.Image, id int32, epoch int64) ([]Record, error) {
	r := changeRecord(id, epoch)
	r.Fenced = -1
	out, err := m.leaderAndISR(im, noBroker, id, noBroker, im.LeaderlessPartitions())
	return append([]Record{{r, metadata.BrokerRegistrationChangeFencing}}, out...), err
}

// controlledShutdownRecords (handleBrokerInControlledShutdown): the
// in-controlled-shutdown record unless the registration has it already,
// then the broker leaves every ISR.
func (m *Manager) controlledShutdownRecords(im *image.Image, b *image.Broker, epoch int64) ([]Record, error) {
	var out []Record
	if !b.InControlledShutdown {
		r := changeRecord(b.ID, epoch)
		r.InControlledShutdown = 1
		out = append(out, Record{r, metadata.BrokerRegistrationChangeControlledShutdown})
	}
	more, err := m.leaderAndISR(im, b.ID, noBroker, noBroker, im.PartitionsInISR(b.ID))
	return append(out, more...), err
}

// Heartbeat decides a BrokerHeartbeat (ReplicationControlManager
// .processBrokerHeartbeat): the broker's next state, the records of the
// transition, then those of newly offline directories (from 3.7-IV2) and of
// changed cordoned directories (from 4.3-IV0), and the answer. The
// controller calls TrackHeartbeat when the request arrives, and Heartbeat
// when its turn comes; it must append the records at op.NextOffset, since a
// broker entering controlled shutdown may go once every active broker has
// caught up with the last of them.
func (m *Manager) Heartbeat(op Op, req *kmsg.BrokerHeartbeatRequest) (Result[kmsg.BrokerHeartbeatResponse], error) {
	var res Result[kmsg.BrokerHeartbeatResponse]
	im := op.Image
	id, epoch := req.BrokerID, req.BrokerEpoch
	b, ok := im.Broker(id)
	if !ok {
		// Kafka asks for the registration offset first, with its own message.
		return res, refuse(kerr.StaleBrokerEpoch.Code, "Receive a heartbeat from broker %d before registration", id)
	}
	if b.Epoch != epoch {
		return res, refuse(kerr.StaleBrokerEpoch.Code, "Expected broker epoch %d, but got broker epoch %d", b.Epoch, epoch)
	}
	mv, _ := im.MetadataVersion()
	cur := m.current(id)
	leads := func() bool {
		for range im.PartitionsLedBy(id) {
			return true
		}
		return false
	}
	next := m.next(id, cur, req.WantFence, req.WantShutdown, req.CurrentMetadataOffset, b.RegistrationOffset, leads)
	var err error
	if next != cur {
		switch next {
		case Fenced, ShutdownNow:
			res.Records, err = m.fenceRecords(im, b)
		case Unfenced:
			res.Records, err = m.unfenceRecords(im, id, epoch)
		case ControlledShutdown:
			res.Records, err = m.controlledShutdownRecords(im, b, epoch)
		}
	}
	if err != nil {
		return res, err
	}
	if m.sessions[id] == nil {
		m.register(id, b.Fenced)
	}
	m.touch(id, next.fenced(), req.CurrentMetadataOffset)
	if mv.Has(metadata.GateDirectoryAssignment) {
		recs, err := m.offlineDirRecords(im, b, epoch, req.OfflineLogDirs)
		if err != nil {
			return res, err
		}
		res.Records = append(res.Records, recs...)
	}
	if mv.Has(metadata.GateCordonedLogDirs) && req.CordonedLogDirs != nil && cordonedChanged(b.CordonedLogDirs, req.CordonedLogDirs) {
		r := changeRecord(id, epoch)
		r.CordonedLogDirs = slices.Clone(req.CordonedLogDirs)
		res.Records = append(res.Records, Record{r, metadata.BrokerRegistrationChangeCordonedLogDirs})
	}
	if next == ControlledShutdown {
		// Kafka stores the op's end offset once its records are appended.
		if s := m.sessions[id]; s.shutdownOffset < 0 {
			s.shutdownOffset = op.NextOffset + int64(len(res.Records)) - 1
		}
	}
	res.Response = kmsg.NewBrokerHeartbeatResponse()
	res.Response.Version = req.Version
	res.Response.IsCaughtUp = req.CurrentMetadataOffset >= b.RegistrationOffset
	res.Response.IsFenced = next.fenced()
	res.Response.ShouldShutdown = next == ShutdownNow
	return res, nil
}

// ExpiredHeartbeat is what Kafka does with a heartbeat that waited past its
// deadline (half broker.heartbeat.interval.ms) before its turn came
// (processExpiredBrokerHeartbeat): a registered broker at its epoch has its
// session touched with the registration's fenced flag; the answer is
// REQUEST_TIMED_OUT either way.
func (m *Manager) ExpiredHeartbeat(im *image.Image, req *kmsg.BrokerHeartbeatRequest) error {
	if b, ok := im.Broker(req.BrokerID); ok && b.Epoch == req.BrokerEpoch && m.sessions[b.ID] != nil {
		m.touch(b.ID, b.Fenced, req.CurrentMetadataOffset)
	}
	return refuse(kerr.RequestTimedOut.Code, "The heartbeat from broker %d waited too long for the controller", req.BrokerID)
}

// offlineDirRecords (handleDirectoriesOffline): for each registered
// directory the broker reports offline, the broker leaves the ISRs of the
// partitions it holds there, then one change lists the directories still
// online. kraftd finds a directory's partitions among the broker's ISR
// entries (Kafka keeps an index of every replica's directory; a replica
// outside the ISR changes nothing there).
func (m *Manager) offlineDirRecords(im *image.Image, b *image.Broker, epoch int64, offline [][16]byte) ([]Record, error) {
	var gone, online []uuid.UUID
	for _, d := range b.LogDirs {
		if slices.Contains(offline, [16]byte(d)) {
			gone = append(gone, d)
		} else {
			online = append(online, d)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	var out []Record
	for _, d := range gone {
		parts := func(yield func(image.TopicPartition) bool) {
			for tp := range im.PartitionsInISR(b.ID) {
				p, ok := im.Partition(tp.TopicID, tp.Partition)
				if !ok {
					continue
				}
				dirs := p.Directories()
				i := slices.Index(p.Replicas(), b.ID)
				if i >= 0 && i < len(dirs) && dirs[i] == d && !yield(tp) {
					return
				}
			}
		}
		recs, err := m.leaderAndISR(im, b.ID, noBroker, noBroker, parts)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	r := changeRecord(b.ID, epoch)
	r.LogDirs = make([][16]byte, len(online))
	for i, d := range online {
		r.LogDirs[i] = d
	}
	return append(out, Record{r, metadata.BrokerRegistrationChangeOfflineLogDirs}), nil
}

// cordonedChanged is BrokerRegistration.cordonedDirChanged: the stored list
// is null, or the two differ as sets.
func cordonedChanged(stored []uuid.UUID, reported [][16]byte) bool {
	if stored == nil {
		return true
	}
	a := map[[16]byte]bool{}
	for _, d := range stored {
		a[d] = true
	}
	b := map[[16]byte]bool{}
	for _, d := range reported {
		b[d] = true
	}
	if len(a) != len(b) {
		return true
	}
	for d := range a {
		if !b[d] {
			return true
		}
	}
	return false
}

// FenceStaleBroker is one run of the stale-broker task
// (maybeFenceOneStaleBroker): it takes one expired session out of the
// tracker (ExpireSession) and, if it is the broker's current epoch, fences
// the broker. again
// says whether to run once more at once (an entry was taken out, fenced or
// not).
func (m *Manager) FenceStaleBroker(op Op) (records []Record, again bool, err error) {
	id, epoch, ok := m.ExpireSession(op.Now)
	if !ok {
		return nil, false, nil
	}
	k := contactKey{id, epoch}
	b, registered := op.Image.Broker(k.id)
	switch {
	case !registered:
		m.remove(k.id)
		return nil, true, nil
	case b.Epoch != k.epoch:
		return nil, true, nil
	}
	if records, err = m.fenceRecords(op.Image, b); err != nil {
		return nil, true, err
	}
	m.fence(k.id)
	return records, true, nil
}

// maxRecords is the most records Kafka lets an unregistration write (a
// BoundedList of 10000); more fail the operation with POLICY_VIOLATION.
const maxRecords = 10000

// UnregisterBroker decides an UnregisterBroker (handleBrokerUnregistered):
// the broker leaves every ISR, then every ELR, then its registration goes.
func (m *Manager) UnregisterBroker(op Op, id int32) (Result[struct{}], error) {
	var res Result[struct{}]
	im := op.Image
	b, ok := im.Broker(id)
	if !ok {
		return res, refuse(kerr.BrokerIDNotRegistered.Code, "Broker ID %d is not currently registered", id)
	}
	recs, err := concat(
		func() ([]Record, error) { return m.leaderAndISR(im, id, noBroker, noBroker, im.PartitionsInISR(id)) },
		func() ([]Record, error) { return m.leaderAndISR(im, id, noBroker, noBroker, im.PartitionsInELR(id)) })
	if err != nil {
		return res, err
	}
	if len(recs)+1 > maxRecords {
		return res, refuse(kerr.PolicyViolation.Code, "Unable to perform excessively large batch operation.")
	}
	res.Records = recs
	r := &metadata.UnregisterBrokerRecord{}
	r.Default()
	r.BrokerId, r.BrokerEpoch = id, b.Epoch
	res.Records = append(res.Records, Record{r, 0})
	return res, nil
}
