// Package metadatatest walks protocol/metadata's generated records by
// reflection, from the schema facts in their `kafka` struct tags: random
// records for a version, Kafka's JSON form of a record (what its
// <Name>JsonConverter reads and writes), and a field-by-field diff. Tests
// only; it imports nothing of kraftd, so the metadata package's own tests
// use it too.
package metadatatest

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// versions is a schema version range; Lo > Hi is none.
type versions struct{ Lo, Hi int16 }

func (v versions) has(x int16) bool { return v.Lo <= x && x <= v.Hi }
func (v versions) empty() bool      { return v.Lo > v.Hi }

func parseVersions(s string) (versions, error) {
	if s == "" || s == "none" {
		return versions{1, 0}, nil
	}
	if lo, ok := strings.CutSuffix(s, "+"); ok {
		n, err := strconv.ParseInt(lo, 10, 16)
		return versions{int16(n), math.MaxInt16}, err
	}
	los, his, ok := strings.Cut(s, "-")
	if !ok {
		his = los
	}
	lo, err1 := strconv.ParseInt(los, 10, 16)
	hi, err2 := strconv.ParseInt(his, 10, 16)
	if err1 != nil || err2 != nil {
		return versions{}, fmt.Errorf("bad versions %q", s)
	}
	return versions{int16(lo), int16(hi)}, nil
}

// field is one schema field of a generated struct.
type field struct {
	index    int
	name     string
	versions versions
	nullable versions
	tagged   versions
	tag      int // -1: none
	def      string
}

// tagged reports whether the field is in the tagged section at version.
func (f *field) isTagged(version int16) bool { return f.tag >= 0 && f.tagged.has(version) }

// jsonName is the field's name in Kafka's JSON form (camelCaseName).
func (f *field) jsonName() string { return strings.ToLower(f.name[:1]) + f.name[1:] }

var cache sync.Map // reflect.Type -> []field

// fields lists the schema fields of a generated struct type; it panics on a
// type that is not one, a test bug.
func fields(t reflect.Type) []field {
	if fs, ok := cache.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("kafka")
		if !ok {
			if sf.Name != "UnknownTags" {
				panic(fmt.Sprintf("metadatatest: %s.%s has no kafka tag", t, sf.Name))
			}
			continue
		}
		f := field{index: i, name: sf.Name, tag: -1, nullable: versions{1, 0}, tagged: versions{1, 0}}
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
				f.versions, err = parseVersions(v)
			case "nullableVersions":
				f.nullable, err = parseVersions(v)
			case "taggedVersions":
				f.tagged, err = parseVersions(v)
			case "tag":
				f.tag, err = strconv.Atoi(v)
			case "default":
				f.def = v
			default:
				err = fmt.Errorf("unknown key %q", k)
			}
			if err != nil {
				panic(fmt.Sprintf("metadatatest: %s.%s: %v", t, sf.Name, err))
			}
		}
		fs = append(fs, f)
	}
	cache.Store(t, fs)
	return fs
}

// structValue is the addressable struct a record pointer points to.
func structValue(rec any) reflect.Value {
	v := reflect.ValueOf(rec)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("metadatatest: %T is not a pointer to a record", rec))
	}
	return v.Elem()
}

// maxKnownTag is the highest tag of a struct's fields, -1 for none.
func maxKnownTag(t reflect.Type) int {
	m := -1
	for _, f := range fields(t) {
		m = max(m, f.tag)
	}
	return m
}
