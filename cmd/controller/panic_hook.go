//go:build kraftd_panic_hook

package main

import (
	"time"

	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/raft"
)

// A test binary (see panic_test.go) whose workload panics on the run loop
// once its node leads, to check how the process reports and exits.
func init() {
	wrapApp = func(a node.Application) node.Application { return panicOnLead{a} }
}

type panicOnLead struct{ node.Application }

func (p panicOnLead) Tick(now time.Time, st raft.Status, w node.Writer) time.Time {
	if st.Role == raft.RoleLeader {
		panic("injected by the kraftd_panic_hook build")
	}
	return p.Application.Tick(now, st, w)
}
