// Package hostlookup answers, for a name that is not an IP literal, what
// Java's InetAddress.getByName answers: whether the name resolves. Kafka's
// controller checks the ip entities of AlterClientQuotas that way; kraftd's
// controller takes this as its ActiveOptions.LookupHost and calls it off
// its loop.
package hostlookup

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"time"
)

// Timeout bounds one look-up.
const Timeout = 5 * time.Second

// Resolves reports whether host resolves: through the system resolver (the
// hosts file, then DNS), or, for an IPv6 literal scoped to an interface by
// name ("fe80::1%eth0"), whether that interface has an IPv6 address of the
// literal's kind (Java's Inet6Address.deriveNumericScope).
func Resolves(host string) bool {
	if i := strings.LastIndexByte(host, '%'); i >= 0 && strings.IndexByte(host, ':') >= 0 {
		return scoped(strings.Trim(host[:i], "[]"), host[i+1:])
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	return err == nil && len(addrs) > 0
}

// scoped: the interface exists and has an IPv6 address that is link-local
// when the literal is, and site-local (fec0::/10) when the literal is.
func scoped(literal, ifname string) bool {
	ifc, err := net.InterfaceByName(ifname)
	if err != nil {
		return false
	}
	lit, err := netip.ParseAddr(literal)
	if err != nil {
		return false
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok || ip.Is4() || ip.Is4In6() {
			continue
		}
		if lit.IsLinkLocalUnicast() && !ip.IsLinkLocalUnicast() {
			continue
		}
		if siteLocal(lit) && !siteLocal(ip) {
			continue
		}
		return true
	}
	return false
}

func siteLocal(a netip.Addr) bool {
	b := a.As16()
	return b[0] == 0xfe && b[1]&0xc0 == 0xc0
}
