package configs

import (
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error is a Kafka error code with Kafka's message for it.
type Error struct {
	Err     *kerr.Error
	Message string
}

func (e *Error) Error() string { return e.Err.Error() + ": " + e.Message }

func invalidConfig(msg string) *Error  { return &Error{kerr.InvalidConfig, msg} }
func invalidRequest(msg string) *Error { return &Error{kerr.InvalidRequest, msg} }

// configException is ConfigException(name, value, message)'s text.
func configException(name, value, msg string) *Error {
	return invalidConfig("Invalid value " + value + " for configuration " + name + ": " + msg)
}

// value is a parsed configuration value (ConfigDef.parseType's result).
type value struct {
	typ  Type
	null bool
	b    bool
	i    int64
	f    float64
	s    string
	list []string
}

// String is the Java toString of the parsed object, as messages print it.
func (v value) String() string {
	if v.null {
		return "null"
	}
	switch v.typ {
	case Boolean:
		return strconv.FormatBool(v.b)
	case Int, Short, Long:
		return strconv.FormatInt(v.i, 10)
	case Double:
		return javaDouble(v.f)
	case List:
		return javaListString(v.list)
	}
	return v.s
}

// parseValue is ConfigDef.parseType then the duplicate removal ValidList
// keys get and the key's validator.
func parseValue(k *Key, raw string) (value, *Error) {
	v := value{typ: k.Type}
	t := javaTrim(raw)
	notNumber := func() (value, *Error) {
		return v, configException(k.Name, raw, "Not a number of type "+k.Type.String())
	}
	switch k.Type {
	case Boolean:
		switch {
		case strings.EqualFold(t, "true"):
			v.b = true
		case strings.EqualFold(t, "false"):
		default:
			return v, configException(k.Name, raw, "Expected value to be either true or false")
		}
	case String, Class, Password:
		v.s = t
	case Int, Short, Long:
		bits := map[Type]int{Int: 32, Short: 16, Long: 64}[k.Type]
		n, ok := javaParseInt(t, bits)
		if !ok {
			return notNumber()
		}
		v.i = n
	case Double:
		f, ok := javaParseDouble(t)
		if !ok {
			return notNumber()
		}
		v.f = f
	case List:
		v.list = javaSplitList(raw)
		if _, ok := k.Validator.(validList); ok {
			v.list = distinct(v.list)
		}
	}
	if k.Validator != nil {
		if err := k.Validator.check(k.Name, v); err != nil {
			return v, err
		}
	}
	return v, nil
}

// defaultValue is a key's parsed default (null when it has none).
func defaultValue(k *Key) value {
	if !k.HasDefault {
		return value{typ: k.Type, null: true}
	}
	v, _ := parseValue(&Key{Name: k.Name, Type: k.Type}, k.Default)
	return v
}

func distinct(l []string) []string {
	out := l[:0:0]
	for _, s := range l {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Validator is one of the ConfigDef validators the topic keys use.
type Validator interface {
	check(name string, v value) *Error
	// String is the validator's Java toString (the "Valid Values" column).
	String() string
}

// rangeValidator is ConfigDef.Range; Java compares as doubles.
type rangeValidator struct {
	min    int64
	max    int64
	hasMax bool
}

func atLeast(min int64) Validator      { return rangeValidator{min: min} }
func between(min, max int64) Validator { return rangeValidator{min, max, true} }

func (r rangeValidator) check(name string, v value) *Error {
	if v.null {
		return configException(name, "null", "Value must be non-null")
	}
	n := float64(v.i)
	if v.typ == Double {
		n = v.f
	}
	if n < float64(r.min) {
		return configException(name, v.String(), "Value must be at least "+strconv.FormatInt(r.min, 10))
	}
	if r.hasMax && n > float64(r.max) {
		return configException(name, v.String(), "Value must be no more than "+strconv.FormatInt(r.max, 10))
	}
	return nil
}

func (r rangeValidator) String() string {
	if r.hasMax {
		return "[" + strconv.FormatInt(r.min, 10) + ",...," + strconv.FormatInt(r.max, 10) + "]"
	}
	return "[" + strconv.FormatInt(r.min, 10) + ",...]"
}

// validString is ConfigDef.ValidString.in.
type validString []string

func (vs validString) check(name string, v value) *Error {
	if !slices.Contains(vs, v.s) {
		return configException(name, v.s, "String must be one of: "+strings.Join(vs, ", "))
	}
	return nil
}

func (vs validString) String() string { return "[" + strings.Join(vs, ", ") + "]" }

// validList is ConfigDef.ValidList.in: empty lists allowed, no empty item,
// each item one of the strings. (Duplicates were removed before.)
type validList []string

func (vl validList) check(name string, v value) *Error {
	for _, s := range v.list {
		if s == "" {
			return invalidConfig("Configuration '" + name + "' values must not be empty.")
		}
		if err := validString(vl).check(name, value{typ: String, s: s}); err != nil {
			return err
		}
	}
	return nil
}

func (vl validList) String() string { return validString(vl).String() }

// throttledReplicas is ThrottledReplicaListValidator: "*" or items of the
// form partition:broker (empty items pass).
type throttledReplicas struct{}

func (throttledReplicas) check(name string, v value) *Error {
	ok := true
	var joined strings.Builder
	for _, s := range v.list {
		s = javaTrim(s)
		joined.WriteString(s)
		ok = ok && replicaItem(s)
	}
	if !ok && joined.String() != "*" {
		return configException(name, v.String(), name+" must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
	}
	return nil
}

// replicaItem matches ([0-9]+:[0-9]+)? with ASCII digits.
func replicaItem(s string) bool {
	if s == "" {
		return true
	}
	p, b, ok := strings.Cut(s, ":")
	return ok && digitsOnly(p, isDec) && digitsOnly(b, isDec)
}

func (throttledReplicas) String() string {
	return "[partitionId]:[brokerId],[partitionId]:[brokerId],..."
}

// gzipLevel is CompressionType.GZIP.levelValidator: 1..9 or -1.
type gzipLevel struct{}

func (gzipLevel) check(name string, v value) *Error {
	if v.null {
		return configException(name, "null", "Value must be non-null")
	}
	if l := int32(v.i); l > 9 || (l < 1 && l != -1) {
		return configException(name, v.String(), "Value must be between 1 and 9 or equal to -1")
	}
	return nil
}

func (gzipLevel) String() string { return "[1,...,9] or -1" }
