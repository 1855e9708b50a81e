package protocol

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiSchema is what a Kafka message schema says of an api's versions.
type apiSchema struct {
	Name                                                 string
	ApiKey, MinVersion, MaxVersion, FirstFlexibleVersion int16
}

// kafka440Schemas are Kafka 4.4.0's message schemas of the apis a controller listener
// serves itself (testdata).
var kafka440Schemas = func() []apiSchema {
	raw, err := os.ReadFile("../testdata/kafka-jvm-raft/json/kafka-4.4.0-raft-api-schemas.json")
	if err != nil {
		panic(err)
	}
	var file struct{ Apis []apiSchema }
	if err := json.Unmarshal(raw, &file); err != nil || len(file.Apis) == 0 {
		panic(fmt.Sprintf("kafka-4.4.0-raft-api-schemas.json: %d apis, %v", len(file.Apis), err))
	}
	return file.Apis
}()

// testServed is the table of the apis a node serves, as protocol's tests decode and
// answer them: those of kafka440Schemas, at their ranges. node's tests check the
// node's own table against the same schemas.
var testServed = func() *Table {
	var apis []Api
	for _, s := range kafka440Schemas {
		apis = append(apis, Api{Key: kmsg.Key(s.ApiKey), Versions: VersionRange{s.MinVersion, s.MaxVersion}})
	}
	return MustTable(apis)
}()

// testApis is a node's whole table: testServed and the controller apis.
var testApis = func() *Table {
	var served []Api
	for _, a := range testServed.Apis() {
		served = append(served, *a)
	}
	return MustTable(served, ControllerApis())
}()

// controllerKeys are the keys of ControllerApis, ascending.
func controllerKeys() []int16 {
	var keys []int16
	for _, a := range ControllerApis() {
		keys = append(keys, int16(a.Key))
	}
	return keys
}

// errorResponse is the answer of a controller api's registration, ok false for
// another api.
func errorResponse(req kmsg.Request, code int16, msg string) (kmsg.Response, bool) {
	a := testApis.Lookup(req.Key())
	if a == nil || a.ErrorResponse == nil {
		return nil, false
	}
	return a.ErrorResponse(req, code, msg), true
}
