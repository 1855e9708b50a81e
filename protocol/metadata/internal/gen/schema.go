// Package gen generates protocol/metadata's record types, with their encoders
// and decoders, from Kafka's JSON message schemas, as Kafka's own
// MessageDataGenerator does for its Java classes. It knows what the metadata
// records use (every record flexible from version 0) and refuses the rest.
package gen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Versions is a schema version range, Kafka's Versions: "0+", "1-3", "2",
// or none (Lo > Hi).
type Versions struct{ Lo, Hi int16 }

var noVersions = Versions{1, 0}

func (v Versions) Empty() bool            { return v.Lo > v.Hi }
func (v Versions) Contains(x int16) bool  { return v.Lo <= x && x <= v.Hi }
func (v Versions) Covers(o Versions) bool { return o.Empty() || (v.Lo <= o.Lo && o.Hi <= v.Hi) }
func (v Versions) Intersect(o Versions) Versions {
	r := Versions{max(v.Lo, o.Lo), min(v.Hi, o.Hi)}
	if r.Empty() {
		return noVersions
	}
	return r
}

// String is the schema's spelling.
func (v Versions) String() string {
	switch {
	case v.Empty():
		return "none"
	case v.Hi == math.MaxInt16:
		return fmt.Sprintf("%d+", v.Lo)
	case v.Lo == v.Hi:
		return strconv.Itoa(int(v.Lo))
	}
	return fmt.Sprintf("%d-%d", v.Lo, v.Hi)
}

// parseVersions is Kafka's Versions.parse; def is the value for "".
func parseVersions(s string, def Versions) (Versions, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return def, nil
	case s == "none":
		return noVersions, nil
	case strings.HasSuffix(s, "+"):
		lo, err := strconv.ParseInt(strings.TrimSuffix(s, "+"), 10, 16)
		if err != nil || lo < 0 {
			return noVersions, fmt.Errorf("bad versions %q", s)
		}
		return Versions{int16(lo), math.MaxInt16}, nil
	}
	los, his, ok := strings.Cut(s, "-")
	if !ok {
		his = los
	}
	lo, err1 := strconv.ParseInt(los, 10, 16)
	hi, err2 := strconv.ParseInt(his, 10, 16)
	if err1 != nil || err2 != nil || lo < 0 || lo > hi {
		return noVersions, fmt.Errorf("bad versions %q", s)
	}
	return Versions{int16(lo), int16(hi)}, nil
}

// Kind is a field's wire type.
type Kind int

const (
	Bool Kind = iota
	Int8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Float64
	Uuid
	String
	Bytes
	Array
)

var primitiveKinds = map[string]Kind{
	"bool": Bool, "int8": Int8, "int16": Int16, "uint16": Uint16, "int32": Int32, "uint32": Uint32,
	"int64": Int64, "float64": Float64, "uuid": Uuid, "string": String, "bytes": Bytes,
}

// fixedSize is the encoded size of a fixed-size kind, 0 for the others.
func (k Kind) fixedSize() int {
	switch k {
	case Bool, Int8:
		return 1
	case Int16, Uint16:
		return 2
	case Int32, Uint32:
		return 4
	case Int64, Float64:
		return 8
	case Uuid:
		return 16
	}
	return 0
}

// Message is one schema file.
type Message struct {
	File   string
	APIKey int16
	Name   string
	Valid  Versions
	Struct *Struct
}

// Struct is a message's body or an array element struct.
type Struct struct {
	GoName   string
	Versions Versions // the versions in which the struct appears
	Fields   []*Field
}

// Field is one schema field.
type Field struct {
	Name     string
	About    string
	Kind     Kind
	Elem     Kind    // Array: the element kind, unless Struct is set
	Struct   *Struct // Array of structs: the element struct
	Versions Versions
	Nullable Versions
	Tagged   Versions
	Tag      int // -1: none
	Default  string
}

type rawMessage struct {
	APIKey           *int       `json:"apiKey"`
	Type             string     `json:"type"`
	Name             string     `json:"name"`
	ValidVersions    string     `json:"validVersions"`
	FlexibleVersions string     `json:"flexibleVersions"`
	Fields           []rawField `json:"fields"`
}

type rawField struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Versions         string          `json:"versions"`
	NullableVersions string          `json:"nullableVersions"`
	TaggedVersions   string          `json:"taggedVersions"`
	Tag              *int            `json:"tag"`
	Default          json.RawMessage `json:"default"`
	About            string          `json:"about"`
	MapKey           bool            `json:"mapKey"`     // no effect on the wire
	EntityType       string          `json:"entityType"` // no effect on the wire
	Fields           []rawField      `json:"fields"`
}

var goIdent = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// reserved are the names of the generated methods and fields a schema field
// must not take.
var reserved = map[string]bool{
	"APIKey": true, "TypeName": true, "ValidVersions": true, "Default": true,
	"AppendTo": true, "ReadFrom": true, "UnknownTags": true,
}

// Parse reads one schema (JSON with // and /* */ comments, as Kafka's
// generator accepts) and checks it as Kafka's generator does, plus what
// this generator supports.
func Parse(file string, src []byte) (*Message, error) {
	var raw rawMessage
	dec := json.NewDecoder(bytes.NewReader(stripComments(src)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the schema object", file)
	}
	m, err := raw.build(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return m, nil
}

func (raw *rawMessage) build(file string) (*Message, error) {
	if raw.Type != "metadata" {
		return nil, fmt.Errorf("type %q: only metadata records are supported", raw.Type)
	}
	if raw.APIKey == nil || *raw.APIKey < 0 || *raw.APIKey > math.MaxInt16 {
		return nil, fmt.Errorf("missing or bad apiKey")
	}
	if !goIdent.MatchString(raw.Name) {
		return nil, fmt.Errorf("bad name %q", raw.Name)
	}
	valid, err := parseVersions(raw.ValidVersions, noVersions)
	if err != nil || valid.Empty() {
		return nil, fmt.Errorf("validVersions %q: need a version range", raw.ValidVersions)
	}
	if raw.FlexibleVersions != "0+" {
		return nil, fmt.Errorf("flexibleVersions %q: only records flexible from version 0 (\"0+\") are supported", raw.FlexibleVersions)
	}
	m := &Message{File: file, APIKey: int16(*raw.APIKey), Name: raw.Name, Valid: valid}
	structs := map[string]bool{raw.Name: true}
	m.Struct, err = buildStruct(raw.Name, raw.Name, valid, raw.Fields, structs)
	return m, err
}

// buildStruct checks a struct's fields. Element struct types are named after
// the message, as they are scoped to it in Kafka's generated classes.
func buildStruct(goName, message string, versions Versions, raws []rawField, structs map[string]bool) (*Struct, error) {
	s := &Struct{GoName: goName, Versions: versions}
	names, tags := map[string]bool{}, map[int]string{}
	for i := range raws {
		f, err := buildField(&raws[i], message, versions, structs)
		if err != nil {
			return nil, err
		}
		if names[f.Name] {
			return nil, fmt.Errorf("%s: duplicate field %s", goName, f.Name)
		}
		names[f.Name] = true
		if f.Tag >= 0 {
			if other, dup := tags[f.Tag]; dup {
				return nil, fmt.Errorf("%s: fields %s and %s share tag %d", goName, other, f.Name, f.Tag)
			}
			tags[f.Tag] = f.Name
		}
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

func buildField(raw *rawField, message string, parent Versions, structs map[string]bool) (*Field, error) {
	f := &Field{Name: raw.Name, About: raw.About, Tag: -1}
	if !goIdent.MatchString(f.Name) || reserved[f.Name] {
		return nil, fmt.Errorf("bad or reserved field name %q", f.Name)
	}
	var err error
	if f.Tagged, err = parseVersions(raw.TaggedVersions, noVersions); err != nil {
		return nil, fmt.Errorf("%s: taggedVersions: %v", f.Name, err)
	}
	def := noVersions
	if !f.Tagged.Empty() {
		def = f.Tagged // Kafka: versions default to taggedVersions
	}
	if f.Versions, err = parseVersions(raw.Versions, def); err != nil || f.Versions.Empty() {
		return nil, fmt.Errorf("%s: versions %q: need a version range", f.Name, raw.Versions)
	}
	if f.Nullable, err = parseVersions(raw.NullableVersions, noVersions); err != nil {
		return nil, fmt.Errorf("%s: nullableVersions: %v", f.Name, err)
	}
	if err := f.setType(raw, message, structs); err != nil {
		return nil, fmt.Errorf("%s: %v", f.Name, err)
	}
	if !f.Nullable.Empty() && f.Kind != String && f.Kind != Bytes && f.Kind != Array {
		return nil, fmt.Errorf("%s: type %s cannot be nullable", f.Name, raw.Type)
	}
	if err := f.checkTag(raw.Tag); err != nil {
		return nil, fmt.Errorf("%s: %v", f.Name, err)
	}
	if f.Default, err = defaultString(raw.Default); err != nil {
		return nil, fmt.Errorf("%s: default: %v", f.Name, err)
	}
	if err := f.checkDefault(); err != nil {
		return nil, fmt.Errorf("%s: default %q: %v", f.Name, f.Default, err)
	}
	if f.Struct == nil && len(raw.Fields) > 0 {
		return nil, fmt.Errorf("%s: only arrays of structs have fields", f.Name)
	}
	if f.Struct != nil {
		// The element struct appears where the field does.
		if f.Struct, err = buildStruct(f.Struct.GoName, message, parent.Intersect(f.Versions), raw.Fields, structs); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *Field) setType(raw *rawField, message string, structs map[string]bool) error {
	if k, ok := primitiveKinds[raw.Type]; ok {
		f.Kind = k
		return nil
	}
	elem, isArray := strings.CutPrefix(raw.Type, "[]")
	if !isArray {
		return fmt.Errorf("type %q is not supported (struct fields and records are not)", raw.Type)
	}
	f.Kind = Array
	if k, ok := primitiveKinds[elem]; ok {
		f.Elem = k
		return nil
	}
	if !goIdent.MatchString(elem) || len(raw.Fields) == 0 {
		return fmt.Errorf("array type %q: need a primitive or a struct with fields", raw.Type)
	}
	goName := message + elem
	if structs[goName] {
		return fmt.Errorf("struct %s is defined twice", elem)
	}
	structs[goName] = true
	f.Struct = &Struct{GoName: goName}
	return nil
}

// checkTag applies FieldSpec.checkTagInvariants.
func (f *Field) checkTag(tag *int) error {
	if tag == nil {
		if !f.Tagged.Empty() {
			return fmt.Errorf("taggedVersions %s without a tag", f.Tagged)
		}
		return nil
	}
	switch t := f.Tagged.Intersect(f.Nullable); {
	case *tag < 0 || *tag > math.MaxInt32:
		return fmt.Errorf("tag %d out of range", *tag)
	case f.Tagged.Empty():
		return fmt.Errorf("a tag without taggedVersions")
	case f.Tagged.Hi != math.MaxInt16:
		return fmt.Errorf("taggedVersions %s is not open-ended", f.Tagged)
	case !f.Versions.Covers(f.Tagged):
		return fmt.Errorf("taggedVersions %s outside versions %s", f.Tagged, f.Versions)
	case !t.Empty() && t != f.Tagged:
		return fmt.Errorf("either all tagged versions are nullable or none is")
	}
	f.Tag = *tag
	return nil
}

// defaultString takes a default as Jackson would bind it to a String: a JSON
// string as is, a number or boolean as its text.
func defaultString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch v.(type) {
	case float64, bool:
		return string(raw), nil
	}
	return "", fmt.Errorf("%s is neither a string, a number nor a boolean", raw)
}

// checkDefault applies FieldSpec.fieldDefault's checks.
func (f *Field) checkDefault() error {
	d := f.Default
	if d == "null" {
		if f.Kind != String && f.Kind != Bytes && f.Kind != Array {
			return fmt.Errorf("only strings, bytes and arrays may default to null")
		}
		if !f.Nullable.Covers(f.Versions) {
			return fmt.Errorf("null is the default, but not every version is nullable")
		}
		return nil
	}
	switch f.Kind {
	case Bool:
		if d != "" && !strings.EqualFold(d, "true") && !strings.EqualFold(d, "false") {
			return fmt.Errorf("not a boolean")
		}
	case Int8, Int16, Uint16, Int32, Uint32, Int64:
		if d == "" {
			return nil
		}
		_, err := f.intDefault()
		return err
	case Float64:
		if d != "" {
			if _, err := strconv.ParseFloat(d, 64); err != nil {
				return fmt.Errorf("not a number")
			}
		}
	case Uuid:
		if d != "" {
			return fmt.Errorf("uuid defaults are not supported")
		}
	case Bytes, Array:
		if d != "" {
			return fmt.Errorf("the only defaults are empty and null")
		}
	}
	return nil
}

// intDefault parses an integer default, decimal or 0x-hexadecimal, in the
// kind's range.
func (f *Field) intDefault() (int64, error) {
	s, base := f.Default, 10
	if h, ok := strings.CutPrefix(s, "0x"); ok {
		s, base = h, 16
	}
	bits := map[Kind]int{Int8: 8, Int16: 16, Int32: 32, Int64: 64, Uint16: 16, Uint32: 32}[f.Kind]
	if f.Kind == Uint16 || f.Kind == Uint32 {
		u, err := strconv.ParseUint(s, base, bits)
		if err != nil {
			return 0, fmt.Errorf("not a uint%d", bits)
		}
		return int64(u), nil
	}
	v, err := strconv.ParseInt(s, base, bits)
	if err != nil {
		return 0, fmt.Errorf("not an int%d", bits)
	}
	return v, nil
}

// stripComments blanks // and /* */ comments outside JSON strings.
func stripComments(src []byte) []byte {
	out := make([]byte, 0, len(src))
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString:
			out = append(out, c)
			if c == '\\' && i+1 < len(src) {
				i++
				out = append(out, src[i])
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
			out = append(out, c)
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				return append(out, src[i:]...) // let the JSON parser report it
			}
			i += 2 + end + 1
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

// sortedTagged returns a struct's tagged fields in tag order, the order
// Kafka writes them in.
func (s *Struct) sortedTagged() []*Field {
	var out []*Field
	for _, f := range s.Fields {
		if f.Tag >= 0 {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tag < out[j].Tag })
	return out
}
