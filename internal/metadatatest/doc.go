// Package metadatatest makes metadata records for tests: random and edge
// values for every field a version carries (on the schema facts that
// protocol/metadata/metareflect reads), unknown tagged fields, and, in
// synthetic/, whole synthetic clusters. Tests and benchmarks only.
package metadatatest
