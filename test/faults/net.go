package faults

import (
	"context"
	"fmt"
	"strings"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Mesh is one TCP proxy per directed peer link i->j: node i reaches node j
// only through link(i, j), which carries i's requests upstream and j's
// answers downstream. Faults are toxics on those streams, so they reach
// connections already open as well as new ones.
type Mesh struct {
	server *toxiproxy.ApiServer
	mu     sync.Mutex
	links  map[[2]int32]*toxiproxy.Proxy
	// active names the toxics on each link, for Heal.
	active map[string][]string
}

func newMesh() *Mesh {
	return &Mesh{
		server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		links:  map[[2]int32]*toxiproxy.Proxy{},
		active: map[string][]string{},
	}
}

// add starts the proxy of link from->to on listen, forwarding to upstream.
func (m *Mesh) add(from, to int32, listen, upstream string) error {
	p := toxiproxy.NewProxy(m.server, fmt.Sprintf("%d->%d", from, to), listen, upstream)
	if err := p.Start(); err != nil {
		return fmt.Errorf("proxy %d->%d on %s: %w", from, to, listen, err)
	}
	m.mu.Lock()
	m.links[[2]int32{from, to}] = p
	m.mu.Unlock()
	return nil
}

func (m *Mesh) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.links {
		p.Stop()
	}
}

// toxic adds a toxic to the stream carrying bytes from node from to node
// to on link (a, b): upstream when from == a, downstream otherwise.
func (m *Mesh) toxic(a, b, from int32, name, typ, attrs string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := m.links[[2]int32{a, b}]
	if p == nil {
		return fmt.Errorf("no link %d->%d", a, b)
	}
	stream := "upstream"
	if from != a {
		stream = "downstream"
	}
	full := fmt.Sprintf("%s-%s", name, stream)
	k := fmt.Sprint(a, b)
	for _, n := range m.active[k] {
		if n == full {
			return nil // already in place: faults compose (a split, then an isolation)
		}
	}
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{%s}}`, full, typ, stream, attrs)
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(js)); err != nil {
		return fmt.Errorf("link %d->%d: %s: %w", a, b, full, err)
	}
	m.active[k] = append(m.active[k], full)
	return nil
}

// Block drops every byte node from sends to node to, on both links between
// them (to's requests answered by from, from's requests to to): a one-way
// partition. The connections stay open, as behind a blackholing firewall.
func (m *Mesh) Block(from, to int32) error {
	return m.both(from, to, "block", "timeout", `"timeout":0`)
}

// Delay adds latency (ms, with jitter ms) to bytes from node from to node to.
func (m *Mesh) Delay(from, to int32, ms, jitter int) error {
	return m.both(from, to, "delay", "latency", fmt.Sprintf(`"latency":%d,"jitter":%d`, ms, jitter))
}

// Throttle limits bytes from node from to node to to kbps KB/s.
func (m *Mesh) Throttle(from, to int32, kbps int) error {
	return m.both(from, to, "throttle", "bandwidth", fmt.Sprintf(`"rate":%d`, kbps))
}

// Reset makes the links between from and to reset their connections (RST)
// after timeoutMs, and every new one after that, until healed.
func (m *Mesh) Reset(from, to int32, timeoutMs int) error {
	return m.both(from, to, "reset", "reset_peer", fmt.Sprintf(`"timeout":%d`, timeoutMs))
}

func (m *Mesh) both(from, to int32, name, typ, attrs string) error {
	if err := m.toxic(from, to, from, name, typ, attrs); err != nil {
		return err
	}
	return m.toxic(to, from, from, name, typ, attrs)
}

// Isolate blocks node n from every other node in both directions.
func (m *Mesh) Isolate(n int32, nodes []int32) error {
	return m.Split([]int32{n}, without(nodes, n))
}

// Split blocks every byte between the groups a and b, both ways.
func (m *Mesh) Split(a, b []int32) error {
	for _, x := range a {
		for _, y := range b {
			if err := m.Block(x, y); err != nil {
				return err
			}
			if err := m.Block(y, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// Heal removes every toxic. Removing a blackhole closes the connections it
// held, as a healed partition's stale connections die in practice.
func (m *Mesh) Heal() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, p := range m.links {
		for _, name := range m.active[fmt.Sprint(key[0], key[1])] {
			if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
				return fmt.Errorf("heal %s: %s: %w", p.Name, name, err)
			}
		}
		delete(m.active, fmt.Sprint(key[0], key[1]))
	}
	return nil
}

func without(nodes []int32, n int32) []int32 {
	var out []int32
	for _, x := range nodes {
		if x != n {
			out = append(out, x)
		}
	}
	return out
}
