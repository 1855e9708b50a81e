// Package testpki makes throwaway certificates for tests and benchmarks of secure
// listeners: a CA and leaf certificates it signs (ECDSA P-256, server and client usage),
// as PEM. Nothing it makes is meant to outlive the run that made it.
package testpki
