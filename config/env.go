package config

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kraftd/kraftd/javaprops"
)

// The apache/kafka container image configures a server from environment
// variables: its entrypoint (kafka.docker.KafkaDockerWrapper in Kafka 4.4)
// appends one "key=value" line per KAFKA_* variable to the mounted
// server.properties, so a variable overrides the file. These are its rules.

// envPrefix marks the variables that become server properties.
const envPrefix = "KAFKA_"

// envExcluded are KAFKA_* variables the image reads itself (JVM and log4j
// settings) and never turns into properties: Kafka 4.4's
// kafka.docker.Constants.ExcludeServerPropsEnv.
var envExcluded = map[string]bool{
	"KAFKA_VERSION":              true,
	"KAFKA_HEAP_OPTS":            true,
	"KAFKA_LOG4J_OPTS":           true,
	"KAFKA_OPTS":                 true,
	"KAFKA_JMX_OPTS":             true,
	"KAFKA_JVM_PERFORMANCE_OPTS": true,
	"KAFKA_GC_LOG_OPTS":          true,
	"KAFKA_LOG4J_ROOT_LOGLEVEL":  true,
	"KAFKA_LOG4J_LOGGERS":        true,
	"KAFKA_TOOLS_LOG4J_LOGLEVEL": true,
	"KAFKA_JMX_HOSTNAME":         true,
}

// ClusterIDEnv names the variable with which the image formats empty log
// directories on first start.
const ClusterIDEnv = "CLUSTER_ID"

// EnvKey maps a KAFKA_* variable name to its property key as the image
// does: the prefix dropped, lower-cased, then "_" -> ".", "..." -> "-" and
// ".." -> "_" in that order (so ___ is a dash and __ an underscore). ok is
// false for names the image does not map (no prefix, or excluded).
func EnvKey(name string) (key string, ok bool) {
	if !strings.HasPrefix(name, envPrefix) || envExcluded[name] {
		return "", false
	}
	key = strings.ToLower(strings.TrimPrefix(name, envPrefix))
	key = strings.ReplaceAll(key, "_", ".")
	key = strings.ReplaceAll(key, "...", "-")
	key = strings.ReplaceAll(key, "..", "_")
	return key, true
}

// envVar is one mapped variable.
type envVar struct{ name, key, value string }

// FromEnviron returns the server properties that the KAFKA_* variables of
// environ ("NAME=value" entries, as os.Environ returns) give, in the order
// of environ; Origins names each key's variable. Like the image it derives
// listeners from advertised.listeners on a node that is not only a
// controller. Each value is read as the text after "key=" on a properties
// line, so escapes such as \u0041 work as in the image, but a value that
// would spill into other lines there (a line break, or a trailing
// backslash) is an error naming the variable, as are names that give no
// usable key and two variables giving one key.
func FromEnviron(environ []string) (*Properties, error) {
	vars, err := kafkaVars(environ)
	if err != nil {
		return nil, err
	}
	vars = deriveListeners(vars)
	p := newProperties()
	p.Origins = map[string]string{}
	for _, v := range vars {
		value, err := envValue(v)
		if err != nil {
			return nil, err
		}
		p.Set(v.key, value)
		p.Origins[v.key] = "environment variable " + v.name
	}
	return p, nil
}

// kafkaVars picks the mapped variables out of environ; a name given twice
// keeps its last value, as the JVM's environment map does.
func kafkaVars(environ []string) ([]envVar, error) {
	var vars []envVar
	index := map[string]int{} // name -> position in vars
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		key, ok := EnvKey(name)
		if !ok {
			continue
		}
		if err := checkEnvKey(name, key); err != nil {
			return nil, err
		}
		if i, seen := index[name]; seen {
			vars[i].value = value
			continue
		}
		index[name] = len(vars)
		vars = append(vars, envVar{name, key, value})
	}
	return vars, checkDistinctKeys(vars)
}

// envKeyChars are the characters of a key a properties line keeps whole:
// anything else (blanks, '=', ':', '\', '#') would split or alter it.
var envKeyChars = regexp.MustCompile(`^[a-z0-9._-]+$`)

func checkEnvKey(name, key string) error {
	if key == "" {
		return fmt.Errorf("config: environment variable %s: no configuration key after %s", name, envPrefix)
	}
	if !envKeyChars.MatchString(key) {
		return fmt.Errorf("config: environment variable %s: key %q may hold only letters, digits, '.', '-' and '_'", name, key)
	}
	return nil
}

// checkDistinctKeys refuses two variables that name one key (KAFKA_NODE_ID
// and KAFKA_node_id): the image would keep whichever its hash map lists
// last.
func checkDistinctKeys(vars []envVar) error {
	byKey := map[string][]string{}
	for _, v := range vars {
		byKey[v.key] = append(byKey[v.key], v.name)
	}
	for _, v := range vars {
		if names := byKey[v.key]; len(names) > 1 {
			sort.Strings(names)
			return fmt.Errorf("config: environment variables %s each set %s; keep one", strings.Join(names, ", "), v.key)
		}
	}
	return nil
}

// envValue unescapes a variable's value as a properties file would.
func envValue(v envVar) (string, error) {
	if i := strings.IndexAny(v.value, "\r\n"); i >= 0 {
		return "", fmt.Errorf("config: environment variable %s: the value holds a line break (at byte %d); a value is one line", v.name, i)
	}
	bs := len(v.value) - len(strings.TrimRight(v.value, `\`))
	if bs%2 == 1 {
		return "", fmt.Errorf(`config: environment variable %s: the value ends in a lone backslash (write \\ for one)`, v.name)
	}
	value, err := javaprops.Unescape(v.value)
	if err != nil {
		return "", fmt.Errorf("config: environment variable %s: %w", v.name, err)
	}
	return value, nil
}

// listenerHost is the host part the image's sed ('s|://[^:]*:|://0.0.0.0:|g')
// replaces.
var listenerHost = regexp.MustCompile(`://[^:]*:`)

// deriveListeners adds KAFKA_LISTENERS as the image's configure script does
// when it is unset or empty on a node that is not only a controller: the
// advertised listeners with every host replaced by 0.0.0.0.
func deriveListeners(vars []envVar) []envVar {
	get := func(name string) (int, string) {
		for i, v := range vars {
			if v.name == name {
				return i, v.value
			}
		}
		return -1, ""
	}
	i, listeners := get("KAFKA_LISTENERS")
	_, roles := get("KAFKA_PROCESS_ROLES")
	_, advertised := get("KAFKA_ADVERTISED_LISTENERS")
	if listeners != "" || roles == "controller" || advertised == "" {
		return vars
	}
	derived := listenerHost.ReplaceAllString(advertised, "://0.0.0.0:")
	if i >= 0 {
		vars[i].value = derived
		return vars
	}
	return append(vars, envVar{"KAFKA_LISTENERS", "listeners", derived})
}

// DefaultProperties is the configuration a node gets when neither a file
// nor a KAFKA_* variable configures it, as the image falls back to its
// default server.properties: kraftd's equivalent of that file, a single
// controller (node 1) that is its own quorum on port 9093, its data under
// the image's volume.
func DefaultProperties() *Properties {
	p := newProperties()
	for _, kv := range [][2]string{
		{"process.roles", "controller"},
		{"node.id", "1"},
		{"controller.quorum.voters", "1@localhost:9093"},
		{"listeners", "CONTROLLER://:9093"},
		{"controller.listener.names", "CONTROLLER"},
		{"listener.security.protocol.map", "CONTROLLER:PLAINTEXT"},
		{"log.dirs", "/var/lib/kraftd/data"},
	} {
		p.Set(kv[0], kv[1])
	}
	return p
}

// Compose layers a node's configuration as the image does, then kraftd's
// flags: the file's properties (nil for none), overridden by the
// environment's (FromEnviron), overridden by --override arguments.
func Compose(file, env *Properties, overrides []string) (*Properties, error) {
	p := newProperties()
	p.Origins = map[string]string{}
	for _, layer := range []*Properties{file, env} {
		if layer == nil {
			continue
		}
		for _, k := range layer.Keys {
			p.Set(k, layer.Values[k])
			p.Lines[k] = layer.Lines[k]
			p.Origins[k] = layer.Origins[k]
		}
	}
	for _, o := range overrides {
		k, v, err := ParseOverride(o)
		if err != nil {
			return nil, err
		}
		p.Set(k, v)
		p.Lines[k] = 0
		delete(p.Origins, k)
	}
	return p, nil
}
