package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kraftd/kraftd/admin"
	"github.com/kraftd/kraftd/config"
	"github.com/kraftd/kraftd/storage"
	"github.com/kraftd/kraftd/uuid"
)

// connFlags are kafka-metadata-quorum's connection flags: exactly one of
// --bootstrap-server and --bootstrap-controller, and --command-config.
type connFlags struct {
	server, controller string
	commandConfig      string
	timeout            time.Duration
}

func (c *connFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.server, "bootstrap-server", "", "comma-separated HOST:PORT of brokers (they forward to the active controller)")
	fs.StringVar(&c.controller, "bootstrap-controller", "", "comma-separated HOST:PORT of controllers")
	fs.StringVar(&c.commandConfig, "command-config", "", "properties file: client security (security.protocol, ssl.*, sasl.mechanism, sasl.jaas.config); for add-controller also the new controller's server properties")
	// Kafka's admin client gives up after default.api.timeout.ms, 60 s.
	fs.DurationVar(&c.timeout, "timeout", 60*time.Second, "give up after this long")
}

// bootstrap checks the connection flags and returns where requests start.
func (c *connFlags) bootstrap() (admin.Bootstrap, error) {
	flag, list := "--bootstrap-controller", c.controller
	switch {
	case c.server != "" && c.controller != "":
		return admin.Bootstrap{}, errors.New("argument --bootstrap-controller: not allowed with argument --bootstrap-server")
	case c.server != "":
		flag, list = "--bootstrap-server", c.server
	case c.controller == "":
		return admin.Bootstrap{}, errors.New("one of the arguments --bootstrap-server --bootstrap-controller is required")
	}
	b := admin.Bootstrap{Brokers: c.server != ""}
	for _, a := range config.SplitList(list) {
		if _, _, err := config.ParseHostPort(a); err != nil {
			return admin.Bootstrap{}, fmt.Errorf("%s: %w", flag, err)
		}
		b.Addrs = append(b.Addrs, a)
	}
	if len(b.Addrs) == 0 {
		return admin.Bootstrap{}, fmt.Errorf("%s: no HOST:PORT given", flag)
	}
	return b, nil
}

// load checks the connection flags and loads --command-config: where
// requests start and the client's properties.
func (c *connFlags) load() (admin.Bootstrap, *config.Properties, error) {
	b, err := c.bootstrap()
	if err != nil {
		return admin.Bootstrap{}, nil, err
	}
	props, err := c.properties()
	return b, props, err
}

// properties loads --command-config, empty when not given.
func (c *connFlags) properties() (*config.Properties, error) {
	if c.commandConfig == "" {
		return config.ParseProperties("")
	}
	if _, err := os.Stat(c.commandConfig); err != nil {
		return nil, toolError{fmt.Sprintf("Properties file %s does not exist.", c.commandConfig)}
	}
	return config.LoadProperties(c.commandConfig)
}

// runAddController is `kafka-metadata-quorum add-controller`: it reads the
// new controller's id, metadata directory id and controller endpoints from
// its server properties (--command-config) and sends AddRaftVoter.
func runAddController(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("add-controller", stderr)
	var conn connFlags
	conn.register(fs)
	dryRun := fs.Bool("dry-run", false, "print what would be done, but do not do it")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, props, err := conn.load()
	if err != nil {
		return err
	}
	if conn.commandConfig == "" {
		return toolError{"You must supply the configuration file of the controller you are adding when using add-controller."}
	}
	v, err := readNewVoter(props)
	if err != nil {
		return err
	}
	if !*dryRun {
		ctx, cancel, err := conn.context(props)
		if err != nil {
			return err
		}
		defer cancel()
		if err := admin.AddRaftVoter(ctx, b, v.id, v.dir, v.listeners()); err != nil {
			return javaToolError(err)
		}
	}
	fmt.Fprintln(stdout, v.describe(*dryRun))
	return nil
}

// runRemoveController is `kafka-metadata-quorum remove-controller`:
// RemoveRaftVoter for --controller-id and --controller-directory-id, then,
// with --unregister, UnregisterController.
func runRemoveController(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("remove-controller", stderr)
	var conn connFlags
	conn.register(fs)
	id := fs.Int32P("controller-id", "i", 0, "the id of the controller to remove (required)")
	dirText := fs.StringP("controller-directory-id", "d", "", "the directory id of the controller to remove (required)")
	dryRun := fs.Bool("dry-run", false, "print what would be done, but do not do it")
	unregister := fs.Bool("unregister", false, "also unregister the controller after removing it from the voter set")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, f := range []string{"controller-id", "controller-directory-id"} {
		if !fs.Changed(f) {
			return fmt.Errorf("argument --%s is required", f)
		}
	}
	b, props, err := conn.load()
	if err != nil {
		return err
	}
	if *id < 0 {
		return toolError{fmt.Sprintf("Invalid negative --controller-id: %d", *id)}
	}
	dir, err := parseJavaUUID(*dirText)
	if err != nil {
		return toolError{"Failed to parse --controller-directory-id: " + err.Error()}
	}
	ctx, cancel, err := conn.context(props)
	if err != nil {
		return err
	}
	defer cancel()
	if !*dryRun {
		if err := removeVoter(ctx, b, *id, dir, *unregister); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%sKRaft controller %d with directory id %s\n", pick(*dryRun, "DRY RUN of removing ", "Removed "), *id, dir)
	if !*unregister {
		return nil
	}
	if !*dryRun {
		if err := admin.UnregisterController(ctx, b, *id); err != nil {
			return toolError{fmt.Sprintf("Failed to unregister controller %d: %s. %s", *id, javaMessage(err), unregisterHint(*id))}
		}
	}
	fmt.Fprintf(stdout, "%sKRaft controller %d\n", pick(*dryRun, "DRY RUN of unregistering ", "Unregistered "), *id)
	return nil
}

// removeVoter sends RemoveRaftVoter. When the caller meant to unregister
// too, a voter that is already gone (or a quorum without voter changes)
// gets Kafka's hint to unregister by hand instead.
func removeVoter(ctx context.Context, b admin.Bootstrap, id int32, dir uuid.UUID, unregister bool) error {
	err := admin.RemoveRaftVoter(ctx, b, id, dir)
	if err == nil {
		return nil
	}
	if unregister && (errors.Is(err, kerr.UnsupportedVersion) || errors.Is(err, kerr.VoterNotFound)) {
		return toolError{fmt.Sprintf("Failed to remove KRaft voter %d: %s. %s", id, javaMessage(err), unregisterHint(id))}
	}
	return javaToolError(err)
}

func unregisterHint(id int32) string {
	return fmt.Sprintf("To unregister the controller from the cluster, run `kafka-cluster.sh unregister-controller --id %d`.", id)
}

// javaToolError is the first line Kafka's tool prints for a failed admin
// call: the exception's toString. Failures without a Kafka error code
// (no connection, time out) keep kraftd's own text.
func javaToolError(err error) error {
	var re *admin.ResponseError
	if errors.As(err, &re) {
		return toolError{javaExceptionText(re)}
	}
	return err
}

// javaMessage is the exception's getMessage for a failed admin call.
func javaMessage(err error) string {
	var re *admin.ResponseError
	if errors.As(err, &re) {
		return javaExceptionMessage(re)
	}
	return err.Error()
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// newVoter is what add-controller learns from the new controller's server
// properties.
type newVoter struct {
	id        int32
	dir       uuid.UUID
	endpoints []config.Endpoint // in controller.listener.names order
}

func (v newVoter) listeners() []kmsg.AddRaftVoterRequestListener {
	out := make([]kmsg.AddRaftVoterRequestListener, 0, len(v.endpoints))
	for _, e := range v.endpoints {
		l := kmsg.NewAddRaftVoterRequestListener()
		l.Name, l.Host, l.Port = e.Name, e.Host, uint16(e.Port)
		out = append(out, l)
	}
	return out
}

// describe is add-controller's line of output.
func (v newVoter) describe(dryRun bool) string {
	eps := make([]string, len(v.endpoints))
	for i, e := range v.endpoints {
		eps[i] = e.Name + "://" + e.HostPort()
	}
	return fmt.Sprintf("%s controller %d with directory id %s and endpoints: %s",
		pick(dryRun, "DRY RUN of adding", "Added"), v.id, v.dir, strings.Join(eps, ", "))
}

// readNewVoter reads the new controller's properties in the order and with
// the messages of Kafka's tool.
func readNewVoter(p *config.Properties) (newVoter, error) {
	var v newVoter
	var err error
	if v.id, err = controllerID(p); err != nil {
		return v, err
	}
	dir, err := metadataDirectory(p)
	if err != nil {
		return v, err
	}
	mp, err := storage.ReadMetaProperties(dir)
	if err != nil {
		return v, toolError{"Unable to read meta.properties from " + dir}
	}
	if mp.DirectoryID.IsZero() {
		return v, toolError{"No directory id found in " + dir}
	}
	v.dir = mp.DirectoryID
	v.endpoints, err = controllerEndpoints(p)
	return v, err
}

const notAControllerConfig = "Is this a valid controller configuration file?"

func controllerID(p *config.Properties) (int32, error) {
	s, ok := p.Get(config.NodeIDKey)
	if !ok {
		return 0, toolError{"node.id not found in configuration file. " + notAControllerConfig}
	}
	id, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		// Integer.parseInt's NumberFormatException.
		return 0, toolError{fmt.Sprintf("For input string: %q", s)}
	}
	if id < 0 {
		return 0, toolError{"node.id was negative in configuration file. " + notAControllerConfig}
	}
	if roles, _ := p.Get(config.ProcessRolesKey); !strings.Contains(roles, "controller") {
		return 0, toolError{"process.roles did not contain 'controller' in configuration file. " + notAControllerConfig}
	}
	return int32(id), nil
}

// metadataDirectory is metadata.log.dir, else the first of log.dirs (Kafka's
// tool does not fall back to log.dir).
func metadataDirectory(p *config.Properties) (string, error) {
	if d, ok := p.Get(config.MetadataLogDirKey); ok {
		return d, nil
	}
	if d, ok := p.Get(config.LogDirsKey); ok {
		first, _, _ := strings.Cut(strings.TrimSpace(d), ",")
		return first, nil
	}
	return "", toolError{"Neither metadata.log.dir nor log.dirs were found. " + notAControllerConfig}
}

// controllerEndpoints resolves each of controller.listener.names to its
// advertised listener, else its listener; an empty host is "localhost".
func controllerEndpoints(p *config.Properties) ([]config.Endpoint, error) {
	byName := map[string]config.Endpoint{}
	for _, key := range []string{config.ListenersKey, config.AdvertisedListenersKey} {
		list, _ := p.Get(key)
		for _, s := range config.SplitList(list) {
			e, err := parseEndpoint(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			byName[e.Name] = e
		}
	}
	names, ok := p.Get(config.ControllerListenerNamesKey)
	if !ok {
		return nil, toolError{"controller.listener.names was not found. " + notAControllerConfig}
	}
	var out []config.Endpoint
	seen := map[config.Endpoint]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.ToUpper(n)
		e, ok := byName[n]
		if !ok {
			return nil, toolError{"Cannot find information about controller listener name: " + n}
		}
		if e.Host == "" {
			e.Host = "localhost"
		}
		if !seen[e] { // Kafka collects them in a set
			seen[e] = true
			out = append(out, e)
		}
	}
	return out, nil
}

// parseEndpoint parses a listener entry with the node's parser
// (config.ParseListener), in the words of Kafka's tool.
func parseEndpoint(s string) (config.Endpoint, error) {
	e, err := config.ParseListener(s)
	var le *config.ListenerError
	switch {
	case err == nil:
		return e, nil
	case errors.As(err, &le) && le.Err != nil:
		return config.Endpoint{}, fmt.Errorf("unable to parse %s to a broker endpoint: %w", s, le.Err)
	default:
		return config.Endpoint{}, fmt.Errorf("unable to parse %s to a broker endpoint", s)
	}
}
