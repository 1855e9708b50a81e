package faults

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kraftd/kraftd/internal/freeport"
)

// greeter stands in for a node: it sends "hi" on each connection and
// reports the first two bytes it reads.
func greeter(t *testing.T) (addr string, got <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.Write([]byte("hi"))
				b := make([]byte, 2)
				if _, err := io.ReadFull(c, b); err == nil {
					ch <- string(b)
				}
			}()
		}
	}()
	return ln.Addr().String(), ch
}

// exchange dials a link, and reports whether the greeting arrived and
// whether what it wrote did.
func exchange(t *testing.T, link string, got <-chan string) (greeted, delivered bool) {
	t.Helper()
	c, err := net.Dial("tcp", link)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("yo"))
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err = io.ReadFull(c, make([]byte, 2))
	greeted = err == nil
	select {
	case <-got:
		delivered = true
	case <-time.After(500 * time.Millisecond):
	}
	return greeted, delivered
}

// TestMeshBlockIsOneWay: Block(1, 2) drops every byte node 1 sends to node
// 2 (its requests on link 1->2, its answers on link 2->1) and nothing node 2
// sends; overlapping faults compose; Heal restores both links.
func TestMeshBlockIsOneWay(t *testing.T) {
	ports, err := freeport.Take(2)
	if err != nil {
		t.Fatal(err)
	}
	node1, got1 := greeter(t)
	node2, got2 := greeter(t)
	m := newMesh()
	defer m.close()
	link12, link21 := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	if err := m.add(1, 2, link12, node2); err != nil {
		t.Fatal(err)
	}
	if err := m.add(2, 1, link21, node1); err != nil {
		t.Fatal(err)
	}
	if err := m.Block(1, 2); err != nil {
		t.Fatal(err)
	}
	if err := m.Split([]int32{1}, []int32{2}); err != nil { // overlaps the block
		t.Fatal(err)
	}
	if err := m.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := m.Block(1, 2); err != nil {
		t.Fatal(err)
	}
	if g, d := exchange(t, link12, got2); !g || d {
		t.Errorf("link 1->2 under Block(1, 2): node 2's greeting arrived %v (want true), node 1's bytes arrived %v (want false)", g, d)
	}
	if g, d := exchange(t, link21, got1); g || !d {
		t.Errorf("link 2->1 under Block(1, 2): node 1's greeting arrived %v (want false), node 2's bytes arrived %v (want true)", g, d)
	}
	if err := m.Heal(); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		addr string
		got  <-chan string
	}{{link12, got2}, {link21, got1}} {
		if g, d := exchange(t, l.addr, l.got); !g || !d {
			t.Errorf("%s after Heal: greeting %v, delivery %v (want both)", l.addr, g, d)
		}
	}
}
