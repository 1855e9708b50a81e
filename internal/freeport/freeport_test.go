package freeport

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestTakeDistinctBindableBelowEphemeral(t *testing.T) {
	ports, err := Take(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p < low || p >= ephemeralStart() {
			t.Errorf("port %d outside [%d, %d)", p, low, ephemeralStart())
		}
		if seen[p] {
			t.Errorf("port %d handed out twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Errorf("port %d not bindable: %v", p, err)
			continue
		}
		l.Close()
	}
	more, err := Take(50)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		if seen[p] {
			t.Errorf("port %d handed out again by a later Take", p)
		}
	}
}

// A second process cannot take a port this one holds: the helper process below tries to
// lock every port this process took.
func TestTakeExcludesOtherProcesses(t *testing.T) {
	if list := os.Getenv("FREEPORT_HELD"); list != "" {
		for _, s := range strings.Split(list, ",") {
			p, _ := strconv.Atoi(s)
			if f, ok := lock(os.Getenv("FREEPORT_DIR"), p); ok {
				f.Close()
				t.Fatalf("port %d locked by the parent process was locked here too", p)
			}
		}
		return
	}
	ports, err := Take(20)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, p := range ports {
		s = append(s, strconv.Itoa(p))
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTakeExcludesOtherProcesses$")
	cmd.Env = append(os.Environ(), "FREEPORT_HELD="+strings.Join(s, ","), "FREEPORT_DIR="+os.TempDir()+"/kraftd-ports")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
}
