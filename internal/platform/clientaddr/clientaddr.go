// Package clientaddr tells which client a request comes from (CONTRACT §12, §15, §17):
// the peer, or, when the peer is a trusted proxy, the address the proxies forwarded. The
// API's failed-authentication throttle, the dashboard's login throttle and HTTPS behind a
// proxy all ask it, so a forged header is ignored the same way everywhere.
package clientaddr

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/revops/revops/internal/platform/config"
)

// Of is the address a request comes from (CONTRACT §12). The peer is the client,
// unless it is a trusted proxy: then X-Forwarded-For is read from the right (each proxy
// appends the address it was reached from) and the first address not itself a trusted
// proxy is the client. Anything left of that was written by the client and is ignored,
// so a forged header never picks the address that gets throttled.
func Of(r *http.Request, trusted config.Prefixes) netip.Addr {
	peer := parseHop(r.RemoteAddr)
	if !peer.IsValid() || !trusted.Contains(peer) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop := parseHop(strings.TrimSpace(hops[i]))
		if !hop.IsValid() {
			// A trusted proxy writes addresses; garbage here came from beyond the last
			// trusted hop, which is then the best we know.
			return client
		}
		client = hop
		if !trusted.Contains(hop) {
			return hop
		}
	}
	return client // every hop is a trusted proxy: the left-most is the origin
}

// parseHop reads an address as proxies write it: bare, with a port, or bracketed IPv6.
func parseHop(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().WithZone("").Unmap()
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	ip, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return ip.WithZone("").Unmap()
}

// FromTrustedProxy tells whether the request's peer is a trusted proxy, whose forwarded
// headers (X-Forwarded-For, X-Forwarded-Proto) are believed (CONTRACT §17).
func FromTrustedProxy(r *http.Request, trusted config.Prefixes) bool {
	peer := parseHop(r.RemoteAddr)
	return peer.IsValid() && trusted.Contains(peer)
}

// Scope is the key a throttle counts a client under: an IPv4 address, or an IPv6 client's
// /64, the block one subscriber is given (counting single IPv6 addresses would give an
// attacker 2^64 fresh counters). An invalid address (no peer) is one scope of its own.
func Scope(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		return netip.PrefixFrom(ip, 64).Masked().String()
	}
	return ip.String()
}
