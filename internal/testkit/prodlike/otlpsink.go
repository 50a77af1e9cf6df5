package prodlike

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/testkit/otlpsink"
)

// OTLPSink is the trace backend of a test, in its own process (cmd/otlpsink): Revops's
// processes export to it over OTLP as they would to a collector or Jaeger.
type OTLPSink struct {
	GRPCAddr, HTTPAddr string
	spans              string // the JSON lines it writes
}

// StartOTLPSink builds and starts the sink; it stops at cleanup.
func StartOTLPSink(t testing.TB) *OTLPSink {
	t.Helper()
	bin, dir := buildCommand(t, "./internal/testkit/otlpsink/cmd/otlpsink")
	addrs := make([]string, 2)
	for i := range addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = ln.Addr().String()
		ln.Close()
	}
	s := &OTLPSink{GRPCAddr: addrs[0], HTTPAddr: addrs[1], spans: filepath.Join(dir, "spans.jsonl")}
	logPath := filepath.Join(dir, "otlpsink.log")
	p, err := startProc("otlpsink", logPath, []string{"PATH=/usr/bin:/bin"}, nil, bin,
		"-grpc", s.GRPCAddr, "-http", s.HTTPAddr, "-out", s.spans)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	deadline := time.Now().Add(30 * time.Second)
	for !listening(logPath) {
		if exited, err := p.Exited(); exited || time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("otlpsink did not start (exited %v: %v):\n%s", exited, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

func listening(logPath string) bool {
	f, err := os.Open(logPath)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "otlpsink listening") {
			return true
		}
	}
	return false
}

// buildCommand builds the repository's command pkg into a fresh temporary directory of
// the test, returning the binary and the directory.
func buildCommand(t testing.TB, pkg string) (bin, dir string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	bin = filepath.Join(dir, filepath.Base(pkg))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := goBuild(ctx, root, bin, pkg); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

// Env is what points a process's tracing at the sink (OTLP over gRPC, spans sent every
// 100 ms rather than every 5 s).
func (s *OTLPSink) Env() []string {
	return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + s.GRPCAddr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_BSP_SCHEDULE_DELAY=100"}
}

// Spans are the spans received so far.
func (s *OTLPSink) Spans() ([]otlpsink.Span, error) {
	spans, err := otlpsink.ReadFile(s.spans)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spans: %w", err)
	}
	return spans, nil
}
