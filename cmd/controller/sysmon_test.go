package main

import (
	"slices"
	"testing"
)

func TestSysmonEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string
		add     bool
	}{
		{"no GODEBUG", []string{"A=1"}, []string{"A=1", "GODEBUG=" + sysmonSetting}, true},
		{"empty GODEBUG", []string{"GODEBUG=", "B=2"}, []string{"GODEBUG=" + sysmonSetting, "B=2"}, true},
		{"other settings", []string{"GODEBUG=gctrace=1"}, []string{"GODEBUG=gctrace=1," + sysmonSetting}, true},
		{"the first GODEBUG only", []string{"GODEBUG=x=1", "GODEBUG=schedtrace=0"}, []string{"GODEBUG=x=1," + sysmonSetting, "GODEBUG=schedtrace=0"}, true},
		{"operator's schedtrace", []string{"GODEBUG=schedtrace=0"}, []string{"GODEBUG=schedtrace=0"}, false},
		{"operator's schedtrace among others", []string{"GODEBUG=gctrace=1, schedtrace=1000"}, []string{"GODEBUG=gctrace=1, schedtrace=1000"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.environ)
			got, add := sysmonEnv(in)
			if add != tc.add || !slices.Equal(got, tc.want) {
				t.Errorf("sysmonEnv(%q) = %q, %v; want %q, %v", tc.environ, got, add, tc.want, tc.add)
			}
			if !slices.Equal(in, tc.environ) {
				t.Errorf("sysmonEnv changed its input: %q", in)
			}
		})
	}
}
