package prodlike

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// Dev is a `revops dev` process: the embedded Temporal server, SQLite, the API and the
// worker in one process, as a developer runs it.
type Dev struct {
	URL     string // the API
	Key     string // the demo organization's secret sandbox key
	DataDir string // its --data-dir: the local CA it trusts for webhook TLS is there
	Banner  string // what it printed up to its banner's end
	Proc    *Proc
}

// StartDev builds and starts `revops dev` in a fresh data directory with env added to a
// minimal environment, and waits for its banner; it stops at cleanup.
func StartDev(t testing.TB, env ...string) *Dev {
	t.Helper()
	bin, dir := buildCommand(t, "./cmd/revops")
	return startDev(t, bin, dir, env)
}

// StartDevBinary is StartDev with a revops binary given rather than built from this tree
// (a measurement comparing commits builds each; BuildRevopsAt).
func StartDevBinary(t testing.TB, bin string, env ...string) *Dev {
	t.Helper()
	return startDev(t, bin, t.TempDir(), env)
}

func startDev(t testing.TB, bin, dir string, env []string) *Dev {
	t.Helper()
	ports, err := freeLowPorts(2) // the embedded Temporal's frontend and UI
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpAddr := ln.Addr().String()
	ln.Close()
	logPath := filepath.Join(dir, "dev.log")
	// Not dev's fixed :9090, which anything else on the machine may hold.
	const devMetricsAddr = "REVOPS_METRICS_ADDR=127.0.0.1:0"
	p, err := startProc("revops-dev", logPath, append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir, devMetricsAddr}, env...), nil, bin, "dev",
		"--data-dir", filepath.Join(dir, "data"), "--http-addr", httpAddr,
		"--temporal-address", "127.0.0.1:"+strconv.Itoa(ports[0]), "--temporal-ui-addr", "127.0.0.1:"+strconv.Itoa(ports[1]))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Signal(os.Interrupt); stopOrKill(p) })
	keyLine := regexp.MustCompile(`secret sandbox key: (\S+)`)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		out, _ := os.ReadFile(logPath)
		if m := keyLine.FindSubmatch(out); m != nil && regexp.MustCompile(`Try: curl`).Match(out) {
			return &Dev{URL: "http://" + httpAddr, Key: string(m[1]), DataDir: filepath.Join(dir, "data"), Banner: string(out), Proc: p}
		}
		if exited, err := p.Exited(); exited || time.Now().After(deadline) {
			t.Fatalf("revops dev did not start (exited %v: %v):\n%s", exited, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopOrKill waits up to 30 s for p to end, then kills it.
func stopOrKill(p *Proc) {
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// String names the process for messages.
func (d *Dev) String() string { return fmt.Sprintf("revops dev at %s", d.URL) }
