package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"github.com/kraftd/kraftd/network"
	"github.com/kraftd/kraftd/node"
	"github.com/kraftd/kraftd/protocol"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/uuid"
)

// The messages are what Kafka 4.4.0's `kafka-metadata-quorum
// remove-controller -d ID` prints after "Failed to parse
// --controller-directory-id: ".
func TestParseJavaUUID(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "Input string `` decoded as 0 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"},
		{"x", "Input byte[] should at least have 2 bytes for base64 bytes"},
		{"xx", "Input string `xx` decoded as 1 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"},
		{"AAAA", "Input string `AAAA` decoded as 3 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"},
		{"AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAQ"},
		{"AAAAAAAAAAAAAAAAAAAAAQ==", "AAAAAAAAAAAAAAAAAAAAAQ"},
		{"AAAAAAAAAAAAAAAAAAAAAR", "AAAAAAAAAAAAAAAAAAAAAQ"},
		{"AAAAAAAAAAAAAAAAAAAAAQ=", "Input byte array has wrong 4-byte ending unit"},
		{"AAAAAAAAAAAAAAAAAAAAA=", "Last unit does not have enough valid bits"},
		{"AAAAAAAAAAAAAAAAAAAAAQ=x", "Input byte array has wrong 4-byte ending unit"},
		{"AAAAAAAAAAAAAAAAAAAAA!", "Illegal base64 character 21"},
		{"A/AAAAAAAAAAAAAAAAAAAA", "Illegal base64 character 2f"},
		{"AAAAAAAAAAAAAAAAAAAAAQAAAAAAAA", "Input string with prefix `AAAAAAAAAAAAAAAAAAAAAQAA` is too long to be decoded as a base64 UUID"},
		{"AAAAA=AAAAAAAAAAAAAAAQ", "Last unit does not have enough valid bits"},
		{"AAAAAAAAAAAAAAAAAAAAA", "Last unit does not have enough valid bits"},
		{"AA==AA", "Input byte array has incorrect ending byte at 4"},
	} {
		u, err := parseJavaUUID(c.in)
		got := u.String()
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("parseJavaUUID(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// writeControllerProps writes a controller's server properties (extra lines
// appended) and, unless dirID is empty, a formatted metadata dir.
func writeControllerProps(t *testing.T, dirID, extra string) (path, logDir string) {
	t.Helper()
	dir := t.TempDir()
	logDir = filepath.Join(dir, "meta")
	if dirID != "" {
		u, err := uuid.Parse(dirID)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(logDir, 0o755); err != nil {
			t.Fatal(err)
		}
		mp := storage.MetaProperties{Version: 1, ClusterID: "MkU3OEVBNTcwNTJENDM2Qg", NodeID: 4, DirectoryID: u}
		if err := storage.WriteMetaProperties(logDir, mp); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(dir, "controller.properties")
	text := "process.roles=controller\nlog.dirs=" + logDir + ",/elsewhere\n" + extra
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, logDir
}

const newDirID = "QAAAAAAAAAAAAAAAAAAABA"

// add-controller reads the new controller's properties in Kafka's order and
// fails with its messages (golden strings from Kafka 4.4.0's tool).
func TestAddControllerProperties(t *testing.T) {
	base := "node.id=4\nlisteners=CONTROLLER://:9095,PLAIN://127.0.0.1:9092\ncontroller.listener.names=CONTROLLER\n"
	for _, c := range []struct {
		name, dirID, props, want string
	}{
		{"ok", newDirID, base, "DRY RUN of adding controller 4 with directory id " + newDirID + " and endpoints: CONTROLLER://localhost:9095\n"},
		{"advertised", newDirID, base + "advertised.listeners=CONTROLLER://[::1]:9096\ncontroller.listener.names=controller,PLAIN\n",
			"DRY RUN of adding controller 4 with directory id " + newDirID + " and endpoints: CONTROLLER://[::1]:9096, PLAIN://127.0.0.1:9092\n"},
		{"no node.id", newDirID, "controller.listener.names=CONTROLLER\n", "node.id not found in configuration file. Is this a valid controller configuration file?\n"},
		{"bad node.id", newDirID, "node.id=four\n", "For input string: \"four\"\n"},
		{"negative", newDirID, "node.id=-4\n", "node.id was negative in configuration file. Is this a valid controller configuration file?\n"},
		{"broker", newDirID, "node.id=4\nprocess.roles=broker\n", "process.roles did not contain 'controller' in configuration file. Is this a valid controller configuration file?\n"},
		{"unformatted", "", base, "Unable to read meta.properties from LOGDIR\n"},
		{"no controller names", newDirID, "node.id=4\nlisteners=CONTROLLER://:9095\n", "controller.listener.names was not found. Is this a valid controller configuration file?\n"},
		{"unknown listener", newDirID, "node.id=4\nlisteners=CONTROLLER://:9095\ncontroller.listener.names=CONTROLLER,OTHER\n", "Cannot find information about controller listener name: OTHER\n"},
		// Kafka's tool takes any listener name (the node's own configuration is stricter).
		{"dotted listener name", newDirID, "node.id=4\nlisteners=C.A://:9095\ncontroller.listener.names=c.a\n",
			"DRY RUN of adding controller 4 with directory id " + newDirID + " and endpoints: C.A://localhost:9095\n"},
		{"listener without a name", newDirID, "node.id=4\nlisteners=CONTROLLER:9095\ncontroller.listener.names=CONTROLLER\n",
			"controller add-controller: listeners: unable to parse CONTROLLER:9095 to a broker endpoint\n"},
		{"listener with a bad port", newDirID, "node.id=4\nlisteners=CONTROLLER://:9095\nadvertised.listeners=CONTROLLER://h:x\ncontroller.listener.names=CONTROLLER\n",
			"controller add-controller: advertised.listeners: unable to parse CONTROLLER://h:x to a broker endpoint: \"h:x\": port \"x\" is not a number in 0-65535\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, logDir := writeControllerProps(t, c.dirID, c.props)
			code, out, errs := runCmd(t, "add-controller", "--bootstrap-controller", "127.0.0.1:1", "--command-config", path, "--dry-run")
			want := strings.ReplaceAll(c.want, "LOGDIR", logDir)
			if got := out + errs; got != want || (code == 0) != (errs == "") {
				t.Errorf("exit %d, output %q, want %q", code, got, want)
			}
		})
	}
}

func TestQuorumCommandFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"add-controller", "--bootstrap-controller", "127.0.0.1:1"}, "You must supply the configuration file of the controller you are adding when using add-controller.\n"},
		{[]string{"add-controller", "--bootstrap-controller", "127.0.0.1:1", "--command-config", "/nonexistent/x.properties"}, "Properties file /nonexistent/x.properties does not exist.\n"},
		{[]string{"add-controller", "--command-config", "x"}, "controller add-controller: one of the arguments --bootstrap-server --bootstrap-controller is required\n"},
		{[]string{"remove-controller", "--bootstrap-server", "a:1", "--bootstrap-controller", "b:1", "-i", "1", "-d", newDirID}, "controller remove-controller: argument --bootstrap-controller: not allowed with argument --bootstrap-server\n"},
		{[]string{"remove-controller", "--bootstrap-controller", "a:1", "-i", "1"}, "controller remove-controller: argument --controller-directory-id is required\n"},
		{[]string{"remove-controller", "--bootstrap-controller", "a:1", "-i", "-3", "-d", "xx"}, "Invalid negative --controller-id: -3\n"},
		{[]string{"remove-controller", "--bootstrap-controller", "a:1", "-i", "3", "-d", "xx"}, "Failed to parse --controller-directory-id: Input string `xx` decoded as 1 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID\n"},
		{[]string{"describe-quorum", "--bootstrap-controller", "a:1", "--status", "--replication"}, "Only one of --status or --replication should be specified with describe sub-command\n"},
		{[]string{"describe-quorum", "--bootstrap-controller", "a:1", "--status", "--human-readable"}, "The option --human-readable is only supported along with --replication\n"},
		{[]string{"describe-quorum", "--bootstrap-controller", "a:1"}, "One of --status or --replication must be specified with describe sub-command\n"},
	} {
		if code, out, errs := runCmd(t, c.args...); code != 1 || out != "" || errs != c.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want stderr %q", c.args, code, out, errs, c.want)
		}
	}
	// A dry run contacts nobody.
	code, out, errs := runCmd(t, "remove-controller", "--bootstrap-controller", "127.0.0.1:1", "-i", "3", "-d", "AAAAAAAAAAAAAAAAAAAAAQ==", "--dry-run", "--unregister")
	if want := "DRY RUN of removing KRaft controller 3 with directory id AAAAAAAAAAAAAAAAAAAAAQ\nDRY RUN of unregistering KRaft controller 3\n"; code != 0 || out != want {
		t.Errorf("dry run: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// fakeLeader leads per DescribeCluster and answers the voter-change
// requests with the codes given (and no error message).
type fakeLeader struct {
	port        int32
	add, remove int16
}

func (h fakeLeader) Handle(_ *network.ConnInfo, _ protocol.RequestHeader, req kmsg.Request, respond func(kmsg.Response)) {
	switch r := req.(type) {
	case *kmsg.DescribeClusterRequest:
		resp := r.ResponseKind().(*kmsg.DescribeClusterResponse)
		resp.ClusterID, resp.ControllerID, resp.EndpointType = "MkU3OEVBNTcwNTJENDM2Qg", 1, 2
		b := kmsg.NewDescribeClusterResponseBroker()
		b.NodeID, b.Host, b.Port = 1, "127.0.0.1", h.port
		resp.Brokers = append(resp.Brokers, b)
		respond(resp)
	case *kmsg.AddRaftVoterRequest:
		resp := r.ResponseKind().(*kmsg.AddRaftVoterResponse)
		resp.ErrorCode = h.add
		respond(resp)
	case *kmsg.RemoveRaftVoterRequest:
		resp := r.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
		resp.ErrorCode = h.remove
		respond(resp)
	default:
		respond(nil)
	}
}

func startFakeLeader(t *testing.T, h fakeLeader) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	h.port = int32(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	srv, err := network.NewServer(network.ServerConfig{
		Apis:      node.Apis(),
		Listeners: []network.ListenerConfig{{Name: "CONTROLLER", Addr: addr}},
		Logger:    zap.NewNop(),
	}, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return addr
}

// Answers print what Kafka's tool prints: the success line, or the
// exception's toString with the code's default message.
func TestVoterCommandsAgainstLeader(t *testing.T) {
	ok := startFakeLeader(t, fakeLeader{})
	path, _ := writeControllerProps(t, newDirID, "node.id=4\nlisteners=CONTROLLER://127.0.0.1:9095\ncontroller.listener.names=CONTROLLER\n")
	code, out, errs := runCmd(t, "add-controller", "--bootstrap-controller", ok, "--command-config", path)
	if code != 0 || out != "Added controller 4 with directory id "+newDirID+" and endpoints: CONTROLLER://127.0.0.1:9095\n" {
		t.Errorf("add: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCmd(t, "remove-controller", "--bootstrap-controller", ok, "-i", "4", "-d", newDirID)
	if code != 0 || out != "Removed KRaft controller 4 with directory id "+newDirID+"\n" {
		t.Errorf("remove: exit %d, stdout %q, stderr %q", code, out, errs)
	}

	bad := startFakeLeader(t, fakeLeader{add: kerr.DuplicateVoter.Code, remove: kerr.VoterNotFound.Code})
	code, out, errs = runCmd(t, "add-controller", "--bootstrap-controller", bad, "--command-config", path)
	if code != 1 || out != "" || errs != "org.apache.kafka.common.errors.DuplicateVoterException: The voter is already part of the set of voters.\n" {
		t.Errorf("add: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runCmd(t, "remove-controller", "--bootstrap-controller", bad, "-i", "4", "-d", newDirID)
	if code != 1 || errs != "org.apache.kafka.common.errors.VoterNotFoundException: The voter is not part of the set of voters.\n" {
		t.Errorf("remove: exit %d, stderr %q", code, errs)
	}
	// kraftd's server does not serve UnregisterController (nor does the fake).
	code, out, errs = runCmd(t, "remove-controller", "--bootstrap-controller", ok, "-i", "4", "-d", newDirID, "--unregister")
	if code != 1 || !strings.HasPrefix(out, "Removed ") || errs != "Failed to unregister controller 4: The node does not support UNREGISTER_CONTROLLER. To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id 4`.\n" {
		t.Errorf("unregister: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, _, errs = runCmd(t, "remove-controller", "--bootstrap-controller", bad, "-i", "4", "-d", newDirID, "--unregister")
	if code != 1 || errs != "Failed to remove KRaft voter 4: The voter is not part of the set of voters.. To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id 4`.\n" {
		t.Errorf("remove --unregister: exit %d, stderr %q", code, errs)
	}
}
