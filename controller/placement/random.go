package placement

// Random is the source of the placer's random draws: what Kafka's placer asks
// of its java.util.Random, which is only nextInt(bound) (directly, and
// through Collections.shuffle). NextInt returns a value in [0, bound) for a
// bound of at least 1.
type Random interface {
	NextInt(bound int32) int32
}

// JavaRandom is java.util.Random's generator (a 48-bit linear congruential
// generator, Knuth 3.2.1), so that a seed here and the same seed in a JVM draw
// the same numbers: with it a placement can be compared with Kafka's own.
// It is not safe for concurrent use.
type JavaRandom struct{ seed int64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaAddend     = 0xB
	javaMask       = 1<<48 - 1
)

// NewJavaRandom is new java.util.Random(seed).
func NewJavaRandom(seed int64) *JavaRandom {
	return &JavaRandom{seed: (seed ^ javaMultiplier) & javaMask}
}

// next is Random.next(bits): the top bits of the advanced seed.
func (r *JavaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + javaAddend) & javaMask
	return int32(r.seed >> (48 - bits))
}

// NextInt is Random.nextInt(bound). A bound below 1 (Java throws) returns 0.
func (r *JavaRandom) NextInt(bound int32) int32 { return nextInt(r.next, bound) }

// nextInt is Random.nextInt(bound) over a next(bits), rejection sampling
// included, in Java's 32-bit arithmetic (the loop's test relies on int
// overflow).
func nextInt(next func(bits uint) int32, bound int32) int32 {
	if bound <= 0 {
		return 0
	}
	x := next(31)
	m := bound - 1
	if bound&m == 0 { // a power of two: the high bits
		return int32((int64(bound) * int64(x)) >> 31)
	}
	for u := x; ; u = next(31) {
		x = u % bound
		if u-x+m >= 0 { // int32 wraparound, as in Java
			return x
		}
	}
}

// shuffle is Collections.shuffle(list, rnd) for a random-access list: from
// the end, swap each position with a draw below it.
func shuffle[T any](s []T, rnd Random) {
	for i := len(s); i > 1; i-- {
		j := rnd.NextInt(int32(i))
		s[i-1], s[j] = s[j], s[i-1]
	}
}
