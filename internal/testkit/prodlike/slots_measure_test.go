package prodlike_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/noisyload"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// BenchmarkAttemptsInFlight measures what one delivery attempt in flight costs a
// `revops worker` process — the figures REVOPS_WORKER_ACTIVITY_SLOTS' default is chosen
// from (README, docs/benchmarks.md): its memory (VmRSS of /proc/<pid>/status) and CPU
// (utime+stime of /proc/<pid>/stat) while REVOPS_PRODLIKE_ATTEMPTS (default 512)
// attempts wait on receivers that hold them (hanging receivers: the case that keeps a slot
// longest), against the same worker idle after a warm-up. Opt-in
// (REVOPS_PRODLIKE_MEASURE=1 scripts/prodlike/run -run '^$' -bench AttemptsInFlight -benchtime 1x).
func BenchmarkAttemptsInFlight(b *testing.B) {
	requireMeasure(b)
	const endpoints = 16
	n := 512
	if v, err := strconv.Atoi(os.Getenv("REVOPS_PRODLIKE_ATTEMPTS")); err == nil && v > 0 {
		n = v
	}
	s := prodlike.Start(b, prodlike.Options{RetryInterval: time.Hour, Env: []string{
		"REVOPS_WEBHOOK_CA_FILE=" + webhooktest.CAFile(b), "REVOPS_WEBHOOK_ALLOW_PRIVATE=true",
		"REVOPS_RATE_LIMIT=0", "REVOPS_WORKER_ACTIVITY_SLOTS=" + strconv.Itoa(2*n),
	}})
	api := s.StartAPI("api")
	worker := s.StartWorker("worker")
	c, err := revops.NewClient(revops.WithBaseURL(api.URL), revops.WithAPIKey(orgKey(b, s, "Measure")), revops.WithMaxRetries(0),
		revops.WithHTTPClient(&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}))
	if err != nil {
		b.Fatal(err)
	}
	rc := webhooktest.NewReceiver(b)
	account := func(name string) {
		b.Helper()
		if _, err := c.CreateAccount(b.Context(), &revops.AccountCreate{Name: name}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range endpoints {
		ep := &revops.EndpointCreate{URL: fmt.Sprintf("%s/hooks/%d", rc.URL, i), Method: revops.Ptr(revops.WebhookMethodPOST)}
		if _, err := c.CreateWebhookEndpoint(b.Context(), ep); err != nil {
			b.Fatal(err)
		}
	}
	received := func(want int) {
		b.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for len(rc.Received()) < want {
			if time.Now().After(deadline) {
				b.Fatalf("%d requests received, want %d", len(rc.Received()), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Warm-up: code paths, TLS session caches, pools; then the worker settles.
	for range 4 {
		account("Warm-up")
	}
	received(4 * endpoints)
	time.Sleep(5 * time.Second)
	release := rc.Hold(b)
	idle := sampleProc(b, worker.Pid())

	// n attempts in flight: each change fans out to the 16 held endpoints.
	warm := len(rc.Received())
	began := time.Now()
	for range n / endpoints {
		account("Measure")
	}
	received(warm + n/endpoints*endpoints)
	opened := time.Since(began)
	held := len(rc.Received()) - warm
	busy := sampleProc(b, worker.Pid())
	if opened > 25*time.Second {
		b.Logf("opening took %s: the first attempts may have timed out (30 s) before the last opened; measure fewer", opened)
	}
	const wait = 10 * time.Second
	time.Sleep(wait)
	waiting := sampleProc(b, worker.Pid())
	release()
	b.Logf("worker: idle RSS %.1f MiB; %d attempts in flight (opened in %s, load %s): RSS %.1f MiB, +%.1f KiB per attempt; "+
		"CPU %.2f ms per attempt opened, %.1f µs per attempt per second held (over %s)",
		float64(idle.rss)/(1<<20), held, opened.Round(time.Millisecond), noisyload.Loadavg(), float64(busy.rss)/(1<<20),
		float64(busy.rss-idle.rss)/1024/float64(held),
		msOf(busy.cpu-idle.cpu)/float64(held),
		float64((waiting.cpu-busy.cpu).Microseconds())/float64(held)/wait.Seconds(), wait)
	b.ReportMetric(float64(held), "attempts")
	b.ReportMetric(float64(idle.rss)/(1<<20), "idle_rss_mib")
	b.ReportMetric(float64(busy.rss-idle.rss)/1024/float64(held), "rss_kib_per_attempt")
	b.ReportMetric(msOf(busy.cpu-idle.cpu)/float64(held), "cpu_ms_per_attempt_opened")
	b.ReportMetric(float64((waiting.cpu-busy.cpu).Microseconds())/float64(held)/wait.Seconds(), "cpu_us_per_attempt_second_held")
}

// procSample is a process's resident memory (bytes) and CPU time used so far.
type procSample struct {
	rss int64
	cpu time.Duration
}

// sampleProc reads VmRSS from /proc/<pid>/status and utime+stime (USER_HZ ticks, 100 a
// second on Linux) from /proc/<pid>/stat.
func sampleProc(t testing.TB, pid int) procSample {
	t.Helper()
	var s procSample
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			s.rss = kb << 10
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state … utime(14) stime(15), counted from 1; comm may hold spaces.
	fields := strings.Fields(string(stat)[strings.LastIndexByte(string(stat), ')')+1:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	s.cpu = time.Duration(ut+st) * 10 * time.Millisecond
	return s
}
