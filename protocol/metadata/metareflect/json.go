package metareflect

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// KafkaJSON is rec in Kafka's JSON form at version, as its generated
// <Name>JsonConverter.write produces and read takes: the fields version
// carries, by camelCase name, but for tagged fields at their default; uuids in Kafka's base64url form, bytes in
// base64, doubles always with a fraction or exponent (Kafka reads only those
// as float64). Unknown tagged fields have no JSON form and are left out; NaN
// and infinities have none either and are an error.
func KafkaJSON(rec any, version int16) ([]byte, error) {
	var b bytes.Buffer
	if err := writeStruct(&b, StructValue(rec), version); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeStruct(b *bytes.Buffer, v reflect.Value, version int16) error {
	def := reflect.New(v.Type())
	def.Interface().(interface{ Default() }).Default()
	b.WriteByte('{')
	first := true
	for _, f := range Fields(v.Type()) {
		if !f.Versions.Has(version) {
			continue
		}
		// Kafka leaves out tagged fields holding their default.
		if f.IsTagged(version) && diffValue(f.Name, v.Field(f.Index), def.Elem().Field(f.Index), !f.Nullable.Empty()) == "" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(b, "%q:", f.JSONName())
		if err := writeValue(b, v.Field(f.Index), f.Nullable.Has(version), version); err != nil {
			return fmt.Errorf("%s: %v", f.Name, err)
		}
	}
	b.WriteByte('}')
	return nil
}

func writeValue(b *bytes.Buffer, v reflect.Value, nullable bool, version int16) error {
	switch v.Kind() {
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint16, reflect.Uint32:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%v has no JSON form", f)
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		b.WriteString(s)
	case reflect.Array:
		u := v.Interface().([16]byte)
		writeString(b, base64.RawURLEncoding.EncodeToString(u[:]))
	case reflect.String:
		writeString(b, v.String())
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("null")
		} else {
			writeString(b, v.Elem().String())
		}
	case reflect.Slice:
		switch {
		case v.IsNil() && nullable:
			b.WriteString("null")
		case v.Type().Elem().Kind() == reflect.Uint8:
			writeString(b, base64.StdEncoding.EncodeToString(v.Bytes()))
		default:
			b.WriteByte('[')
			for i := range v.Len() {
				if i > 0 {
					b.WriteByte(',')
				}
				e := v.Index(i)
				var err error
				if e.Kind() == reflect.Struct {
					err = writeStruct(b, e, version)
				} else {
					err = writeValue(b, e, false, version)
				}
				if err != nil {
					return fmt.Errorf("[%d]: %v", i, err)
				}
			}
			b.WriteByte(']')
		}
	default:
		return fmt.Errorf("no JSON form for %s", v.Type())
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	j, _ := json.Marshal(s) // valid UTF-8 in, so no error
	b.Write(j)
}

// JSONEqual compares two JSON documents by value: objects by key, numbers
// by value (Jackson writes 1.0E21 where Go writes 1e+21), everything else
// exactly. It returns the path of the first difference, "" if none.
func JSONEqual(a, b []byte) (string, error) {
	var x, y any
	for _, p := range []struct {
		src []byte
		dst *any
	}{{a, &x}, {b, &y}} {
		d := json.NewDecoder(bytes.NewReader(p.src))
		d.UseNumber()
		if err := d.Decode(p.dst); err != nil {
			return "", err
		}
	}
	return jsonDiff("", x, y), nil
}

func jsonDiff(path string, x, y any) string {
	switch xv := x.(type) {
	case map[string]any:
		yv, ok := y.(map[string]any)
		if !ok || len(xv) != len(yv) {
			return path + " (keys differ)"
		}
		for k, xe := range xv {
			ye, ok := yv[k]
			if !ok {
				return path + "." + k + " (missing)"
			}
			if d := jsonDiff(path+"."+k, xe, ye); d != "" {
				return d
			}
		}
	case []any:
		yv, ok := y.([]any)
		if !ok || len(xv) != len(yv) {
			return path + " (lengths differ)"
		}
		for i := range xv {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i]); d != "" {
				return d
			}
		}
	case json.Number:
		yv, ok := y.(json.Number)
		if !ok {
			return path
		}
		// Integers compare exactly; doubles as the float64 each text
		// rounds to (Java 17's Double.toString is not always the shortest
		// text).
		ix, err1 := xv.Int64()
		iy, err2 := yv.Int64()
		if err1 == nil && err2 == nil {
			if ix != iy {
				return fmt.Sprintf("%s (%s != %s)", path, xv, yv)
			}
			return ""
		}
		fx, err1 := xv.Float64()
		fy, err2 := yv.Float64()
		if err1 != nil || err2 != nil || math.Float64bits(fx) != math.Float64bits(fy) {
			return fmt.Sprintf("%s (%s != %s)", path, xv, yv)
		}
	default:
		if x != y {
			return fmt.Sprintf("%s (%v != %v)", path, x, y)
		}
	}
	return ""
}
