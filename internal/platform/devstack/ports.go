package devstack

import (
	"fmt"
	"net"
	"strconv"
)

// loopback is where every internal service (history, matching, worker) binds,
// so they are never exposed and two stacks can run side by side.
const loopback = "127.0.0.1"

// endpoint is a resolved listen address.
type endpoint struct {
	bindIP string // IP the listener binds to
	port   int
}

// dialAddr is the address clients in this process use to reach the endpoint:
// a wildcard bind is reached through loopback.
func (e endpoint) dialAddr() string {
	host := e.bindIP
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = loopback
	}
	return net.JoinHostPort(host, strconv.Itoa(e.port))
}

// portHolder keeps the listeners used to probe or pick ports open until
// release, so that picking several free ports in a row cannot return the same
// port twice and a checked port cannot be taken by our own next pick.
type portHolder struct {
	lns []net.Listener
}

func (h *portHolder) listen(ip string, port int) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return 0, err
	}
	h.lns = append(h.lns, ln)
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// free picks an unused port on ip.
func (h *portHolder) free(ip string) (int, error) { return h.listen(ip, 0) }

// release closes every held listener. Temporal binds the ports right after;
// the window is tiny and the kernel does not reissue a just-freed ephemeral
// port to another bind(0) right away.
func (h *portHolder) release() {
	for _, ln := range h.lns {
		_ = ln.Close()
	}
	h.lns = nil
}

// claim parses a user-supplied host:port, picks a free port when the port is
// 0 and verifies that nothing else listens there. The Temporal server and the
// UI server both treat a failed listen as fatal (log.Fatal/os.Exit), so a busy
// port has to be caught here with a readable error.
func (h *portHolder) claim(what, addr string) (endpoint, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s address %q: %w", what, addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return endpoint{}, fmt.Errorf("%s address %q: invalid port", what, addr)
	}
	ip, err := bindIP(host)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s address %q: %w", what, addr, err)
	}
	got, err := h.listen(ip, port)
	if err != nil {
		return endpoint{}, fmt.Errorf("%s address %s is not available (port in use?): %w", what, addr, err)
	}
	return endpoint{bindIP: ip, port: got}, nil
}

// bindIP turns the host part of an address into an IP Temporal can bind to
// (its config wants a literal IP). An empty host means loopback here, not
// every interface: a dev stack should never be exposed by accident.
func bindIP(host string) (string, error) {
	switch host {
	case "", "localhost":
		return loopback, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", fmt.Errorf("host %q is not an IP address", host)
	}
	return ip.String(), nil
}
