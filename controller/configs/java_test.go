package configs

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The expected values below were printed by Java 17 and Kafka 4.4.0's
// TimelineHashMap.

func TestJavaHashOrder(t *testing.T) {
	for _, c := range []struct{ in, hash, timeline string }{
		{"retention.ms,cleanup.policy,min.insync.replicas,segment.bytes",
			"cleanup.policy,min.insync.replicas,retention.ms,segment.bytes",
			"cleanup.policy,segment.bytes,min.insync.replicas,retention.ms"},
		{"foo.bar,retention.ms.x,Retention.ms,log.retention.ms,a,b,c,d,e,f,g,h,i,j,k,l,m",
			"log.retention.ms,a,b,c,d,e,f,g,h,i,j,k,l,m,Retention.ms,foo.bar,retention.ms.x",
			"f,k,c,retention.ms.x,h,m,e,j,log.retention.ms,b,g,l,d,foo.bar,i,Retention.ms,a"},
	} {
		keys := strings.Split(c.in, ",")
		if got := strings.Join(javaHashOrder(keys, hashMapCapacity(len(keys))), ","); got != c.hash {
			t.Errorf("HashMap order of %s:\n got %s\nwant %s", c.in, got, c.hash)
		}
		if got := strings.Join(timelineOrder(keys), ","); got != c.timeline {
			t.Errorf("TimelineHashMap order of %s:\n got %s\nwant %s", c.in, got, c.timeline)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	a, b := 0.1, 0.2
	point3 := a + b // at run time, not folded to 0.3
	for f, want := range map[float64]string{
		0.5: "0.5", 2: "2.0", 1e7: "1.0E7", 9999999: "9999999.0", 1e-3: "0.001", 9.99e-4: "9.99E-4",
		1e10: "1.0E10", 1.23456785e7: "1.23456785E7", 1e-5: "1.0E-5", math.Inf(1): "Infinity",
		math.Copysign(0, -1): "-0.0", 100: "100.0", 1e21: "1.0E21", point3: "0.30000000000000004",
		123456789012: "1.23456789012E11", -2.5: "-2.5",
		// JDK 17 prints whole numbers in [2^53, 2^63) from their integer
		// digits, sometimes longer than the shortest form.
		math.Float64frombits(0x43a724f9d8a3aef9): "8.3386623544416576E17",
		math.Float64frombits(0x43b6b1a352f8c9c8): "1.63526771646881997E18",
		math.Float64frombits(0x43df9ea6b35dcd91): "9.1137670031966382E18",
		1e18:                                     "1.0E18", 1 << 53: "9.007199254740992E15",
	} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", f, got, want)
		}
	}
	if javaDouble(math.NaN()) != "NaN" {
		t.Error("NaN")
	}
}

func TestJavaParseInt(t *testing.T) {
	for s, want := range map[string]int64{"\u0661\u0662": 12, "\uff11\uff12": 12, "+3": 3, "-0": 0,
		"2147483647": 2147483647, "-2147483648": -2147483648} {
		if got, ok := javaParseInt(s, 32); !ok || got != want {
			t.Errorf("javaParseInt(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"0x10", "1_0", " 7", "", "+", "-", "2147483648", "-2147483649", "1.0", "\U0001D7CF"} {
		if got, ok := javaParseInt(s, 32); ok {
			t.Errorf("javaParseInt(%q) = %d, want NumberFormatException", s, got)
		}
	}
	if got, ok := javaParseInt("-9223372036854775808", 64); !ok || got != math.MinInt64 {
		t.Errorf("long min: %d %v", got, ok)
	}
	if _, ok := javaParseInt("9223372036854775808", 64); ok {
		t.Error("long max+1 parsed")
	}
}

func TestJavaParseDouble(t *testing.T) {
	for s, want := range map[string]float64{"1.5d": 1.5, "0x1p-2": 0.25, ".5": 0.5, "5.": 5, "+Infinity": math.Inf(1),
		"1e400": math.Inf(1), "0x.8p1": 1, "0x1.8p1f": 3, "1E+2": 100, "1e-400": 0, " 2 ": 2} {
		if got, ok := javaParseDouble(s); !ok || got != want {
			t.Errorf("javaParseDouble(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	if got, ok := javaParseDouble("NaN"); !ok || !math.IsNaN(got) {
		t.Error("NaN")
	}
	for _, s := range []string{"1e", "inf", "Infinityf", "0x1p", "0x1", "1_0", "", ".", "e5", "nan", "1..2", "0x"} {
		if got, ok := javaParseDouble(s); ok {
			t.Errorf("javaParseDouble(%q) = %v, want NumberFormatException", s, got)
		}
	}
}

func TestJavaSplitList(t *testing.T) {
	for s, want := range map[string][]string{
		"":                   {},
		"  ":                 {},
		"a":                  {"a"},
		" a , b ":            {"a", "b"},
		"a,,b":               {"a", "", "b"},
		"a,":                 {"a", ""},
		",a":                 {"", "a"},
		"a\t,\tb":            {"a", "b"},
		"a \u00a0, b":        {"a \u00a0", "b"}, // \s is ASCII only
		"compact, delete,\n": {"compact", "delete", ""},
	} {
		if got := javaSplitList(s); !slices.Equal(got, want) {
			t.Errorf("javaSplitList(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestJavaTrim(t *testing.T) {
	if got := javaTrim("\x00\t a b\x1f "); got != "a b" {
		t.Errorf("got %q", got)
	}
	if got := javaTrim("\u00a0a\u00a0"); got != "\u00a0a\u00a0" {
		t.Errorf("trim removed a no-break space: %q", got)
	}
}

func TestHashMapCapacities(t *testing.T) {
	// java.util.HashMap's table sizes: after n puts, and after putAll of n
	// keys into a new map.
	for n, want := range map[int]int{0: 16, 12: 16, 13: 32, 24: 32, 25: 64} {
		if got := hashMapCapacity(n); got != want {
			t.Errorf("hashMapCapacity(%d) = %d, want %d", n, got, want)
		}
	}
	for _, c := range [][3]int{{0, 0, 16}, {1, 1, 2}, {1, 2, 4}, {3, 3, 8}, {6, 6, 16}, {12, 12, 32}, {5, 6, 8}, {5, 7, 16}} {
		if got := putAllCapacity(c[0], c[1]); got != c[2] {
			t.Errorf("putAllCapacity(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
