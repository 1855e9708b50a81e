package main

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// A node process runs with sysmonSetting in GODEBUG (it re-executes itself,
// keeping its pid) and serves as a quorum; an operator's schedtrace stays.
func TestNodeKeepsSysmonAwake(t *testing.T) {
	for _, tc := range []struct {
		name, godebug, want string
	}{
		{"default", "", "GODEBUG=gctrace=0," + sysmonSetting},
		{"operator's schedtrace", "schedtrace=0", "GODEBUG=schedtrace=0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			godebug := "gctrace=0"
			if tc.godebug != "" {
				godebug = tc.godebug
			}
			t.Setenv("GODEBUG", godebug)
			c := newCluster(t, 1)
			c.start(1)
			c.waitLeader(15*time.Second, 0)
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", c.nodes[1].cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, kv := range bytes.Split(b, []byte{0}) {
				if bytes.HasPrefix(kv, []byte("GODEBUG=")) {
					got = append(got, string(kv))
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Fatalf("node environment GODEBUG: %q, want %q", got, tc.want)
			}
		})
	}
}
