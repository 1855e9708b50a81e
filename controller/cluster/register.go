package cluster

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/controller/internal/jvmorder"
	"github.com/kraftd/kraftd/image"
	"github.com/kraftd/kraftd/protocol/metadata"
	"github.com/kraftd/kraftd/uuid"
)

const (
	metadataVersionFeature = "metadata.version"
	kraftVersionFeature    = "kraft.version"
)

// reservedDir is DirectoryId.reserved: the high half zero and the low half,
// a signed long, below 100 (so a low half with its top bit set counts too).
func reservedDir(d [16]byte) bool {
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(d[i])
		lo = lo<<8 | uint64(d[8+i])
	}
	return hi == 0 && int64(lo) < 100
}

// RegisterBroker decides a BrokerRegistration (ClusterControlManager
// .registerBroker), refusing it with Kafka 4.4.0's codes and messages, in
// its order. The broker epoch of a new incarnation is op.NextOffset; a
// re-sent registration of the same incarnation keeps its epoch, fenced and
// controlled-shutdown flags. The RegisterBrokerRecord comes last, after the
// PartitionChangeRecords that clean up the previous incarnation. A refused
// registration is answered with the code and broker epoch -1.
func (m *Manager) RegisterBroker(op Op, req *kmsg.BrokerRegistrationRequest) (Result[kmsg.BrokerRegistrationResponse], error) {
	var res Result[kmsg.BrokerRegistrationResponse]
	im := op.Image
	mv, ok := im.MetadataVersion()
	if !ok {
		return res, refuse(kerr.UnknownServerError.Code, "metadata.version is not finalized")
	}
	if req.ClusterID != m.settings.ClusterID {
		return res, refuse(kerr.InconsistentClusterID.Code, "Expected cluster ID %s, but got cluster ID %s", m.settings.ClusterID, req.ClusterID)
	}
	id := req.BrokerID
	existing, hadOne := im.Broker(id)
	storedEpoch := int64(-2)
	if hadOne {
		storedEpoch = existing.Epoch
		if m.hasValidSession(id, existing.Epoch, op.Now) && req.IncarnationID != existing.IncarnationID {
			return res, refuse(kerr.DuplicateBrokerRegistration.Code, "Another broker is registered with that broker id. "+
				"If the broker was recently restarted this should self-resolve once the heartbeat manager expires the broker's session.")
		}
	}
	if req.IsMigratingZkBroker {
		return res, refuse(kerr.BrokerIDNotRegistered.Code, "Controller does not support registering ZK brokers.")
	}
	if mv.Has(metadata.GateDirectoryAssignment) {
		if err := checkDirs(im, id, req.LogDirs); err != nil {
			return res, err
		}
	}
	eps, err := endpoints(req.Listeners)
	if err != nil {
		return res, err
	}

	rec := &metadata.RegisterBrokerRecord{}
	rec.Default()
	rec.BrokerId, rec.IncarnationId, rec.Rack, rec.EndPoints = id, req.IncarnationID, req.Rack, eps
	rec.IsMigratingZkBroker = req.IsMigratingZkBroker
	if err := m.checkFeatures(op, mv, req.Features, rec); err != nil {
		return res, err
	}
	if mv.Has(metadata.GateDirectoryAssignment) {
		rec.LogDirs = slices.Clone(req.LogDirs)
	}

	newIncarnation := !hadOne || req.IncarnationID != existing.IncarnationID
	if newIncarnation {
		clean := op.APIVersion >= 3 && storedEpoch == req.PreviousBrokerEpoch
		recs, err := m.shutdownRecords(im, id, clean)
		if err != nil {
			return res, err
		}
		res.Records = recs
		rec.BrokerEpoch = op.NextOffset
	} else {
		rec.Fenced, rec.InControlledShutdown, rec.BrokerEpoch = existing.Fenced, existing.InControlledShutdown, existing.Epoch
	}
	version, _ := mv.RecordVersion(metadata.RegisterBrokerRecordAPIKey)
	res.Records = append(res.Records, Record{rec, version})
	if newIncarnation {
		m.remove(id)
	}
	m.register(id, rec.Fenced)
	res.Response = kmsg.NewBrokerRegistrationResponse()
	res.Response.Version = req.Version
	res.Response.BrokerEpoch = rec.BrokerEpoch
	return res, nil
}

// checkDirs is the directory check of a registration from 3.7-IV2.
func checkDirs(im *image.Image, id int32, dirs [][16]byte) error {
	if len(dirs) == 0 {
		return refuse(kerr.InvalidRegistration.Code, "No directories specified in request")
	}
	if slices.ContainsFunc(dirs, reservedDir) {
		return refuse(kerr.InvalidRegistration.Code, "Reserved directory ID in request")
	}
	seen := make(map[[16]byte]bool, len(dirs))
	for _, d := range dirs {
		if seen[d] {
			return refuse(kerr.InvalidRegistration.Code, "Duplicate directory ID in request")
		}
		seen[d] = true
	}
	for _, d := range dirs {
		if owner, ok := im.DirectoryOwner(d); ok && owner != id {
			return refuse(kerr.InvalidRegistration.Code, "Broker %d is already registered with directory %s", owner, uuid.UUID(d))
		}
	}
	return nil
}

// endpoints turns the listeners into the record's endpoints as Kafka's
// ListenerInfo does: keyed by name (a repeated name keeps its first place
// and its last value), every security protocol known, then each endpoint's
// port and host serializable. Kafka fails these with a plain exception, so
// the code is UNKNOWN_SERVER_ERROR.
func endpoints(ls []kmsg.BrokerRegistrationRequestListener) ([]metadata.RegisterBrokerRecordBrokerEndpoint, error) {
	var out []metadata.RegisterBrokerRecordBrokerEndpoint
	at := map[string]int{}
	for _, l := range ls {
		if l.SecurityProtocol < 0 || l.SecurityProtocol > 3 {
			return nil, unexpected("Unknown security protocol %d in listener %s", l.SecurityProtocol, l.Name)
		}
		e := metadata.RegisterBrokerRecordBrokerEndpoint{Name: l.Name, Host: l.Host, Port: l.Port, SecurityProtocol: l.SecurityProtocol}
		if i, ok := at[l.Name]; ok {
			out[i] = e
			continue
		}
		at[l.Name] = len(out)
		out = append(out, e)
	}
	for _, e := range out {
		if e.Port == 0 {
			return nil, unexpected("Cannot serialize ephemeral port 0 in ListenerInfo.")
		}
		if trimmedEmpty(e.Host) {
			return nil, unexpected("Cannot serialize empty host in ListenerInfo.")
		}
	}
	if out == nil {
		out = []metadata.RegisterBrokerRecordBrokerEndpoint{}
	}
	return out, nil
}

// checkFeatures checks the broker's feature ranges against the finalized
// levels (kraft.version included) and copies them into rec, as Kafka's
// processRegistrationFeature: each requested feature's range must hold its
// finalized level (0 when not finalized); metadata.version must be among
// them; every finalized feature above 0 it does not name must allow 0.
func (m *Manager) checkFeatures(op Op, mv metadata.Level, fs []kmsg.BrokerRegistrationRequestFeature, rec *metadata.RegisterBrokerRecord) error {
	finalized := map[string]int16{metadataVersionFeature: int16(mv), kraftVersionFeature: op.KraftVersion}
	for name, level := range op.Image.Features() {
		finalized[name] = level
	}
	named := map[string]bool{}
	rec.Features = make([]metadata.RegisterBrokerRecordBrokerFeature, 0, len(fs))
	for _, f := range fs {
		if err := supports(f.Name, finalized[f.Name], f.MinSupportedVersion, f.MaxSupportedVersion); err != nil {
			return err
		}
		named[f.Name] = true
		rec.Features = append(rec.Features, metadata.RegisterBrokerRecordBrokerFeature{
			Name: f.Name, MinSupportedVersion: f.MinSupportedVersion, MaxSupportedVersion: f.MaxSupportedVersion,
		})
	}
	if !named[metadataVersionFeature] {
		return refuse(kerr.InvalidRegistration.Code, "Request features do not contain 'metadata.version'")
	}
	for _, name := range javaMapOrder(finalized) {
		if level := finalized[name]; level != 0 && !named[name] {
			if err := supports(name, level, 0, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

func supports(name string, level, lo, hi int16) error {
	if level < lo || level > hi {
		return refuse(kerr.UnsupportedVersion.Code, "Unable to register because the broker does not support finalized version %d of %s. "+
			"The broker wants a version between %d and %d, inclusive.", level, name, lo, hi)
	}
	return nil
}

// javaMapOrder is the order a HashMap copy of the finalized features
// iterates in, which decides which missing feature a refusal names first.
// Names whose buckets collide come in name order, where Kafka's depends on
// how its maps were filled.
func javaMapOrder(levels map[string]int16) []string {
	names := make([]string, 0, len(levels))
	for n := range levels {
		names = append(names, n)
	}
	slices.Sort(names)
	hm := jvmorder.NewHashMapCap[string](int(float32(len(names))/0.75 + 1))
	for _, n := range names {
		hm.Put(n, jvmorder.StringHash(n))
	}
	return hm.Keys()
}
