package protocol

import "github.com/twmb/franz-go/pkg/kmsg"

// legacy is the table of servedApis and ControllerApis, behind the package functions
// that predate Table; callers move to a node's table.
var legacy = func() *Table {
	served := make([]Api, len(servedApis))
	for i, a := range servedApis {
		served[i] = Api{Key: kmsg.Key(a.key), Versions: a.VersionRange}
	}
	return MustTable(served, ControllerApis())
}()

// Supported reports the versions kraftd serves for an api key.
func Supported(key int16) (VersionRange, bool) {
	if AnswersNotController(key) {
		return VersionRange{}, false
	}
	return legacy.Versions(key)
}

// Advertised reports the versions kraftd lists in ApiVersions for an api key.
func Advertised(key int16) (VersionRange, bool) { return legacy.Versions(key) }

// AnswersNotController reports whether key is a controller api kraftd answers NOT_CONTROLLER.
func AnswersNotController(key int16) bool {
	a := legacy.Lookup(key)
	return a != nil && a.ErrorResponse != nil
}

// ServedKeys returns the api keys kraftd serves, ascending.
func ServedKeys() []int16 {
	keys := make([]int16, len(servedApis))
	for i, a := range servedApis {
		keys[i] = a.key
	}
	return keys
}

// ControllerKeys returns the api keys kraftd answers as a non-active controller, ascending.
func ControllerKeys() []int16 {
	var keys []int16
	for _, a := range ControllerApis() {
		keys = append(keys, int16(a.Key))
	}
	return keys
}

// ParseRequest parses a request of the legacy table.
func ParseRequest(frame []byte) (RequestHeader, kmsg.Request, error) {
	return legacy.ParseRequest(frame)
}

// NewApiVersionsResponse is the legacy table's ApiVersions answer.
func NewApiVersionsResponse(reqVersion int16) *kmsg.ApiVersionsResponse {
	return legacy.ApiVersionsResponse(reqVersion)
}

// ErrorResponse is the NOT_CONTROLLER answer of a controller api.
func ErrorResponse(req kmsg.Request, code int16, msg string) (kmsg.Response, bool) {
	a := legacy.Lookup(req.Key())
	if a == nil || a.ErrorResponse == nil {
		return nil, false
	}
	return a.ErrorResponse(req, code, msg), true
}
