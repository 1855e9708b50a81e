package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kraftd/kraftd/config"
)

// exitError carries a process exit code; its message (if any) was printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"random-uuid", "print a new random cluster id", runRandomUUID},
		{"format", "format log directories: --config FILE --cluster-id ID [--ignore-formatted]", runFormat},
		{"info", "describe formatted log directories: --config FILE", runInfo},
		{"start", "run a controller node: --config FILE and/or KAFKA_* environment variables (CLUSTER_ID formats on first start)", runStart},
		{"test-kraft-server-start", "run a quorum node with the test workload: --config FILE --replica-directory-id ID", runTestServer},
		{"describe-quorum", "describe the quorum: --bootstrap-controller HOST:PORT (--status | --replication)", runDescribeQuorum},
		{"add-controller", "add a voter: --bootstrap-controller HOST:PORT --command-config NEW_CONTROLLER_PROPS [--dry-run]", runAddController},
		{"remove-controller", "remove a voter: --bootstrap-controller HOST:PORT --controller-id ID --controller-directory-id DIR [--dry-run]", runRemoveController},
		{"metadata", "inspect a metadata log dir or snapshot: <view> (--dir DIR [--offset N] | --snapshot FILE) [--json] [--records]", runMetadata},
		{"version", "print the release, commit, Go version and platform", runVersion},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: controller <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-24s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'controller <command> --help' for a command's flags.")
}

// defaultGCPercent is the GC target used unless GOGC is set. The node's
// live heap is small (a few MB) while the commit path allocates read and
// batch buffers at tens of MB/s, so Go's default of 100 runs a collection
// every few ms; the sweeping and marking then took about a quarter of the
// leader's CPU and halved unthrottled throughput. The heap that 400 allows
// is bounded by defaultMemoryLimit.
const defaultGCPercent = 400

// defaultMemoryLimit is the soft memory limit used unless GOMEMLIMIT is
// set, while the live heap is small. With GOGC at 400 the heap may grow to
// five times the live data before a collection: at 200,000 records/s a
// node's RSS reached 50-62 MB (live heap 3-4 MB, heap goal ~20 MB, plus
// catch-up bursts). Under this limit the collector runs earlier only when
// the heap nears it, so steady load keeps GOGC's quiet and the same runs
// stay at 41-44 MB, CPU and throughput unchanged. Once the process needs
// more (an active controller's brokers and image), the limit follows what
// it needs (memoryLimitFor), recomputed after every collection.
const defaultMemoryLimit = 32 << 20

func main() {
	keepSysmonAwake(os.Args[1:], os.Stderr)
	limiter = runtimeDefaults(os.LookupEnv)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// runtimeDefaults applies defaultGCPercent and defaultMemoryLimit (and the
// limiter that raises it as the process grows) where the environment (GOGC,
// GOMEMLIMIT) does not say otherwise; it returns the limiter, nil when
// GOMEMLIMIT is set.
func runtimeDefaults(lookupEnv func(string) (string, bool)) *memoryLimiter {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	if _, set := lookupEnv("GOMEMLIMIT"); !set {
		return startMemoryLimiter(defaultMemoryLimit)
	}
	return nil
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(args[1:], stdout, stderr)
		var ee exitError
		var te toolError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, pflag.ErrHelp):
			return 0
		case errors.As(err, &ee):
			return ee.code
		case errors.As(err, &te):
			fmt.Fprintln(stderr, te.msg) // Kafka's tool prints these alone
			return 1
		default:
			fmt.Fprintf(stderr, "controller %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "controller: unknown command %q\n\n", name)
	usage(stderr)
	return 2
}

// newFlagSet returns a pflag set that reports errors instead of exiting.
func newFlagSet(name string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.SortFlags = false
	return fs
}

// configFlags are the flags every config-reading command shares.
type configFlags struct {
	path      string
	overrides []string
}

func (c *configFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&c.path, "config", "c", "", "Kafka properties file (required)")
	fs.StringArrayVar(&c.overrides, "override", nil, "override one property: key=value (repeatable)")
}

// load reads the file and applies the overrides.
func (c *configFlags) load() (*config.Properties, error) {
	if c.path == "" {
		return nil, errors.New("--config FILE is required")
	}
	return config.Load(c.path, c.overrides)
}

func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	return nil
}
