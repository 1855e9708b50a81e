package metadata

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/kraftd/kraftd/protocol/metadata/internal/gen"
	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
)

// The committed gen_*.go files are what the generator makes of the schemas
// now.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	want, err := gen.Files(".")
	if err != nil {
		t.Fatal(err)
	}
	have, err := gen.Generated(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: no schema generates it; run go generate ./protocol/metadata", name)
		}
	}
	if len(want) != 27+1+1 { // the records, the registry, the feature schema's test file
		t.Errorf("%d generated files", len(want))
	}
	for name, src := range want {
		if !bytes.Equal(readFile(t, name), src) {
			t.Errorf("%s is stale; run go generate ./protocol/metadata", name)
		}
	}
}

// The generator's features, through GenFeaturesRecord
// (testdata/schema/GenFeaturesRecord.json).

func h(t *testing.T, parts ...string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(strings.Join(parts, ""), " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// defaultBody is GenFeaturesRecord's body with every field at its default,
// before the tagged-field section.
func defaultBody(t *testing.T, version int16) []byte {
	parts := []string{"ff 01 00000010 ffff 00000000 3ff8000000000000 00000000000000000000000000000000"}
	if version >= 2 {
		parts = append(parts, "0000000000000007") // Added
	}
	if version == 1 || version == 2 {
		parts = append(parts, "0000") // Window
	}
	// Str "hello", NullStr null, EmptyNullStr and NullableSince1 "", Raw
	// empty, NullRaw null, Ints, Names, Outers empty.
	parts = append(parts, "06 68656c6c6f 00 01 01 01 00 01 01 01")
	if version <= 2 {
		parts = append(parts, "00000000") // UntaggedThenTagged in the body
	}
	return h(t, parts...)
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func encode(t *testing.T, r Record, version int16) []byte {
	t.Helper()
	b, err := r.AppendTo(nil, version)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGenDefaults(t *testing.T) {
	r := NewGenFeaturesRecord()
	if r.Int8Field != -1 || !r.BoolTrue || r.HexInt32 != 16 || r.Uint16Field != 65535 || r.Float != 1.5 || r.Added != 7 ||
		r.Str != "hello" || r.NullStr != nil || r.EmptyNullStr == nil || *r.EmptyNullStr != "" || r.Names == nil ||
		len(r.Names) != 0 || r.Ints != nil || r.TagLeader != -2 || *r.TagStrDefault != "x" || r.TagFromV2 != nil {
		t.Errorf("defaults: %+v", r)
	}
	for _, v := range []int16{0, 3} {
		if got, want := encode(t, r, v), append(defaultBody(t, v), 0); !bytes.Equal(got, want) {
			t.Errorf("v%d: default record %x, want %x", v, got, want)
		}
	}
	// Decoding sets what the version lacks to its default.
	var d GenFeaturesRecord
	if err := d.ReadFrom(append(defaultBody(t, 0), 0), 0); err != nil {
		t.Fatal(err)
	}
	if d.Added != 7 || d.TagLeader != -2 || *d.TagStrDefault != "x" || d.Window != 0 {
		t.Errorf("decoded at v0: %+v", d)
	}
}

// A tagged field is written only when it differs from its default; for a
// nullable one defaulting to null any value, empty included, differs.
func TestGenTaggedPresence(t *testing.T) {
	for _, c := range []struct {
		name    string
		set     func(r *GenFeaturesRecord)
		version int16
		tags    string // the tagged section
	}{
		{"leader", func(r *GenFeaturesRecord) { r.TagLeader = 5 }, 3, "01 00 04 00000005"},
		{"leader at its default", func(r *GenFeaturesRecord) { r.TagLeader = -2 }, 3, "00"},
		{"empty array", func(r *GenFeaturesRecord) { r.TagNullArr = []int32{} }, 3, "01 01 01 01"},
		{"null array", func(r *GenFeaturesRecord) { r.TagNullArr = nil }, 3, "00"},
		{"null string with a non-null default", func(r *GenFeaturesRecord) { r.TagStrDefault = nil }, 3, "01 02 01 00"},
		{"string at its default", func(r *GenFeaturesRecord) { r.TagStrDefault = ptr("x") }, 3, "00"},
		{"string", func(r *GenFeaturesRecord) { r.TagStrDefault = ptr("yz") }, 3, "01 02 03 03 797a"},
		{"array from version 2", func(r *GenFeaturesRecord) { r.TagFromV2 = [][16]byte{} }, 2, "01 03 01 01"},
		{"tagged from version 3", func(r *GenFeaturesRecord) { r.UntaggedThenTagged = 9 }, 3, "01 05 04 00000009"},
		{"bytes", func(r *GenFeaturesRecord) { r.TagBytes = []byte{7} }, 3, "01 06 02 02 07"},
		{"empty bytes are the default", func(r *GenFeaturesRecord) { r.TagBytes = []byte{} }, 3, "00"},
		{"struct array", func(r *GenFeaturesRecord) { r.TagStructs = []GenFeaturesRecordTagElem{{A: 1}} }, 3, "01 07 03 02 01 00"},
		{"in tag order", func(r *GenFeaturesRecord) { r.TagBytes, r.TagLeader = []byte{}, 1 }, 3, "01 00 04 00000001"},
		{"unknown tags among known ones", func(r *GenFeaturesRecord) {
			r.UntaggedThenTagged = 9
			r.UnknownTags = []RawTaggedField{{Tag: 4, Data: []byte{0xaa}}, {Tag: 9, Data: []byte{0xbb}}}
		}, 3, "03 04 01 aa 05 04 00000009 09 01 bb"},
	} {
		r := NewGenFeaturesRecord()
		c.set(r)
		want := append(defaultBody(t, c.version), h(t, c.tags)...)
		got := encode(t, r, c.version)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %x, want %x", c.name, got, want)
			continue
		}
		d := NewGenFeaturesRecord()
		if err := d.ReadFrom(got, c.version); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if diff := metareflect.Diff(d, r); diff != "" {
			t.Errorf("%s: decoded differs at %s", c.name, diff)
		}
	}
}

// nil is null where the version allows null, empty where the field is never
// nullable, and an error where it is nullable at other versions only.
func TestGenNullable(t *testing.T) {
	r := NewGenFeaturesRecord()
	r.Names, r.Ints, r.NullRaw = nil, nil, []byte{}
	got := encode(t, r, 3)
	want := defaultBody(t, 3)
	want[len(want)-4] = 1 // NullRaw empty, not null
	want[len(want)-2] = 0 // Names null
	if !bytes.Equal(got, append(want, 0)) {
		t.Errorf("%x, want %x", got, want)
	}
	r = NewGenFeaturesRecord()
	r.NullableSince1 = nil
	if _, err := r.AppendTo(nil, 0); err == nil || !strings.Contains(err.Error(), "NullableSince1: null is not allowed at this version") {
		t.Errorf("null at a version without null: %v", err)
	}
	b := encode(t, r, 1)
	if err := NewGenFeaturesRecord().ReadFrom(b, 0); err == nil {
		t.Errorf("null read at version 0")
	}
	d := NewGenFeaturesRecord()
	if err := d.ReadFrom(b, 1); err != nil || d.NullableSince1 != nil {
		t.Errorf("null at version 1: %v %v", d.NullableSince1, err)
	}
}

func TestGenNestedArrays(t *testing.T) {
	r := NewGenFeaturesRecord()
	in := GenFeaturesRecordInner{Value: 3, Since2: 4, Tagged: 6, UnknownTags: []RawTaggedField{{Tag: 2, Data: []byte{1}}}}
	r.Outers = []GenFeaturesRecordOuter{
		{Key: "k", Inners: []GenFeaturesRecordInner{in, {Value: -1, Tagged: 5}}, TaggedInts: []int32{7}},
		{Inners: []GenFeaturesRecordInner{}},
		{},
	}
	b := encode(t, r, 2)
	outers := h(t, "04",
		"02 6b 03", "0000000000000003 00000004 02 00 04 00000006 02 01 01", "ffffffffffffffff 00000000 00", "01 00 05 02 00000007",
		"01 01 00", "01 00 00")
	if !bytes.Contains(b, outers) {
		t.Errorf("%x does not hold %x", b, outers)
	}
	d := NewGenFeaturesRecord()
	if err := d.ReadFrom(b, 2); err != nil {
		t.Fatal(err)
	}
	if diff := metareflect.Diff(d, r); diff != "" {
		t.Errorf("decoded differs at %s", diff)
	}
	// A field of an element that the version lacks.
	if _, err := r.AppendTo(nil, 1); err == nil || !strings.Contains(err.Error(), "GenFeaturesRecord v1: Outers[0].Inners[0].Since2: a non-default value") {
		t.Errorf("v1: %v", err)
	}
}

func TestGenTagVersions(t *testing.T) {
	for _, c := range []struct {
		version int16
		tags    string
		want    string // "" decodes
	}{
		{1, "01 03 01 00", "TagFromV2: tag 3 is not valid at version 1"},
		{2, "01 03 01 00", ""},
		{2, "01 05 04 00000009", "UntaggedThenTagged: tag 5 is not valid at version 2"},
		{1, "01 04 00", ""}, // unknown
		{1, "01 00 05 00000001 00", "TagLeader: the tagged field holds 1 bytes after its value"},
	} {
		body := append(defaultBody(t, c.version), h(t, c.tags)...)
		d := NewGenFeaturesRecord()
		err := d.ReadFrom(body, c.version)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("v%d %s: %v, want %q", c.version, c.tags, err, c.want)
		}
	}
}
