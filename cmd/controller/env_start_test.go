package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kraftd/kraftd/uuid"
)

func TestStartProperties(t *testing.T) {
	if _, err := startProperties(configFlags{}, []string{"PATH=/bin"}); err == nil || !strings.Contains(err.Error(), "--config FILE is required, or KAFKA_*") {
		t.Fatalf("no file, no variables: %v", err)
	}
	// CLUSTER_ID alone runs the image's single-node default.
	p, err := startProperties(configFlags{}, []string{"CLUSTER_ID=5L6g3nShT-eMCtK--X86sw"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Get("controller.quorum.voters"); v != "1@localhost:9093" {
		t.Fatalf("default voters %q", v)
	}
	path := filepath.Join(t.TempDir(), "c.properties")
	if err := os.WriteFile(path, []byte("node.id=1\nlog.dirs=/file\nprocess.roles=controller\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = startProperties(configFlags{path: path, overrides: []string{"process.roles=broker"}},
		[]string{"KAFKA_NODE_ID=2", "KAFKA_HEAP_OPTS=-Xmx1G", "CLUSTER_ID=x"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"node.id": "2", "log.dirs": "/file", "process.roles": "broker"} {
		if v, _ := p.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if _, ok := p.Get("heap.opts"); ok {
		t.Error("KAFKA_HEAP_OPTS became a property")
	}
	if _, err := startProperties(configFlags{path: path}, []string{"KAFKA_A=\n"}); err == nil || !strings.Contains(err.Error(), "KAFKA_A") {
		t.Fatalf("a bad variable: %v", err)
	}
	if got := lookupEnv([]string{"CLUSTER_ID=a", "X=1", "CLUSTER_ID=b"}, "CLUSTER_ID"); got != "b" {
		t.Fatalf("lookupEnv = %q, want the last value", got)
	}
}

// envNode is node p's environment for a quorum configured as with the
// apache/kafka image: only variables, no properties file.
func envNode(c *cluster, p *proc, clusterID string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		fmt.Sprintf("KAFKA_NODE_ID=%d", p.id),
		"KAFKA_PROCESS_ROLES=controller",
		"KAFKA_CONTROLLER_QUORUM_VOTERS=" + c.voters,
		fmt.Sprintf("KAFKA_LISTENERS=CONTROLLER://127.0.0.1:%d", p.port),
		"KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER",
		"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=CONTROLLER:PLAINTEXT",
		"KAFKA_LOG_DIRS=" + p.dataDir,
		"KAFKA_HEAP_OPTS=-Xmx1G", // the image's JVM settings are not properties
		"CLUSTER_ID=" + clusterID,
	}
	for _, kv := range fastQuorum {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, "KAFKA_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_"))+"="+v)
	}
	return env
}

// TestStartFromEnvironment: three `start` processes configured only by
// environment variables format their empty dirs from CLUSTER_ID and elect a
// leader; restarted with the same variables they find their dirs formatted
// and elect again; a different CLUSTER_ID is refused.
func TestStartFromEnvironment(t *testing.T) {
	skipShort(t)
	c := newCluster(t, 3)
	clusterID := uuid.Random().String()
	for id := int32(1); id <= 3; id++ {
		p := c.nodes[id]
		p.env = envNode(c, p, clusterID)
		if err := os.Remove(p.cfgPath); err != nil {
			t.Fatal(err)
		}
		c.start(id)
	}
	_, epoch := c.waitLeader(15*time.Second, 0)
	code, out, errs := runCmd(t, "describe-quorum", "--bootstrap-controller", "127.0.0.1:"+itoa(c.nodes[2].port), "--status", "--timeout", "5s")
	if code != 0 || !strings.Contains(out, "ClusterId:              "+clusterID+"\n") || !strings.Contains(out, "CurrentVoters:") {
		t.Fatalf("describe-quorum --status: %d\n%s\n%s", code, out, errs)
	}
	c.stopAll()
	for id := int32(1); id <= 3; id++ {
		c.start(id)
	}
	c.waitLeader(15*time.Second, epoch)
	for id := int32(1); id <= 3; id++ {
		b, _ := os.ReadFile(c.nodes[id].errPath)
		if n := strings.Count(string(b), "formatted the log dirs from CLUSTER_ID"); n != 1 {
			t.Fatalf("node %d formatted %d times in two runs, want once", id, n)
		}
		if strings.Contains(string(b), "unknown configuration key") {
			t.Fatalf("node %d warned about a key its environment set:\n%s", id, b)
		}
	}
	c.stopAll()
	other := c.nodes[1]
	other.env = envNode(c, other, uuid.Random().String())
	c.start(1)
	if !c.waitExit(1, 10*time.Second) || other.exitErr == nil {
		t.Fatal("start with another CLUSTER_ID than the dirs' did not fail")
	}
	if b, _ := os.ReadFile(other.errPath); !strings.Contains(string(b), "formatted for cluster "+clusterID) {
		t.Fatalf("no clear error for the other CLUSTER_ID:\n%s", b)
	}
}
