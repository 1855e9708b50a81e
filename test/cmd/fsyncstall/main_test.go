package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 1000; i++ {
		lat = append(lat, time.Duration(i)*100*time.Microsecond) // 0.1 .. 100 ms
	}
	got := summary(lat)
	for _, want := range []string{"n=1000", "p50=50.00", "p99=99.00", "max=100.0 ms", "800 over 20 ms"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary = %q, want it to contain %q", got, want)
		}
	}
	if got := summary(nil); got != "no appends" {
		t.Errorf("summary(nil) = %q", got)
	}
}

func TestFsyncLoopAppendsAndRemovesItsFile(t *testing.T) {
	dir := t.TempDir()
	lat, err := fsyncLoop(dir, 30*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(lat) == 0 {
		t.Fatal("no append measured")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left %d files behind", len(ents))
	}
	if _, err := fsyncLoop(dir+"/missing", time.Millisecond); err == nil {
		t.Fatal("a missing directory was accepted")
	}
}
