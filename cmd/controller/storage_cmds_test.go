package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/uuid"
)

// dynamicConfig writes a controller config with only bootstrap servers (a
// dynamic quorum) plus extra lines, and returns its path and log dir.
func dynamicConfig(t *testing.T, extra string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	cfg, logDir := filepath.Join(dir, "server.properties"), filepath.Join(dir, "logs")
	text := "node.id=4\nprocess.roles=controller\nlisteners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n" +
		"controller.quorum.bootstrap.servers=127.0.0.1:9093\nlog.dirs=" + logDir + "\n" + extra
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, logDir
}

func TestFormatQuorumFlags(t *testing.T) {
	const id = "MkU3OEVBNTcwNTJENDM2Qg"
	cfg, logDir := dynamicConfig(t, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "Because controller.quorum.voters is not set on this controller, you must specify one of the following"},
		{[]string{"-s", "-N"}, "argument --no-initial-controllers/-N: not allowed with argument --standalone/-s"},
		{[]string{"-N", "-f", "kraft.version=0"}, "Cannot set kraft.version to 0"},
		{[]string{"-I", "4@h:1"}, "No colon following port could be found."},
		{[]string{"-N", "-f", "group.version"}, "Can't parse feature=level string group.version: equals sign not found."},
		{[]string{"-N", "-r", "2.8"}, "Unknown metadata.version '2.8'"},
	} {
		args := append([]string{"format", "-c", cfg, "-t", id}, tc.args...)
		if code, _, errs := runCmd(t, args...); code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, errs, tc.want)
		}
	}
	if _, err := os.Stat(logDir); err == nil {
		t.Fatal("a refused format created the log dir")
	}

	// --standalone: the node's listener has no host, so the voter is at
	// localhost, and the dir gets the voter's directory id.
	code, out, errs := runCmd(t, "format", "-c", cfg, "-t", id, "--standalone")
	if code != 0 || !strings.Contains(out, "Formatting dynamic metadata voter directory "+logDir+" with metadata.version 4.4-IV2.") {
		t.Fatalf("--standalone: exit %d\n%s%s", code, out, errs)
	}
	mp, err := storage.ReadMetaProperties(logDir)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(logDir, "__cluster_metadata-0", storage.BootstrapSnapshotName))
	if err != nil {
		t.Fatal(err)
	}
	first, _, err := protocol.DecodeBatch(data)
	if err != nil || len(first.Records) != 3 {
		t.Fatalf("control batch %+v %v", first, err)
	}
	var vr protocol.VotersRecord
	if err := vr.ReadFrom(first.Records[2].Value); err != nil || len(vr.Voters) != 1 {
		t.Fatalf("voters %+v %v", vr, err)
	}
	v := vr.Voters[0]
	if v.VoterID != 4 || uuid.UUID(v.VoterDirectoryID) != mp.DirectoryID ||
		v.Endpoints[0] != (protocol.VotersRecordEndpoint{Name: "CONTROLLER", Host: "localhost", Port: 9093}) {
		t.Fatalf("voter %+v, meta.properties %+v", v, mp)
	}
}

// A static controller is refused the dynamic-quorum flags.
func TestFormatStaticRefusesDynamicFlags(t *testing.T) {
	cfg, _ := dynamicConfig(t, "controller.quorum.voters=4@127.0.0.1:9093\n")
	for _, flag := range [][]string{{"--standalone"}, {"--initial-controllers", "4@h:1:J8aAPcfLQt2bqs1JT_rMgQ"}} {
		args := append([]string{"format", "-c", cfg, "-t", "MkU3OEVBNTcwNTJENDM2Qg"}, flag...)
		if code, _, errs := runCmd(t, args...); code != 1 || !strings.Contains(errs, "You cannot specify controller.quorum.voters") {
			t.Errorf("%v: exit %d, stderr %q", flag, code, errs)
		}
	}
}
