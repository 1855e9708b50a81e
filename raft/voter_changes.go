package raft

// AddRaftVoter (80) v0-v1, RemoveRaftVoter (81) v0, UpdateRaftVoter (82) v0,
// as Kafka 4.4's KafkaRaftClient and its Add/Remove/UpdateVoterHandler
// answer them. The checks run in Kafka's order:
//   - cluster id mismatch -> INCONSISTENT_CLUSTER_ID (with a message);
//   - not leader -> NOT_LEADER_OR_FOLLOWER; shutting down ->
//     BROKER_NOT_AVAILABLE; UpdateRaftVoter also checks CurrentLeaderEpoch
//     (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH);
//   - no voter id or directory id, no endpoint on the default listener ->
//     INVALID_REQUEST;
//   - a change in flight -> REQUEST_TIMED_OUT; HW not known in this epoch
//     -> REQUEST_TIMED_OUT; kraft.version 0 -> UNSUPPORTED_VERSION (Add,
//     Remove), while Update goes into the leader's in-memory copy of the
//     static set, answered NONE (what a kraft.version upgrade writes: see
//     upgrade.go); the latest Voters record not committed ->
//     REQUEST_TIMED_OUT;
//   - DUPLICATE_VOTER (Add), VOTER_NOT_FOUND (Remove, Update).
//
// Add then asks the new voter for ApiVersions; its kraft.version range must
// hold the finalized level (else INVALID_REQUEST) and it must be a caught-up
// observer (else REQUEST_TIMED_OUT). Add and Remove append a Voters record,
// which is in force at once, and answer when it commits (Add v1 with
// AckWhenCommitted=false at once); Update answers at append. One Add or
// Remove is in flight at a time (pendingChange); it times out after the
// request timeout and fails with NOT_LEADER_OR_FOLLOWER when leadership is
// lost. A leader removed from the set resigns once the change commits.

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/features"
	"github.com/kraftd/kraftd/internal/javamap"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/uuid"
)

var (
	errDuplicateVoter = kerr.DuplicateVoter.Code
	errVoterNotFound  = kerr.VoterNotFound.Code
)

// The voter changes check their cluster id in their handlers, with
// Kafka's message. The answers of the ones this node sends (auto-join, an
// update of its endpoints) are handled in follower_changes.go.
var (
	addRaftVoterAPI = rpc[*kmsg.AddRaftVoterRequest, *kmsg.AddRaftVoterResponse]{
		versions:  protocol.VersionRange{Min: 0, Max: 1}, // v1: AckWhenCommitted (KIP-1186)
		clusterID: func(r *kmsg.AddRaftVoterRequest) *string { return r.ClusterID },
		topError:  func(r *kmsg.AddRaftVoterResponse) *int16 { return &r.ErrorCode },
		handle:    (*Driver).handleAddRaftVoter,
		onResponse: func(d *Driver, _ time.Time, _ pending, r *kmsg.AddRaftVoterResponse) bool {
			return d.handleJoinResponse(r.ErrorCode, errDuplicateVoter)
		},
	}.register()
	removeRaftVoterAPI = rpc[*kmsg.RemoveRaftVoterRequest, *kmsg.RemoveRaftVoterResponse]{
		versions:  protocol.VersionRange{Min: 0, Max: 0},
		clusterID: func(r *kmsg.RemoveRaftVoterRequest) *string { return r.ClusterID },
		topError:  func(r *kmsg.RemoveRaftVoterResponse) *int16 { return &r.ErrorCode },
		handle:    (*Driver).handleRemoveRaftVoter,
		onResponse: func(d *Driver, _ time.Time, _ pending, r *kmsg.RemoveRaftVoterResponse) bool {
			return d.handleJoinResponse(r.ErrorCode, errVoterNotFound)
		},
	}.register()
	updateRaftVoterAPI = rpc[*kmsg.UpdateRaftVoterRequest, *kmsg.UpdateRaftVoterResponse]{
		versions:   protocol.VersionRange{Min: 0, Max: 0},
		clusterID:  func(r *kmsg.UpdateRaftVoterRequest) *string { return r.ClusterID },
		topError:   func(r *kmsg.UpdateRaftVoterResponse) *int16 { return &r.ErrorCode },
		handle:     (*Driver).handleUpdateRaftVoter,
		onResponse: (*Driver).handleUpdateRaftVoterResponse,
	}.register()
	// apiVersionsAPI: the driver asks a new voter for ApiVersions (the
	// network server answers ApiVersions, not the driver).
	apiVersionsAPI = rpc[*kmsg.ApiVersionsRequest, *kmsg.ApiVersionsResponse]{
		onResponse: func(d *Driver, now time.Time, p pending, r *kmsg.ApiVersionsResponse) bool {
			return d.handleApiVersionsResponse(now, p.to, r, nil)
		},
		onSendError: func(d *Driver, now time.Time, p pending, err error) bool {
			return d.handleApiVersionsResponse(now, p.to, nil, err)
		},
	}.register()
)

// caughtUpWindow is how recently a new voter must have fetched (Kafka's
// LeaderState.isReplicaCaughtUp: an hour).
const caughtUpWindow = time.Hour

// pendingChange is the leader's one AddRaftVoter or RemoveRaftVoter in
// flight (Kafka's AddVoterHandlerState / RemoveVoterHandlerState).
type pendingChange struct {
	add       bool
	key       ReplicaKey
	endpoints []Endpoint // Add: the new voter's listeners
	ack       bool       // answer when committed, not when appended
	ref       RequestRef
	version   int16 // the request's version, for the deferred answer
	deadline  time.Time
	// lastOffset is the offset of the appended Voters record, -1 while
	// an Add waits for the new voter's ApiVersions answer.
	lastOffset int64
	answered   bool // Add with ack false: answered at append
}

// voterChangePrechecks are the checks before the handler's own: cluster
// id, leadership and epoch, and the voter key.
func (d *Driver) voterChangePrechecks(clusterID *string, epoch Epoch, key ReplicaKey) (int16, string) {
	if !d.validClusterID(clusterID) {
		got := "null"
		if clusterID != nil {
			got = *clusterID
		}
		return errInconsistentCluster, fmt.Sprintf("The given id \"%s\" doesn't match the cluster id \"%s\"", got, d.cfg.ClusterID)
	}
	if code := d.leaderOnlyCheck(epoch); code != errNone {
		return code, ""
	}
	if key.ID < 0 || !key.HasDirectory() {
		return errInvalidRequest, ""
	}
	return errNone, ""
}

// voterChangeState checks what the voter set must allow for any change:
// nothing in flight, a HW, kraft.version 1 and the latest Voters record
// committed. what names the change in Kafka's messages ("adding").
func (d *Driver) voterChangeState(now time.Time, what string) (int16, string) {
	l := d.asLeader()
	if l.changePending(d, now) {
		return errRequestTimedOut, "Request timed out waiting for leader to handle previous voter change request"
	}
	if l.highWatermark < 0 {
		return errRequestTimedOut, "Request timed out waiting for leader to establish HWM and fence previous voter changes"
	}
	if v := d.kraftVersion(); v < 1 {
		return errUnsupportedVersion, fmt.Sprintf("Cluster doesn't support %s voter because the kraft.version feature is %d", what, v)
	}
	if _, off := d.kraft.latestVoters(); off < -1 || off >= l.highWatermark {
		return errRequestTimedOut, fmt.Sprintf("Request timed out waiting for voters to commit the latest voter change at %s with HWM %d",
			javaOptionalOffset(off), l.highWatermark)
	}
	return errNone, ""
}

func (d *Driver) handleAddRaftVoter(now time.Time, req *kmsg.AddRaftVoterRequest, ref RequestRef) kmsg.Response {
	key := ReplicaKey{ID: NodeID(req.VoterID), DirectoryID: req.VoterDirectoryID}
	code, msg := d.voterChangePrechecks(req.ClusterID, d.epoch, key)
	if code == errInvalidRequest {
		msg = "Add voter request didn't include a valid voter"
	}
	endpoints := addVoterEndpoints(req.Listeners)
	if code == errNone {
		if _, ok := endpointNamed(endpoints, d.cfg.ListenerName); !ok {
			code, msg = errInvalidRequest, fmt.Sprintf("Add voter request didn't include the endpoint (%s) for the default listener ListenerName(%s)",
				javaEndpoints(endpoints), d.cfg.ListenerName)
		}
	}
	if code == errNone {
		code, msg = d.voterChangeState(now, "adding")
	}
	if code == errNone {
		if vs, _ := d.kraft.latestVoters(); vs.ContainsID(key.ID) {
			code, msg = errDuplicateVoter, fmt.Sprintf("The voter id for %s is already part of the set of voters %s.", javaKey(key), javaKeys(vs))
		}
	}
	if code == errNone {
		code, msg = d.askNewVoterVersions(now, key, endpoints)
	}
	if code == errNone {
		d.asLeader().change = &pendingChange{
			add: true, key: key, endpoints: endpoints, ack: req.Version < 1 || req.AckWhenCommitted,
			ref: ref, version: req.GetVersion(), deadline: now.Add(d.cfg.RequestTimeout), lastOffset: -1,
		}
		return nil // answered when the change commits, fails or times out
	}
	return addVoterAnswer(code, msg)
}

// askNewVoterVersions sends ApiVersions to the new voter at the address it
// gave on the default listener, to learn its supported kraft.version range.
func (d *Driver) askNewVoterVersions(now time.Time, key ReplicaKey, endpoints []Endpoint) (int16, string) {
	e, _ := endpointNamed(endpoints, d.cfg.ListenerName)
	d.learnEndpoint(key.ID, e.Host, e.Port)
	if key.ID == d.self() || !d.reqs.Ready(key.ID, now) {
		return errRequestTimedOut, fmt.Sprintf("New voter %s is not ready to receive requests", javaKey(key))
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName, req.ClientSoftwareVersion = "kraftd", "1"
	d.send(now, key.ID, req, false)
	return errNone, ""
}

// handleApiVersionsResponse continues a pending Add with the new voter's
// answer (Kafka's AddVoterHandler.handleApiVersionsResponse). err is set
// when the request failed.
func (d *Driver) handleApiVersionsResponse(now time.Time, from NodeID, resp *kmsg.ApiVersionsResponse, err error) bool {
	l := d.asLeader()
	if l == nil {
		return true
	}
	c := l.change
	if c == nil || !c.add || c.lastOffset >= 0 || c.key.ID != from {
		return true
	}
	code := errNone
	if err != nil {
		code = errRequestTimedOut
		if ke, ok := err.(*kerr.Error); ok {
			code = ke.Code
		}
	} else {
		code = resp.ErrorCode
	}
	if code != errNone {
		d.finishChange(errRequestTimedOut, fmt.Sprintf("Aborted add voter operation for since API_VERSIONS returned an error %s", errorName(code)))
		return false
	}
	finalized := d.kraftVersion()
	rng, ok := kraftVersionFeature(resp)
	if !ok || rng.Min > finalized || rng.Max < finalized {
		shown := "(min: 0, max: 0)"
		if ok {
			shown = fmt.Sprintf("(min: %d, max: %d", rng.Min, rng.Max) // sic: Kafka's format lacks the ')'
		}
		d.finishChange(errInvalidRequest, fmt.Sprintf("Aborted add voter operation for %s since the kraft.version range %s doesn't support the finalized version %d",
			javaKey(c.key), shown, finalized))
		return true
	}
	if !l.caughtUp(c.key, now) {
		d.finishChange(errRequestTimedOut, fmt.Sprintf("Aborted add voter operation for %s since it is lagging behind", javaKey(c.key)))
		return true
	}
	vs, _ := d.kraft.latestVoters()
	next, ok := vs.Add(VoterNode{Key: c.key, Endpoints: c.endpoints, KRaftVersions: rng})
	if !ok {
		d.finishChange(errDuplicateVoter, "")
		return true
	}
	c.lastOffset = d.appendVotersRecord(now, next)
	d.lg.Info("appended voter addition", zap.Stringer("voter", c.key), zap.Stringer("voters", next), zap.Int64("offset", c.lastOffset))
	if d.fatal == nil && !c.ack {
		c.answered = true
		d.tr.Reply(c.ref, d.changeAnswer(c, errNone, ""))
	}
	return true
}

// kraftVersionFeature is the kraft.version range an ApiVersions answer
// advertises.
func kraftVersionFeature(resp *kmsg.ApiVersionsResponse) (VersionRange, bool) {
	for _, f := range resp.SupportedFeatures {
		if f.Name == features.KRaftVersionName {
			return VersionRange{Min: f.MinVersion, Max: f.MaxVersion}, true
		}
	}
	return VersionRange{}, false
}

func (d *Driver) handleRemoveRaftVoter(now time.Time, req *kmsg.RemoveRaftVoterRequest, ref RequestRef) kmsg.Response {
	key := ReplicaKey{ID: NodeID(req.VoterID), DirectoryID: req.VoterDirectoryID}
	code, msg := d.voterChangePrechecks(req.ClusterID, d.epoch, key)
	if code == errInvalidRequest {
		msg = "Remove voter request didn't include a valid voter"
	}
	if code == errNone {
		code, msg = d.voterChangeState(now, "removing")
	}
	var next VoterSet
	if code == errNone {
		vs, _ := d.kraft.latestVoters()
		var ok bool
		if next, ok = vs.Remove(key); !ok {
			code, msg = errVoterNotFound, fmt.Sprintf("Cannot remove voter %s from the set of voters %s", javaKey(key), javaKeys(vs))
		}
	}
	if code != errNone {
		return removeVoterAnswer(code, msg)
	}
	off := d.appendVotersRecord(now, next)
	if d.fatal != nil {
		return nil
	}
	d.lg.Info("appended voter removal", zap.Stringer("voter", key), zap.Stringer("voters", next), zap.Int64("offset", off))
	d.asLeader().change = &pendingChange{
		key: key, ack: true, ref: ref, version: req.GetVersion(), deadline: now.Add(d.cfg.RequestTimeout), lastOffset: off,
	}
	return nil
}

func (d *Driver) handleUpdateRaftVoter(now time.Time, req *kmsg.UpdateRaftVoterRequest, _ RequestRef) kmsg.Response {
	key := ReplicaKey{ID: NodeID(req.VoterID), DirectoryID: req.VoterDirectoryID}
	code, _ := d.voterChangePrechecks(req.ClusterID, Epoch(req.CurrentLeaderEpoch), key)
	endpoints := updateVoterEndpoints(req.Listeners)
	rng := VersionRange{Min: req.KRaftVersionFeature.MinSupportedVersion, Max: req.KRaftVersionFeature.MaxSupportedVersion}
	if code == errNone {
		if _, ok := endpointNamed(endpoints, d.cfg.ListenerName); !ok || rng.Min < 0 || rng.Max < rng.Min {
			code = errInvalidRequest
		}
	}
	if code == errNone {
		code = d.updateVoter(now, VoterNode{Key: key, Endpoints: endpoints, KRaftVersions: rng})
	}
	resp := kmsg.NewPtrUpdateRaftVoterResponse()
	resp.ErrorCode = code
	resp.CurrentLeader.LeaderID = int32(d.leaderID)
	resp.CurrentLeader.LeaderEpoch = int32(d.epoch)
	if id, ep, ok := d.leaderEndpoint(); ok && id == NodeID(resp.CurrentLeader.LeaderID) {
		resp.CurrentLeader.Host, resp.CurrentLeader.Port = ep.Host, ep.Port
	}
	return resp
}

// updateVoter is UpdateVoterHandler past the request checks: it appends
// the updated set and answers at once, without waiting for the commit.
//
// At kraft.version 0 there is no Voters record to append: as Kafka 4.4
// does, the update goes into the leader's in-memory copy of the static set
// (volatileVoters), which an upgrade to kraft.version 1 would write out.
func (d *Driver) updateVoter(now time.Time, n VoterNode) int16 {
	l := d.asLeader()
	code, _ := d.voterChangeState(now, "updating")
	static := code == errUnsupportedVersion
	if static {
		code = errNone
	}
	if code != errNone {
		return code
	}
	if v := d.kraftVersion(); n.KRaftVersions.Min > v || n.KRaftVersions.Max < v {
		return errInvalidRequest
	}
	vs, _ := d.kraft.latestVoters()
	if static && l.volatileVoters != nil {
		vs = *l.volatileVoters
	}
	next, ok := vs.Update(n)
	if !ok {
		return errVoterNotFound
	}
	if static {
		l.volatileVoters = &next
		d.lg.Info("updated in-memory voters (kraft.version 0)", zap.Stringer("voters", next))
	} else {
		d.appendVotersRecord(now, next)
	}
	d.countCheckQuorum(now, n.Key.ID)
	return errNone
}

// appendVotersRecord writes a control batch holding the Voters record of vs
// after whatever the accumulator holds (Kafka's appendVotersRecord) and
// returns its offset. The set is in force from here on.
func (d *Driver) appendVotersRecord(now time.Time, vs VoterSet) int64 {
	l := d.asLeader()
	d.drainAppends(now)
	if d.fatal != nil {
		return -1
	}
	vr := vs.Record()
	off := d.appendControlBatch(now, []protocol.Record{protocol.ControlRecord(0, protocol.ControlKRaftVoters, vr.AppendTo(nil))})
	l.acc.reset(d.log.EndOffset().Offset, d.epoch)
	return off
}

// changePending expires a change past its deadline, then reports whether
// one is still in flight (Kafka's isOperationPending).
func (l *leaderState) changePending(d *Driver, now time.Time) bool {
	if l.change != nil && !now.Before(l.change.deadline) {
		d.lg.Info("voter change timed out", zap.Stringer("voter", l.change.key), zap.Bool("add", l.change.add))
		d.finishChange(errRequestTimedOut, "")
	}
	return l.change != nil
}

// changeCommitted completes the change once the HW passed its record; a
// leader the change removed then resigns.
func (d *Driver) changeCommitted() {
	l := d.asLeader()
	c := l.change
	if c == nil || c.lastOffset < 0 || l.highWatermark <= c.lastOffset {
		return
	}
	d.finishChange(errNone, "")
	if !c.add && !d.voters.Contains(d.localKey()) {
		d.lg.Info("leader is not in the committed voter set; resigning", zap.Stringer("voters", d.voters), zapEpoch("epoch", d.epoch))
		l.resignRequested = true
	}
}

// finishChange answers the pending change (unless it was answered at
// append) and clears it.
func (d *Driver) finishChange(code int16, msg string) {
	l := d.asLeader()
	c := l.change
	l.change = nil
	if c == nil || c.answered {
		return
	}
	d.tr.Reply(c.ref, d.changeAnswer(c, code, msg))
}

func (d *Driver) changeAnswer(c *pendingChange, code int16, msg string) kmsg.Response {
	var resp kmsg.Response
	if c.add {
		resp = addVoterAnswer(code, msg)
	} else {
		resp = removeVoterAnswer(code, msg)
	}
	resp.SetVersion(c.version)
	return resp
}

func addVoterAnswer(code int16, msg string) *kmsg.AddRaftVoterResponse {
	resp := kmsg.NewPtrAddRaftVoterResponse()
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	return resp
}

func removeVoterAnswer(code int16, msg string) *kmsg.RemoveRaftVoterResponse {
	resp := kmsg.NewPtrRemoveRaftVoterResponse()
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	return resp
}

// caughtUp is Kafka's isReplicaCaughtUp: an observer with exactly this key
// that has been caught up once and fetched within the last hour.
func (l *leaderState) caughtUp(k ReplicaKey, now time.Time) bool {
	r := l.observers[k.ID]
	return r != nil && r.dir == k.DirectoryID && !r.lastCaughtUp.IsZero() && !r.lastFetch.IsZero() &&
		now.Sub(r.lastFetch) < caughtUpWindow
}

func addVoterEndpoints(ls []kmsg.AddRaftVoterRequestListener) []Endpoint {
	out := make([]Endpoint, 0, len(ls))
	for _, l := range ls {
		out = append(out, Endpoint{Name: strings.ToUpper(l.Name), Host: l.Host, Port: int32(l.Port)})
	}
	return out
}

func updateVoterEndpoints(ls []kmsg.UpdateRaftVoterRequestListener) []Endpoint {
	out := make([]Endpoint, 0, len(ls))
	for _, l := range ls {
		out = append(out, Endpoint{Name: strings.ToUpper(l.Name), Host: l.Host, Port: int32(l.Port)})
	}
	return out
}

func endpointNamed(es []Endpoint, name string) (Endpoint, bool) {
	for _, e := range es {
		if e.Name == name {
			return e, true
		}
	}
	return Endpoint{}, false
}

// The java* helpers print values as Kafka's toString does, because
// kafka-metadata-quorum shows the leader's messages verbatim.

func javaKey(k ReplicaKey) string {
	dir := "Optional.empty"
	if k.HasDirectory() {
		dir = "Optional[" + uuid.UUID(k.DirectoryID).String() + "]"
	}
	return fmt.Sprintf("ReplicaKey(id=%d, directoryId=%s)", k.ID, dir)
}

func javaKeys(vs VoterSet) string {
	parts := make([]string, 0, vs.Len())
	for _, v := range vs.Nodes() {
		parts = append(parts, javaKey(v.Key))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func javaOptionalOffset(off int64) string {
	if off < -1 {
		return "Optional.empty"
	}
	return fmt.Sprintf("Optional[%d]", off)
}

// javaEndpoints is Kafka's Endpoints.toString of an AddRaftVoter request's
// listeners: a HashMap sized for them, keyed by name (a repeated name keeps
// its first place and its last address), each address unresolved.
func javaEndpoints(es []Endpoint) string {
	addr := map[string]string{}
	var names []string
	for _, e := range es {
		if _, ok := addr[e.Name]; !ok {
			names = append(names, e.Name)
		}
		addr[e.Name] = fmt.Sprintf("%s/<unresolved>:%d", e.Host, e.Port)
	}
	names = javamap.Order(names, javamap.StringHash, javamap.PresizedCapacity(len(es), len(names)))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("ListenerName(%s)=%s", n, addr[n]))
	}
	return "Endpoints(endpoints={" + strings.Join(parts, ", ") + "})"
}

// errorName is Kafka's Errors name for code.
func errorName(code int16) string {
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Message
		}
	}
	return fmt.Sprintf("UNKNOWN(%d)", code)
}
