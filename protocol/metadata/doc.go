// Package metadata is the codec of the records in __cluster_metadata: the 27
// metadata record types of Kafka 4.4.0 (RegisterBrokerRecord to
// UnregisterControllerRecord), at every version Kafka 4.4.0 knows, byte for
// byte as its MetadataRecordSerde writes and reads them.
//
// Model:
//   - schema/ holds Kafka 4.4.0's JSON schemas (kafka-metadata-4.4.0.jar,
//     common/metadata/*.json). One generator (internal/gen, run by go
//     generate) turns them into the gen_*.go files: a Go struct per record
//     and element struct, with its defaults (Default, New<Name>) and its
//     encoder and decoder. Nothing here is written by hand per type; a test
//     regenerates in memory and fails when the committed code is stale.
//   - Fields keep the schemas' names. nil is null for the string, bytes and
//     array fields that can be null (*string for strings), and empty for
//     those that cannot. Defaults are the schemas', not Go's zero values: a
//     record to write starts from New<Name> (NewPartitionChangeRecord has
//     Leader -2, "unchanged"). The `kafka` struct tags repeat each field's
//     versions, nullable versions, tag and default for code that walks
//     records by reflection (internal/metadatatest).
//   - A tagged field is written when it differs from its default, so null
//     and [] of a nullable array defaulting to null are both kept. Tagged
//     fields the schema does not know (a newer Kafka's) are kept in
//     UnknownTags and written back among the known ones in tag order.
//   - Append frames a record as ApiMessageAndVersion (frame version 1, api
//     key, version) at the version asked for; Decode undoes it. Which version
//     Kafka writes at a metadata.version, and which types it writes at all,
//     is levels.go's table (Level.RecordVersion, Level.Has).
//   - Encoding refuses what Kafka's generated write refuses: a version the
//     type lacks, a non-default value in a field the version lacks (it would
//     be silently dropped), null where the version has no null, strings over
//     32767 bytes or not UTF-8. Decoding refuses an unknown type, a version outside the
//     type's range, truncated input, trailing bytes, null in a non-nullable
//     field, a count larger than the bytes left could hold (checked before
//     anything is allocated), a known tag at a version without it, and, where
//     Kafka is laxer on input it never writes, tags out of ascending order, a
//     tagged field whose size is not its value's, and strings that are not
//     UTF-8 (Kafka reads them with U+FFFD replacements, so the two would
//     disagree on the record). Errors are *Error, naming the type, version,
//     field path and reason. Decoded values never alias the input.
//
// Nothing in this package keeps state; every function is safe for concurrent
// use on distinct records.
package metadata
