package webhook

import (
	"context"
	"net"
	"net/http/httptrace"
	"net/netip"
	"sync"

	"github.com/revops/revops/internal/platform/ssrf"
)

// An answer from a private address to an endpoint with custom headers keeps no excerpt
// (CONTRACT §25): such a receiver is often a debugging tool that echoes every request.

// peer is the address a request's connection reached, caught by an httptrace hook.
type peer struct {
	mu   sync.Mutex
	addr netip.Addr
}

// trace is ctx with the hook that records the connection's remote address.
func (p *peer) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if info.Conn == nil {
			return
		}
		var ap netip.AddrPort
		if tcp, ok := info.Conn.RemoteAddr().(*net.TCPAddr); ok {
			ap = tcp.AddrPort()
		} else if parsed, err := netip.ParseAddrPort(info.Conn.RemoteAddr().String()); err == nil {
			ap = parsed
		}
		p.mu.Lock()
		p.addr = ap.Addr()
		p.mu.Unlock()
	}})
}

// private tells whether the connection reached a loopback, private or otherwise
// reserved address (allowed only by REVOPS_WEBHOOK_ALLOW_PRIVATE), or one not known.
func (p *peer) private() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.addr.IsValid() || ssrf.Check(p.addr, false) != nil
}
