package kafkatest

import (
	"testing"
	"time"
)

func TestKraftdActiveIn(t *testing.T) {
	claim := `{"level":"info","ts":"2026-12-02T01:02:03.456Z","logger":"controller","msg":"becoming the active controller","epoch":7,"next_offset":40}`
	renounce := `{"level":"info","ts":"2026-12-02T01:02:05.000Z","logger":"controller","msg":"renouncing the active controller role","epoch":7,"because":"leader change"}`
	later := `{"level":"info","ts":"2026-12-02T01:02:09.001Z","logger":"controller","msg":"becoming the active controller","epoch":9,"next_offset":80}`
	for _, tc := range []struct {
		out    string
		epoch  int32
		at     time.Time
		active bool
	}{
		{"", -1, time.Time{}, false},
		{claim + "\n", 7, time.Date(2026, 12, 2, 1, 2, 3, 456e6, time.UTC), true},
		{claim + "\n" + renounce + "\n", -1, time.Time{}, false},
		{claim + "\n" + renounce + "\n" + later + "\n", 9, time.Date(2026, 12, 2, 1, 2, 9, 1e6, time.UTC), true},
		{`{"msg":"becoming the active controller","ts":"bad","epoch":3}` + "\n", -1, time.Time{}, false},
		{`not json becoming the active controller`, -1, time.Time{}, false},
	} {
		epoch, at, active := kraftdActiveIn(tc.out)
		if epoch != tc.epoch || active != tc.active || !at.Equal(tc.at) {
			t.Errorf("kraftdActiveIn(%q) = %d, %v, %v; want %d, %v, %v", tc.out, epoch, at, active, tc.epoch, tc.at, tc.active)
		}
	}
}
