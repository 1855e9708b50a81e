// Package metareflect walks protocol/metadata's generated records by
// reflection, from the schema facts in their `kafka` struct tags: Kafka's
// JSON form of a record (what its <Name>JsonConverter reads and writes, and
// what `controller metadata --records --json` prints) and a field-by-field
// diff. It imports nothing of kraftd, so the metadata package's own tests
// use it too; internal/metadatatest builds random records on it.
package metareflect

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Versions is a schema version range; Lo > Hi is none.
type Versions struct{ Lo, Hi int16 }

func (v Versions) Has(x int16) bool { return v.Lo <= x && x <= v.Hi }
func (v Versions) Empty() bool      { return v.Lo > v.Hi }

func parseVersions(s string) (Versions, error) {
	if s == "" || s == "none" {
		return Versions{1, 0}, nil
	}
	if lo, ok := strings.CutSuffix(s, "+"); ok {
		n, err := strconv.ParseInt(lo, 10, 16)
		return Versions{int16(n), math.MaxInt16}, err
	}
	los, his, ok := strings.Cut(s, "-")
	if !ok {
		his = los
	}
	lo, err1 := strconv.ParseInt(los, 10, 16)
	hi, err2 := strconv.ParseInt(his, 10, 16)
	if err1 != nil || err2 != nil {
		return Versions{}, fmt.Errorf("bad versions %q", s)
	}
	return Versions{int16(lo), int16(hi)}, nil
}

// Field is one schema field of a generated struct.
type Field struct {
	Index    int    // the struct field's index
	Name     string // the Go (and schema) name
	Versions Versions
	Nullable Versions
	Tagged   Versions
	Tag      int // -1: none
	Def      string
}

// IsTagged reports whether the field is in the tagged section at version.
func (f *Field) IsTagged(version int16) bool { return f.Tag >= 0 && f.Tagged.Has(version) }

// JSONName is the field's name in Kafka's JSON form (camelCaseName).
func (f *Field) JSONName() string { return strings.ToLower(f.Name[:1]) + f.Name[1:] }

var cache sync.Map // reflect.Type -> []Field

// Fields lists the schema fields of a generated struct type; it panics on a
// type that is not one, a bug of the caller.
func Fields(t reflect.Type) []Field {
	if fs, ok := cache.Load(t); ok {
		return fs.([]Field)
	}
	var fs []Field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("kafka")
		if !ok {
			if sf.Name != "UnknownTags" {
				panic(fmt.Sprintf("metareflect: %s.%s has no kafka tag", t, sf.Name))
			}
			continue
		}
		f := Field{Index: i, Name: sf.Name, Tag: -1, Nullable: Versions{1, 0}, Tagged: Versions{1, 0}}
		for tag != "" {
			var kv string
			if strings.HasPrefix(tag, "default=") {
				kv, tag = tag, ""
			} else {
				kv, tag, _ = strings.Cut(tag, ",")
			}
			k, v, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "versions":
				f.Versions, err = parseVersions(v)
			case "nullableVersions":
				f.Nullable, err = parseVersions(v)
			case "taggedVersions":
				f.Tagged, err = parseVersions(v)
			case "tag":
				f.Tag, err = strconv.Atoi(v)
			case "default":
				f.Def = v
			default:
				err = fmt.Errorf("unknown key %q", k)
			}
			if err != nil {
				panic(fmt.Sprintf("metareflect: %s.%s: %v", t, sf.Name, err))
			}
		}
		fs = append(fs, f)
	}
	cache.Store(t, fs)
	return fs
}

// StructValue is the addressable struct a record pointer points to.
func StructValue(rec any) reflect.Value {
	v := reflect.ValueOf(rec)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("metareflect: %T is not a pointer to a record", rec))
	}
	return v.Elem()
}

// MaxKnownTag is the highest tag of a struct's fields, -1 for none.
func MaxKnownTag(t reflect.Type) int {
	m := -1
	for _, f := range Fields(t) {
		m = max(m, f.Tag)
	}
	return m
}
