package quotas

import "strings"

// Kafka checks an ip entity's name with InetAddress.getByName: IP literals
// are parsed (JDK 17's IPAddressUtil rules, which are not Go's: "127.1" is
// 127.0.0.1, an IPv4 part of an IPv6 address may have leading zeros), a
// malformed literal fails, and anything else is looked up as a host name.
// This file reproduces the literal rules; the look-up is the caller's.

// ValidIPEntity reports whether Kafka accepts name as an ip entity:
// InetAddress.getByName succeeds. lookup resolves what is not a literal
// (a host name, or an IPv6 literal scoped to an interface by name).
func ValidIPEntity(name string, lookup func(string) bool) bool {
	switch ClassifyHost(name) {
	case Literal:
		return true
	case Malformed:
		return false
	}
	return lookup(name)
}

// HostClass is how InetAddress.getByName treats a name.
type HostClass int

const (
	// Literal is an IP address written out: valid without a look-up.
	Literal HostClass = iota
	// Malformed is a literal that does not parse: refused without one.
	Malformed
	// Lookup is a host name (or a literal scoped to a named interface):
	// valid when the system resolves it.
	Lookup
)

// ClassifyHost is the literal part of JDK 17's InetAddress.getAllByName.
func ClassifyHost(host string) HostClass {
	if host == "" {
		return Literal // the loopback address
	}
	bracketed := false
	if host[0] == '[' {
		if len(host) <= 2 || host[len(host)-1] != ']' {
			return Malformed
		}
		host, bracketed = host[1:len(host)-1], true
	}
	if hexDigit(host[0]) < 0 && host[0] != ':' {
		if bracketed {
			return Malformed
		}
		return Lookup
	}
	if !bracketed {
		if _, ok := ipv4(host); ok {
			return Literal
		}
		if bsdIPv4(host) { // an ambiguous form Java refuses
			return Malformed
		}
	}
	namedZone := false
	if i := strings.IndexByte(host, '%'); i >= 0 {
		namedZone = !numericZone(host[i+1:])
	}
	_, mapped, ok := ipv6(host)
	if !ok {
		if strings.IndexByte(host, ':') >= 0 || bracketed {
			return Malformed
		}
		return Lookup
	}
	if mapped && strings.IndexByte(host, '%') >= 0 {
		return Malformed // an IPv4-mapped address takes no zone
	}
	if namedZone {
		return Lookup // the interface must exist
	}
	return Literal
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// ipv4 is IPAddressUtil.textToNumericFormatV4: one to four decimal parts,
// the last filling the remaining bytes ("1.2.3", "10.65536", "3232235777").
func ipv4(s string) ([4]byte, bool) {
	var out [4]byte
	if len(s) == 0 || len(s) > 15 {
		return out, false
	}
	var val int64
	part, fresh := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if fresh || val > 0xff || part == 3 {
				return out, false
			}
			out[part] = byte(val)
			part++
			val, fresh = 0, true
			continue
		}
		if c < '0' || c > '9' {
			return out, false
		}
		val = val*10 + int64(c-'0')
		fresh = false
	}
	if fresh || val >= 1<<((4-part)*8) {
		return out, false
	}
	for i := 3; i >= part; i-- {
		out[i] = byte(val)
		val >>= 8
	}
	return out, true
}

// bsdIPv4 is IPAddressUtil.isBsdParsableV4: a form the C library would
// read as IPv4 (octal or hexadecimal parts) that Java refuses as
// ambiguous rather than looking it up.
func bsdIPv4(s string) bool {
	if s[0] < '0' || s[0] > '9' {
		return false
	}
	if last := s[len(s)-1]; last == '.' || hexDigit(last) < 0 {
		return false
	}
	fields := strings.Split(s, ".")
	if len(fields) > 4 {
		return false
	}
	for i, f := range fields {
		radix, digits := 10, f
		switch {
		case len(f) >= 2 && f[0] == '0' && (f[1] == 'x' || f[1] == 'X'):
			radix, digits = 16, f[2:]
		case len(f) >= 2 && f[0] == '0':
			radix, digits = 8, f[1:]
		}
		if digits == "" && radix != 8 {
			return false
		}
		var v int64
		for j := 0; j < len(digits); j++ {
			d := hexDigit(digits[j])
			if d < 0 || d >= radix {
				return false
			}
			v = v*int64(radix) + int64(d)
			if v > 0xffffffff {
				return false
			}
		}
		max := int64(0xff)
		if i == len(fields)-1 {
			max = 1<<((4-i)*8) - 1
		}
		if v > max {
			return false
		}
	}
	return true
}

// numericZone is InetAddress.checkNumericZone's success: the zone after
// '%' is decimal digits (none counts as zone 0) within an int.
func numericZone(z string) bool {
	v := 0
	for i := 0; i < len(z); i++ {
		if z[i] < '0' || z[i] > '9' || v > (1<<31-1)/10 {
			return false
		}
		v = v*10 + int(z[i]-'0')
		if v > 1<<31-1 {
			return false
		}
	}
	return true
}

// ipv6 is IPAddressUtil.textToNumericFormatV6: groups of hex digits (as
// many as fit 16 bits, leading zeros unbounded), one "::", an IPv4 tail of
// exactly three dots, a zone after '%' ignored. mapped reports an
// IPv4-mapped address, which Java turns into IPv4.
func ipv6(s string) (out [16]byte, mapped, ok bool) {
	if len(s) < 2 {
		return out, false, false
	}
	end := len(s)
	if pc := strings.IndexByte(s, '%'); pc >= 0 {
		if pc == len(s)-1 {
			return out, false, false
		}
		end = pc
	}
	i, j, colonp := 0, 0, -1
	if s[0] == ':' {
		i++
		if s[i] != ':' {
			return out, false, false
		}
	}
	curtok, saw, val := i, false, 0
	for i < end {
		c := s[i]
		i++
		if d := hexDigit(c); d >= 0 {
			val = val<<4 | d
			if val > 0xffff {
				return out, false, false
			}
			saw = true
			continue
		}
		if c == ':' {
			curtok = i
			if !saw {
				if colonp != -1 {
					return out, false, false
				}
				colonp = j
				continue
			} else if i == end {
				return out, false, false
			}
			if j+2 > 16 {
				return out, false, false
			}
			out[j], out[j+1] = byte(val>>8), byte(val)
			j += 2
			saw, val = false, 0
			continue
		}
		if c == '.' && j+4 <= 16 {
			tail := s[curtok:end]
			if strings.Count(tail, ".") != 3 {
				return out, false, false
			}
			v4, ok := ipv4(tail)
			if !ok {
				return out, false, false
			}
			copy(out[j:], v4[:])
			j += 4
			saw = false
			break
		}
		return out, false, false
	}
	if saw {
		if j+2 > 16 {
			return out, false, false
		}
		out[j], out[j+1] = byte(val>>8), byte(val)
		j += 2
	}
	if colonp != -1 {
		if j == 16 {
			return out, false, false
		}
		n := j - colonp
		for k := 1; k <= n; k++ {
			out[16-k] = out[colonp+n-k]
			out[colonp+n-k] = 0
		}
		j = 16
	}
	if j != 16 {
		return out, false, false
	}
	mapped = true
	for k := 0; k < 10; k++ {
		if out[k] != 0 {
			mapped = false
		}
	}
	mapped = mapped && out[10] == 0xff && out[11] == 0xff
	return out, mapped, true
}
