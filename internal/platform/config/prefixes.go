package config

import (
	"fmt"
	"net/netip"
	"strings"
)

// Prefixes is a comma-separated list of CIDRs as a flag value. A bare address stands for
// itself (a /32 or /128), the usual way to name a single proxy.
type Prefixes []netip.Prefix

func (p *Prefixes) String() string {
	if p == nil {
		return ""
	}
	out := make([]string, len(*p))
	for i, x := range *p {
		out[i] = x.String()
	}
	return strings.Join(out, ",")
}

// Set replaces the list; an empty value clears it.
func (p *Prefixes) Set(v string) error {
	var out Prefixes
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		pre, err := parsePrefix(part)
		if err != nil {
			return err
		}
		out = append(out, pre)
	}
	*p = out
	return nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		pre, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR (like 10.0.0.0/8 or fd00::/8)", s)
		}
		// 10.1.2.3/8 is almost certainly a typo for 10.0.0.0/8; refuse rather than guess.
		if pre.Masked() != pre {
			return netip.Prefix{}, fmt.Errorf("%q has host bits set; did you mean %s?", s, pre.Masked())
		}
		return unmapPrefix(pre), nil
	}
	ip, err := netip.ParseAddr(s)
	if err != nil || ip.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or an IP address", s)
	}
	ip = ip.Unmap()
	return netip.PrefixFrom(ip, ip.BitLen()), nil
}

// unmapPrefix turns ::ffff:10.0.0.0/104 into 10.0.0.0/8, so it matches the IPv4 peers
// that Contains sees after unmapping.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// Contains tells whether ip (an IPv4-mapped address counts as IPv4; a zone is ignored)
// is in one of the prefixes.
func (p Prefixes) Contains(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, x := range p {
		if x.Contains(ip) {
			return true
		}
	}
	return false
}
