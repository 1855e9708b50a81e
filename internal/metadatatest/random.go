package metadatatest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"

	"github.com/kraftd/kraftd/protocol/metadata/metareflect"
)

// Fill sets the fields of rec (a pointer to a record holding its defaults)
// that version carries to random values: extremes (0, -1, the type's minimum
// and maximum) as often as ordinary ones, null or empty or a few elements for
// arrays, multi-byte UTF-8 strings, and tagged fields left at their default
// a third of the time. Null is chosen only where version allows it.
func Fill(r *rand.Rand, rec any, version int16) {
	fillStruct(r, metareflect.StructValue(rec), version)
}

func fillStruct(r *rand.Rand, v reflect.Value, version int16) {
	for _, f := range metareflect.Fields(v.Type()) {
		if !f.Versions.Has(version) || (f.IsTagged(version) && r.IntN(3) == 0) {
			continue
		}
		fillValue(r, v.Field(f.Index), f.Nullable.Has(version), version)
	}
}

func fillValue(r *rand.Rand, v reflect.Value, nullable bool, version int16) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 1)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(randInt(r, v.Type().Bits()))
	case reflect.Uint16, reflect.Uint32:
		v.SetUint(randUint(r, v.Type().Bits()))
	case reflect.Float64:
		v.SetFloat(randFloat(r))
	case reflect.Array: // a uuid
		var u [16]byte
		switch r.IntN(4) {
		case 0:
		case 1:
			u = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		default:
			for i := range u {
				u[i] = byte(r.Uint32())
			}
		}
		v.Set(reflect.ValueOf(u))
	case reflect.String:
		v.SetString(randString(r))
	case reflect.Pointer: // a nullable string
		if nullable && r.IntN(4) == 0 {
			v.SetZero()
			return
		}
		s := randString(r)
		v.Set(reflect.ValueOf(&s))
	case reflect.Slice:
		fillSlice(r, v, nullable, version)
	default:
		panic("metadatatest: cannot fill a " + v.Type().String())
	}
}

func fillSlice(r *rand.Rand, v reflect.Value, nullable bool, version int16) {
	switch {
	case nullable && r.IntN(4) == 0:
		v.SetZero()
		return
	case !nullable && r.IntN(10) == 0:
		v.SetZero() // nil where null is impossible is written as empty
		return
	}
	if v.Type().Elem().Kind() == reflect.Uint8 { // bytes
		b := make([]byte, []int{0, 1, 3, 16, 40}[r.IntN(5)])
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		v.SetBytes(b)
		return
	}
	setElems(v, []int{0, 1, 1, 2, 3, 4}[r.IntN(6)], func(e reflect.Value) {
		if e.Kind() == reflect.Struct {
			fillStruct(r, e, version)
		} else {
			fillValue(r, e, false, version)
		}
	})
}

// setElems makes v a slice of n elements, each struct element starting from
// its defaults, and sets each with set.
func setElems(v reflect.Value, n int, set func(e reflect.Value)) {
	s := reflect.MakeSlice(v.Type(), n, n)
	for i := range n {
		e := s.Index(i)
		if e.Kind() == reflect.Struct {
			e.Addr().Interface().(interface{ Default() }).Default()
		}
		set(e)
	}
	v.Set(s)
}

func randInt(r *rand.Rand, bits int) int64 {
	maxV := int64(1)<<(bits-1) - 1
	switch r.IntN(7) {
	case 0:
		return 0
	case 1:
		return -1
	case 2:
		return maxV
	case 3:
		return -maxV - 1
	case 4:
		return int64(r.IntN(100))
	}
	return r.Int64N(maxV) - r.Int64N(maxV)
}

func randUint(r *rand.Rand, bits int) uint64 {
	maxV := uint64(1)<<bits - 1
	switch r.IntN(4) {
	case 0:
		return 0
	case 1:
		return maxV
	case 2:
		return uint64(r.IntN(100))
	}
	return r.Uint64N(maxV)
}

func randFloat(r *rand.Rand) float64 {
	return []float64{0, 1, -1.5, 0.1, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
		1e21, r.NormFloat64() * 1e6, r.Float64()}[r.IntN(10)]
}

// pieces of random strings: ASCII, characters needing JSON escapes, and
// UTF-8 of two, three and four bytes (a Java surrogate pair).
var pieces = []string{"a", "topic-1", "_", ".", " ", `"`, `\`, "\n", "\t", "\x00", "é", "日本", "🙂", "ß"}

func randString(r *rand.Rand) string {
	if r.IntN(40) == 0 {
		return strings.Repeat("long", 250+r.IntN(500))
	}
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// AddUnknownTags gives rec and its struct elements random tagged fields the
// schema does not know (tags in no field's use, ascending), as a newer Kafka
// writes them.
func AddUnknownTags(r *rand.Rand, rec any) {
	addUnknown(r, metareflect.StructValue(rec))
}

func addUnknown(r *rand.Rand, v reflect.Value) {
	fs := metareflect.Fields(v.Type())
	for _, f := range fs {
		fv := v.Field(f.Index)
		if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct {
			for i := range fv.Len() {
				addUnknown(r, fv.Index(i))
			}
		}
	}
	if r.IntN(2) == 0 {
		return
	}
	known := map[int]bool{}
	for _, f := range fs {
		if f.Tag >= 0 {
			known[f.Tag] = true
		}
	}
	var tags []uint32
	for range 1 + r.IntN(3) {
		t := uint32(r.IntN(metareflect.MaxKnownTag(v.Type()) + 6))
		if r.IntN(5) == 0 {
			t = uint32(1000 + r.IntN(1<<20))
		}
		if !known[int(t)] && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	slices.Sort(tags)
	ut := v.FieldByName("UnknownTags")
	for _, t := range tags {
		e := reflect.New(ut.Type().Elem()).Elem()
		e.FieldByName("Tag").SetUint(uint64(t))
		data := make([]byte, r.IntN(9))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		e.FieldByName("Data").SetBytes(data)
		ut.Set(reflect.Append(ut, e))
	}
}

// FillEdge sets the fields of rec that version carries to one extreme: with
// most, the largest values (maximum numbers, 32767-byte strings, every
// tagged field set, arrays of three); otherwise the smallest (minimum
// numbers, empty strings and arrays, null wherever version allows it).
func FillEdge(rec any, version int16, most bool) {
	edgeStruct(metareflect.StructValue(rec), version, most)
}

func edgeStruct(v reflect.Value, version int16, most bool) {
	for _, f := range metareflect.Fields(v.Type()) {
		if f.Versions.Has(version) {
			edgeValue(v.Field(f.Index), f.Nullable.Has(version), version, most)
		}
	}
}

func edgeValue(v reflect.Value, nullable bool, version int16, most bool) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(most)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		m := int64(1)<<(v.Type().Bits()-1) - 1
		v.SetInt(map[bool]int64{true: m, false: -m - 1}[most])
	case reflect.Uint16, reflect.Uint32:
		v.SetUint(map[bool]uint64{true: 1<<v.Type().Bits() - 1, false: 0}[most])
	case reflect.Float64:
		v.SetFloat(map[bool]float64{true: math.MaxFloat64, false: -math.MaxFloat64}[most])
	case reflect.Array:
		var u [16]byte
		if most {
			for i := range u {
				u[i] = 0xff
			}
		}
		v.Set(reflect.ValueOf(u))
	case reflect.String:
		v.SetString(edgeString(most))
	case reflect.Pointer:
		if nullable && !most {
			v.SetZero()
			return
		}
		s := edgeString(most)
		v.Set(reflect.ValueOf(&s))
	case reflect.Slice:
		switch {
		case nullable && !most:
			v.SetZero()
		case v.Type().Elem().Kind() == reflect.Uint8:
			b := []byte{}
			if most {
				b = bytes.Repeat([]byte{0xff}, 1000)
			}
			v.SetBytes(b)
		default:
			setElems(v, map[bool]int{true: 3, false: 0}[most], func(e reflect.Value) {
				if e.Kind() == reflect.Struct {
					edgeStruct(e, version, most)
				} else {
					edgeValue(e, false, version, most)
				}
			})
		}
	}
}

// edgeString is the longest string Kafka writes (32767 bytes, ending in a
// four-byte character), or the empty one.
func edgeString(most bool) string {
	if !most {
		return ""
	}
	return strings.Repeat("k", 32767-4) + "🙂"
}
