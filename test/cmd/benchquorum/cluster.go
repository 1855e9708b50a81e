package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kraftd/kraftd/internal/freeport"
)

// dirIDs are the nodes' replica directory ids, fixed so that every run's
// voter set is the same.
var dirIDs = []string{"b8tRS7h4TJ2Vt43Dp85v2A", "Nkij_D9XRiYKNb41SiJo7Q", "4-e97nI7eHPYKfEDtW8rtQ"}

// cluster is a 3-node static quorum on 127.0.0.1 whose configs, data and
// logs live in dir; node i has id i+1.
type cluster struct {
	bin    string
	dir    string
	ports  []int
	voters string // controller.quorum.voters
	extra  string // properties lines every node's config ends with
}

func newCluster(bin, dir, extra string) (*cluster, error) {
	ports, err := freeport.Take(3)
	if err != nil {
		return nil, err
	}
	voters := fmt.Sprintf("1@127.0.0.1:%d,2@127.0.0.1:%d,3@127.0.0.1:%d", ports[0], ports[1], ports[2])
	return &cluster{bin: bin, dir: dir, ports: ports, voters: voters, extra: extra}, nil
}

// writeConfig writes node i's properties file, with the cluster's extra
// lines and then extra (whole lines) appended, and returns its path.
func (c *cluster) writeConfig(i int, extra string) (string, error) {
	cfg := c.path("node%d.properties", i)
	props := fmt.Sprintf("node.id=%d\nprocess.roles=controller\nlisteners=CONTROLLER://127.0.0.1:%d\ncontroller.listener.names=CONTROLLER\ncontroller.quorum.voters=%s\nlog.dirs=%s\n",
		i+1, c.ports[i], c.voters, c.path("data%d", i)) + c.extra + extra
	if err := os.WriteFile(cfg, []byte(props), 0o644); err != nil {
		return "", err
	}
	return cfg, nil
}

// path names node i's file in dir; format has one %d for the node id.
func (c *cluster) path(format string, i int) string {
	return filepath.Join(c.dir, fmt.Sprintf(format, i+1))
}

// waitOrKill waits for cmd (already signalled) to exit, killing it when it
// has not within d.
func waitOrKill(cmd *exec.Cmd, d time.Duration) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
	}
}
