package metareflect

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
)

// Diff returns the path of the first field where records a and b differ,
// "" if none. nil and empty are the same for a field that is never
// nullable (both are written as empty), and differ where it is; floats
// compare by their bits.
func Diff(a, b any) string {
	va, vb := StructValue(a), StructValue(b)
	if va.Type() != vb.Type() {
		return fmt.Sprintf("types %s and %s", va.Type(), vb.Type())
	}
	return diffStruct("", va, vb)
}

func diffStruct(path string, a, b reflect.Value) string {
	for _, f := range Fields(a.Type()) {
		if d := diffValue(path+f.Name, a.Field(f.Index), b.Field(f.Index), !f.Nullable.Empty()); d != "" {
			return d
		}
	}
	ua, ub := a.FieldByName("UnknownTags"), b.FieldByName("UnknownTags")
	if ua.Len() != ub.Len() {
		return path + "UnknownTags"
	}
	for i := range ua.Len() {
		ea, eb := ua.Index(i), ub.Index(i)
		if ea.FieldByName("Tag").Uint() != eb.FieldByName("Tag").Uint() ||
			!bytes.Equal(ea.FieldByName("Data").Bytes(), eb.FieldByName("Data").Bytes()) {
			return fmt.Sprintf("%sUnknownTags[%d]", path, i)
		}
	}
	return ""
}

func diffValue(path string, a, b reflect.Value, nullable bool) string {
	switch a.Kind() {
	case reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v != %v", path, a.Float(), b.Float())
		}
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() || (!a.IsNil() && a.Elem().String() != b.Elem().String()) {
			return path
		}
	case reflect.Slice:
		if nullable && a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: null and not null", path)
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d and %d elements", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			p := fmt.Sprintf("%s[%d]", path, i)
			var d string
			if a.Index(i).Kind() == reflect.Struct {
				d = diffStruct(p+".", a.Index(i), b.Index(i))
			} else {
				d = diffValue(p, a.Index(i), b.Index(i), false)
			}
			if d != "" {
				return d
			}
		}
	default:
		if !a.Equal(b) {
			return fmt.Sprintf("%s: %v != %v", path, a.Interface(), b.Interface())
		}
	}
	return ""
}
