// Package ssrf keeps webhook requests away from the service's own network: loopback,
// private, link-local, CGNAT, multicast, IPv4-embedding (NAT64, 6to4, SIIT) and cloud-metadata
// addresses are refused when a
// URL is saved (by resolving its host) and again at dial time, on the address actually
// dialled, so a DNS answer that changes after the save (DNS rebinding) is caught too.
package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ErrNotAllowed is a destination webhooks may not reach.
var ErrNotAllowed = errors.New("destination not allowed")

// metadata are the cloud instance-metadata and credential endpoints. They stay refused
// even with AllowPrivate: no legitimate receiver lives there, and they hold credentials.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack, …
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task credentials
	netip.MustParseAddr("169.254.170.23"),  // AWS EKS Pod Identity
	netip.MustParseAddr("fd00:ec2::23"),    // AWS EKS Pod Identity over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
}

// embedding are IPv6 ranges whose last 32 bits carry an IPv4 address that a translator
// or tunnel may deliver to: 64:ff9b::a9fe:a9fe reaches 169.254.169.254 through NAT64.
// The whole ranges are refused like private ones; the embedded address is also held to
// the metadata list, which AllowPrivate does not lift.
var embedding = []netip.Prefix{
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 well-known prefix (RFC 6052)
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated, RFC 4291)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT IPv4-translated (RFC 2765)
}

// localNAT64 is the local-use NAT64 prefix (RFC 8215). An operator may carve any RFC 6052
// prefix of /48 or longer out of it, so the IPv4 address may sit in any of the layouts
// of nat64Layouts.
var localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48")

// nat64Layouts are the byte positions of the embedded IPv4 address for RFC 6052 prefixes
// of /48, /56, /64 and /96 (bits 64–71 are skipped).
var nat64Layouts = [][4]int{{6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}, {12, 13, 14, 15}}

// private are the ranges a public receiver never uses (beyond what netip classifies).
var private = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may translate to any IPv4, private included
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2002::/16"),       // 6to4: tunnels to the IPv4 address it embeds
	netip.MustParsePrefix("::/96"),           // IPv4-compatible
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("::ffff:0:0/96"),   // mapped (only reached if not unmapped)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT: translates to the IPv4 it embeds
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
}

// Check tells why ip may not be dialled, or returns nil. allowPrivate lets loopback and
// private networks through (revops dev, local receivers) but never metadata addresses.
func Check(ip netip.Addr, allowPrivate bool) error {
	// A zone (fe80::1%eth0) names the interface, not another host: drop it, or the
	// comparisons below and netip.Prefix.Contains (false for any zoned address) miss.
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrNotAllowed)
	}
	if isMetadata(ip) {
		return fmt.Errorf("%w: %s is a cloud metadata address", ErrNotAllowed, ip)
	}
	for _, v4 := range embeddedIPv4(ip) {
		if isMetadata(v4) {
			return fmt.Errorf("%w: %s embeds the cloud metadata address %s", ErrNotAllowed, ip, v4)
		}
	}
	if allowPrivate {
		return nil
	}
	switch {
	case ip.IsLoopback():
		return fmt.Errorf("%w: %s is a loopback address", ErrNotAllowed, ip)
	case ip.IsUnspecified():
		return fmt.Errorf("%w: %s is unspecified", ErrNotAllowed, ip)
	case ip.IsPrivate():
		return fmt.Errorf("%w: %s is a private address", ErrNotAllowed, ip)
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return fmt.Errorf("%w: %s is a link-local address", ErrNotAllowed, ip)
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return fmt.Errorf("%w: %s is a multicast address", ErrNotAllowed, ip)
	}
	for _, p := range private {
		if p.Contains(ip) {
			return fmt.Errorf("%w: %s is in the reserved range %s", ErrNotAllowed, ip, p)
		}
	}
	return nil
}

func isMetadata(ip netip.Addr) bool {
	for _, m := range metadata {
		if ip == m {
			return true
		}
	}
	return false
}

// embeddedIPv4 is every IPv4 address a NAT64, IPv4-compatible, SIIT or 6to4 address may
// lead to.
func embeddedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	at := func(i [4]int) netip.Addr { return netip.AddrFrom4([4]byte{b[i[0]], b[i[1]], b[i[2]], b[i[3]]}) }
	switch {
	case localNAT64.Contains(ip):
		out := make([]netip.Addr, 0, len(nat64Layouts))
		for _, l := range nat64Layouts {
			out = append(out, at(l))
		}
		return out
	case sixToFour.Contains(ip):
		return []netip.Addr{at([4]int{2, 3, 4, 5})}
	}
	for _, p := range embedding {
		if p.Contains(ip) {
			return []netip.Addr{at([4]int{12, 13, 14, 15})}
		}
	}
	return nil
}

var sixToFour = netip.MustParsePrefix("2002::/16")

// Control is a net.Dialer Control function refusing addresses Check refuses. It runs
// after name resolution, on the very address about to be connected.
func Control(allowPrivate bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: unparsable address %q", ErrNotAllowed, address)
		}
		return Check(ap.Addr(), allowPrivate)
	}
}

// NewDialer returns a dialer guarded by Control.
func NewDialer(allowPrivate bool) *net.Dialer {
	return &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   Control(allowPrivate),
	}
}

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrUnresolvable is a host name without addresses.
var ErrUnresolvable = errors.New("host does not resolve")

// CheckHost is the save-time check: host (a name or an IP literal) must resolve, and to
// allowed addresses only. r nil means net.DefaultResolver.
func CheckHost(ctx context.Context, r Resolver, host string, allowPrivate bool) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return Check(ip, allowPrivate)
	}
	if r == nil {
		r = net.DefaultResolver
	}
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("%w: %s", ErrUnresolvable, host)
	}
	for _, ip := range ips {
		if err := Check(ip, allowPrivate); err != nil {
			return err
		}
	}
	return nil
}
