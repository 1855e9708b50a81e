package cluster

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/protocol/metadata"
)

// RegisterController decides a ControllerRegistration
// (ClusterControlManager.registerController): one RegisterControllerRecord
// v0, atomic, ZkMigrationReady always false, endpoints keyed by name. Every
// controller sends it, the active one included, while the image lacks a
// registration matching its own (from 3.7-IV0). The features are not checked.
func (m *Manager) RegisterController(op Op, req *kmsg.ControllerRegistrationRequest) (Result[struct{}], error) {
	var res Result[struct{}]
	mv, _ := op.Image.MetadataVersion()
	if !mv.Has(metadata.GateControllerRegistration) {
		return res, refuse(kerr.UnsupportedVersion.Code, "The current MetadataVersion is too old to support controller registrations.")
	}
	var eps []metadata.RegisterControllerRecordControllerEndpoint
	at := map[string]int{}
	for _, l := range req.Listeners {
		if l.SecurityProtocol < 0 || l.SecurityProtocol > 3 {
			return res, unexpected("Unknown security protocol %d in listener %s", l.SecurityProtocol, l.Name)
		}
		e := metadata.RegisterControllerRecordControllerEndpoint{Name: l.Name, Host: l.Host, Port: l.Port, SecurityProtocol: l.SecurityProtocol}
		if i, ok := at[l.Name]; ok {
			eps[i] = e
			continue
		}
		at[l.Name] = len(eps)
		eps = append(eps, e)
	}
	for _, e := range eps {
		// toControllerRegistrationRecord checks as the broker side does.
		if e.Port == 0 {
			return res, unexpected("Cannot serialize ephemeral port 0 in ListenerInfo.")
		}
		if trimmedEmpty(e.Host) {
			return res, unexpected("Cannot serialize empty host in ListenerInfo.")
		}
	}
	r := &metadata.RegisterControllerRecord{}
	r.Default()
	r.ControllerId, r.IncarnationId, r.ZkMigrationReady = req.ControllerID, req.IncarnationID, false
	r.EndPoints = eps
	if r.EndPoints == nil {
		r.EndPoints = []metadata.RegisterControllerRecordControllerEndpoint{}
	}
	r.Features = make([]metadata.RegisterControllerRecordControllerFeature, 0, len(req.Features))
	for _, f := range req.Features {
		r.Features = append(r.Features, metadata.RegisterControllerRecordControllerFeature{
			Name: f.Name, MinSupportedVersion: f.MinSupportedVersion, MaxSupportedVersion: f.MaxSupportedVersion,
		})
	}
	res.Records, res.Atomic = []Record{{r, 0}}, true
	return res, nil
}

// UnregisterController decides an UnregisterController (api 94, new in
// 4.4): refused for the active controller itself, below 4.4-IV2, and for an
// id without a registration; otherwise one atomic UnregisterControllerRecord.
func (m *Manager) UnregisterController(op Op, id int32) (Result[struct{}], error) {
	var res Result[struct{}]
	if id == m.settings.NodeID {
		return res, refuse(kerr.InvalidRequest.Code, "Controller cannot unregister itself while it is active.")
	}
	mv, _ := op.Image.MetadataVersion()
	if !mv.Has(metadata.GateControllerUnregistration) {
		return res, refuse(kerr.UnsupportedVersion.Code, "The current MetadataVersion is too old to support controller unregistration.")
	}
	if _, ok := op.Image.Controller(id); !ok {
		return res, refuse(controllerIDNotRegistered, "Controller ID %d is not currently registered.", id)
	}
	r := &metadata.UnregisterControllerRecord{ControllerId: id}
	res.Records, res.Atomic = []Record{{r, 0}}, true
	return res, nil
}

// controllerIDNotRegistered is CONTROLLER_ID_NOT_REGISTERED, new in Kafka
// 4.4 (franz-go's kerr may not know it yet).
const controllerIDNotRegistered int16 = 136

func trimmedEmpty(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > ' ' {
			return false
		}
	}
	return true
}
