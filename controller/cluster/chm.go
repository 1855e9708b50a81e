package cluster

import "time"

// contacts is the heartbeat tracker's map of last contacts in the iteration
// order of Kafka's: a java.util.concurrent.ConcurrentHashMap keyed by the
// record BrokerIdAndEpoch, whose first expired entry the stale-broker task
// takes. OpenJDK 17's map as one thread uses it: a table of 16 bins at the
// first put, doubled once the size reaches three quarters of it; a new key
// goes at the end of its bin; a removal keeps the others' order; a resize
// splits each bin, from the last to the first, into the bins i and i+n, each
// the bin's longest tail going to one side in order, the nodes before it
// prepended one by one (so reversed). Not modelled: a bin of eight or more in
// a table of 64 or more, where the JVM builds a tree bin (it then lists the
// newest entries first); eight in a smaller table presize it as the JVM does.
type contacts struct {
	bins    [][]contactEntry
	size    int
	sizeCtl int
}

type contactEntry struct {
	key  contactKey
	hash int32
	at   time.Duration
}

// keyHash is BrokerIdAndEpoch.hashCode (a record: 31 * id + the epoch's
// Long.hashCode) spread as ConcurrentHashMap.spread does.
func keyHash(k contactKey) int32 {
	h := 31*k.id + int32(uint64(k.epoch)^uint64(k.epoch)>>32)
	return (h ^ int32(uint32(h)>>16)) & 0x7fffffff
}

func (c *contacts) find(k contactKey) (bin, pos int) {
	if c.bins == nil {
		return -1, -1
	}
	bin = int(keyHash(k)) & (len(c.bins) - 1)
	for i, e := range c.bins[bin] {
		if e.key == k {
			return bin, i
		}
	}
	return bin, -1
}

func (c *contacts) get(k contactKey) (time.Duration, bool) {
	if b, i := c.find(k); i >= 0 {
		return c.bins[b][i].at, true
	}
	return 0, false
}

func (c *contacts) put(k contactKey, at time.Duration) {
	if c.bins == nil {
		c.bins, c.sizeCtl = make([][]contactEntry, 16), 12
	}
	b, i := c.find(k)
	if i >= 0 {
		c.bins[b][i].at = at
		return
	}
	binCount := len(c.bins[b]) // the nodes putVal walked past
	c.bins[b] = append(c.bins[b], contactEntry{k, keyHash(k), at})
	if binCount >= 8 && len(c.bins) < 64 {
		c.presize(len(c.bins) << 1) // treeifyBin on a small table
	}
	c.size++
	for c.size >= c.sizeCtl {
		c.transfer()
	}
}

// presize is tryPresize(size) on an existing table.
func (c *contacts) presize(size int) {
	want := 1
	for want < size+size>>1+1 {
		want <<= 1
	}
	for want > c.sizeCtl {
		c.transfer()
	}
}

func (c *contacts) remove(k contactKey) {
	if b, i := c.find(k); i >= 0 {
		c.bins[b] = append(c.bins[b][:i:i], c.bins[b][i+1:]...)
		c.size--
	}
}

// transfer doubles the table as ConcurrentHashMap.transfer does.
func (c *contacts) transfer() {
	n := len(c.bins)
	next := make([][]contactEntry, 2*n)
	for i := n - 1; i >= 0; i-- {
		bin := c.bins[i]
		if len(bin) == 0 {
			continue
		}
		last := 0
		runBit := int(bin[0].hash) & n
		for j := 1; j < len(bin); j++ {
			if b := int(bin[j].hash) & n; b != runBit {
				runBit, last = b, j
			}
		}
		var lo, hi []contactEntry
		if runBit == 0 {
			lo = append(lo, bin[last:]...)
		} else {
			hi = append(hi, bin[last:]...)
		}
		for j := 0; j < last; j++ {
			e := bin[j]
			if int(e.hash)&n == 0 {
				lo = append([]contactEntry{e}, lo...)
			} else {
				hi = append([]contactEntry{e}, hi...)
			}
		}
		next[i], next[i+n] = lo, hi
	}
	c.bins, c.sizeCtl = next, 2*n-n>>1
}

// firstWhere is the first entry, in iteration order, that match accepts.
func (c *contacts) firstWhere(match func(contactEntry) bool) (contactEntry, bool) {
	for _, bin := range c.bins {
		for _, e := range bin {
			if match(e) {
				return e, true
			}
		}
	}
	return contactEntry{}, false
}
