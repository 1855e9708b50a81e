// Package interop holds kraftd's interoperability tests against Apache Kafka 4.4.0's
// released jars (see interop/pom.xml and `make interop-deps`): real Kafka controllers and
// tools exchange frames and files with kraftd's codecs and are the judge of compatibility.
// The helpers that run Kafka live in interop/kafkatest; this package has only tests.
package interop
