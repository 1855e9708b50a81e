package configs

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// This file reproduces the Java behaviour Kafka's answers depend on:
// String.trim, Integer/Long/Double parsing, Double.toString, regex list
// splitting, and HashMap iteration order.

// javaTrim is String.trim: it strips every char up to U+0020 at both ends,
// which is not the same set as unicode.IsSpace.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// javaDigit is Character.digit(c, 10) for a BMP char: the value of a
// Unicode decimal digit (any script), or -1. Java parses a string's UTF-16
// chars one by one, so a digit outside the BMP (a surrogate pair) is not one.
func javaDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r > 0xFFFF || !unicode.IsDigit(r) {
		return -1
	}
	// Unicode lays decimal digits out in runs of ten starting at zero.
	start := r
	for unicode.IsDigit(start - 1) {
		start--
	}
	return int(r-start) % 10
}

// javaParseInt is Long.parseLong / Integer.parseInt (bits 64 or 32) of an
// already trimmed string: an optional sign, then at least one digit.
func javaParseInt(s string, bits int) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	limit := uint64(1)<<(bits-1) - 1
	if neg {
		limit++
	}
	var v uint64
	for _, r := range s {
		d := javaDigit(r)
		if d < 0 {
			return 0, false
		}
		if v > (limit-uint64(d))/10 {
			return 0, false
		}
		v = v*10 + uint64(d)
	}
	if neg {
		return -int64(v), true // v == 1<<63 wraps to MinInt64, as wanted
	}
	return int64(v), true
}

// javaParseDouble is Double.parseDouble: Java's FloatingDecimal grammar
// (ASCII digits, optional f/F/d/D suffix, NaN, Infinity, hex with a binary
// exponent); out-of-range values become infinities or zero, never errors.
func javaParseDouble(s string) (float64, bool) {
	s = javaTrim(s)
	neg := false
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg = body[0] == '-'
		body = body[1:]
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(int(sign)), true
	}
	if n := len(body); n > 0 && strings.IndexByte("fFdD", body[n-1]) >= 0 {
		body = body[:n-1]
	}
	if !javaFloatSyntax(body) {
		return 0, false
	}
	f, err := strconv.ParseFloat(body, 64)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return sign * f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// javaFloatSyntax checks an unsigned, suffix-less Java float literal:
// digits[.digits][e[sign]digits] or .digits[...], or 0x hex with a p
// exponent. strconv accepts more (underscores, "inf"), so check first.
func javaFloatSyntax(s string) bool {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		m, exp, ok := cutAny(s[2:], "pP")
		if !ok || !signedDigits(exp) {
			return false
		}
		intPart, frac, dot := strings.Cut(m, ".")
		if !digitsOrEmpty(intPart, isHex) || !digitsOrEmpty(frac, isHex) {
			return false
		}
		return intPart != "" || (dot && frac != "")
	}
	m, exp, hasExp := cutAny(s, "eE")
	if hasExp && !signedDigits(exp) {
		return false
	}
	intPart, frac, _ := strings.Cut(m, ".")
	if !digitsOrEmpty(intPart, isDec) || !digitsOrEmpty(frac, isDec) {
		return false
	}
	return intPart != "" || frac != ""
}

func cutAny(s, seps string) (before, after string, found bool) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func isDec(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool { return isDec(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }

func digitsOrEmpty(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func digitsOnly(s string, ok func(byte) bool) bool { return s != "" && digitsOrEmpty(s, ok) }

func signedDigits(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return digitsOnly(s, isDec)
}

// javaDouble is Double.toString: plain notation for magnitudes in
// [1e-3, 1e7), otherwise d.dddE<exp>, always with a fractional digit.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(f)
	sign := ""
	if f < 0 {
		sign = "-"
	}
	if s, ok := jdkLongDigits(a); ok {
		return sign + s
	}
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(a, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return sign + s
	}
	s := strconv.FormatFloat(a, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return sign + mant + "E" + strconv.Itoa(e)
}

// insignificantDigits is FloatingDecimal's insignificantDigitsNumber table.
var insignificantDigits = [...]int{0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7,
	8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14,
	15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19}

// jdkLongDigits is the shortcut JDK 17's FloatingDecimal takes for a
// whole number in [2^53, 2^63): it prints the integer's digits, dropping
// only a fixed count of low ones (rounding), which can give more digits
// than the shortest form (8.3386623544416576E17, not 8.338662354441658E17).
// Below 2^53 that shortcut agrees with the shortest form.
func jdkLongDigits(a float64) (string, bool) {
	if a < 1<<53 || a >= 1<<63 || a != math.Trunc(a) {
		return "", false
	}
	binExp := math.Ilogb(a)
	v := int64(a)
	exp := 0
	if p2 := binExp - 54; p2 > 1 && p2 < len(insignificantDigits) {
		if n := insignificantDigits[p2]; n > 0 {
			pow10 := int64(math.Pow10(n))
			residue := v % pow10
			v /= pow10
			exp = n
			if residue >= pow10>>1 {
				v++
			}
		}
	}
	digits := strconv.FormatInt(v, 10)
	decExp := len(digits) + exp // the decimal point's place after the first digit
	digits = strings.TrimRight(digits, "0")
	frac := digits[1:]
	if frac == "" {
		frac = "0"
	}
	return digits[:1] + "." + frac + "E" + strconv.Itoa(decExp-1), true
}

// javaParseBoolean is Boolean.parseBoolean: "true" in any case, untrimmed;
// anything else is false.
func javaParseBoolean(s string) bool { return strings.EqualFold(s, "true") }

// isRegexSpace is Java regex's \s: [ \t\n\x0B\f\r].
func isRegexSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r'
}

// javaSplitList is ConfigDef's LIST parsing: trim, "" is the empty list,
// otherwise split on \s*,\s* keeping empty items.
func javaSplitList(s string) []string {
	t := javaTrim(s)
	if t == "" {
		return []string{}
	}
	return splitCommaWithWhitespace(t)
}

func splitCommaWithWhitespace(t string) []string {
	parts := strings.Split(t, ",")
	for i := range parts {
		p := parts[i]
		if i > 0 {
			for p != "" && isRegexSpace(p[0]) {
				p = p[1:]
			}
		}
		if i < len(parts)-1 {
			for p != "" && isRegexSpace(p[len(p)-1]) {
				p = p[:len(p)-1]
			}
		}
		parts[i] = p
	}
	return parts
}

// javaListString is List.toString: "[a, b]".
func javaListString(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

// utf16Len is String.length: UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// javaStringHash is String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func javaBucket(s string, capacity int) int {
	h := uint32(javaStringHash(s))
	return int((h ^ h>>16) & uint32(capacity-1))
}

// hashMapCapacity is the table size of a java.util.HashMap that received n
// distinct keys one put at a time: 16, doubled whenever size passes 3/4.
func hashMapCapacity(n int) int {
	c := 16
	for n > c*3/4 {
		c *= 2
	}
	return c
}

// putAllCapacity is the table size after HashMap.putAll of n keys into a
// new map (sized up front to tableSizeFor((int)(n/0.75f + 1))), then grown
// by puts to total keys.
func putAllCapacity(n, total int) int {
	c := 16 // putAll of nothing leaves the table to the first put
	if n > 0 {
		t := int(float32(n)/0.75 + 1)
		for c = 1; c < t; c *= 2 {
		}
	}
	for total > c*3/4 {
		c *= 2
	}
	return c
}

// javaHashOrder returns keys (distinct, in insertion order) in the order a
// java.util.HashMap with the given table size iterates them: by bucket,
// then by insertion within a bucket. (Buckets of eight or more keys turn
// into trees in Java; no configuration request comes near that.)
func javaHashOrder(keys []string, capacity int) []string {
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int {
		return javaBucket(a, capacity) - javaBucket(b, capacity)
	})
	return out
}

// timelineOrder returns keys (of a configuration resource the controller
// holds, in the order they were added) in the order Kafka's
// TimelineHashMap iterates them: slot by slot (each slot's keys last added
// first), a slot being the top bits of
// the hash times a 64-bit constant, in a table that starts with two slots
// and doubles (re-adding slot by slot) when it would pass 3/4 full. The
// table's size depends on the map's history, taken here to be the adds of
// its current keys.
func timelineOrder(keys []string) []string {
	table := make([][]string, 2)
	slot := func(s string, n int) int {
		const mul = 0x9E3779B97F4A7C15 // -7046029254386353131
		bits := 0
		for 1<<bits < n {
			bits++
		}
		return int(uint64(int64(javaStringHash(s))) * mul >> (64 - bits))
	}
	size := 0
	for _, k := range keys {
		if float64(size+1)*0.75 > float64(len(table)) {
			next := make([][]string, 2*len(table))
			for _, bucket := range table {
				for _, e := range bucket {
					i := slot(e, len(next))
					next[i] = append(next[i], e)
				}
			}
			table = next
		}
		i := slot(k, len(table))
		table[i] = append(table[i], k)
		size++
	}
	// The iterator hands out each slot's keys last first.
	var out []string
	for _, bucket := range table {
		for i := len(bucket) - 1; i >= 0; i-- {
			out = append(out, bucket[i])
		}
	}
	return out
}
