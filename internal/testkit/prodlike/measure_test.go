package prodlike_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/testkit/prodlike"
)

// BenchmarkDeliveryLatency measures on the production shape the time from a change's
// acknowledgement to its delivery at the receiver, one change at a time (one client, one
// api, one worker), with the dynamic config we ship or, for comparison, the file named by
// REVOPS_PRODLIKE_DYNAMIC_CONFIG (an empty file: Temporal's defaults). It is how the
// settings of deploy/temporal/dynamicconfig.yaml were measured. Opt-in
// (REVOPS_PRODLIKE_MEASURE=1): a measurement, not a check.
func BenchmarkDeliveryLatency(b *testing.B) {
	requireMeasure(b)
	prodlike.Require(b)
	receiver := webhooktest.NewReceiver(b)
	caFile := caFileOf(b, receiver.Certificate())
	s := prodlike.Start(b, prodlike.Options{
		DynamicConfig: os.Getenv("REVOPS_PRODLIKE_DYNAMIC_CONFIG"),
		Env:           []string{"REVOPS_WEBHOOK_CA_FILE=" + caFile, "REVOPS_WEBHOOK_ALLOW_PRIVATE=true"},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	key := secretKey(b, s)
	api := s.StartAPI("api-1")
	s.StartWorker("worker-1")
	c := &apiClient{key: key, urls: []string{api.URL},
		hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}}
	if _, err := c.change(ctx, "PUT", "/v1/webhook_endpoint", map[string]any{"url": receiver.URL, "method": "POST", "enabled": true}); err != nil {
		b.Fatal(err)
	}
	acc, err := c.change(ctx, "POST", "/v1/accounts", map[string]any{"name": "Measure Co"})
	if err != nil {
		b.Fatal(err)
	}
	const warmup, n = 10, 60
	var lat []time.Duration
	for i := range warmup + n {
		if _, err := c.change(ctx, "PATCH", "/v1/accounts/"+acc["id"].(string), map[string]any{"name": fmt.Sprintf("Measure Co %d", i)}); err != nil {
			b.Fatal(err)
		}
		acked := time.Now()
		want := i + 2 // account-created, then one account-updated per change
		for len(receiver.Received()) < want {
			if ctx.Err() != nil {
				b.Fatalf("change %d not delivered", i)
			}
			time.Sleep(time.Millisecond)
		}
		if i >= warmup {
			lat = append(lat, receiver.Received()[want-1].At.Sub(acked))
		}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.Logf("acknowledgement → receiver, %d sequential changes: p50 %s, p90 %s, max %s, mean %s",
		n, lat[n/2].Round(time.Millisecond), lat[n*9/10].Round(time.Millisecond), lat[n-1].Round(time.Millisecond), (sum / n).Round(time.Millisecond))
	b.ReportMetric(msOf(lat[n/2]), "p50_ms")
	b.ReportMetric(msOf(lat[n*9/10]), "p90_ms")
	b.ReportMetric(msOf(lat[n-1]), "max_ms")
	b.ReportMetric(msOf(sum/n), "mean_ms")

	// Throughput: 8 clients send 40 changes each as fast as they are acknowledged; the
	// figure is the deliveries per second from the first change to the last delivery.
	const clients, each = 8, 40
	before := len(receiver.Received())
	began := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c.clone(0)
			for j := range each {
				if _, err := cl.change(ctx, "PATCH", "/v1/accounts/"+acc["id"].(string), map[string]any{"name": fmt.Sprintf("Measure Co %d-%d", i, j)}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	sent := time.Since(began)
	for len(receiver.Received()) < before+clients*each {
		if ctx.Err() != nil {
			b.Fatalf("%d of %d changes delivered", len(receiver.Received())-before, clients*each)
		}
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(began)
	b.Logf("%d changes from %d clients: acknowledged in %s, all delivered in %s: %.1f deliveries/s",
		clients*each, clients, sent.Round(time.Millisecond), took.Round(time.Millisecond), float64(clients*each)/took.Seconds())
	b.ReportMetric(float64(clients*each)/took.Seconds(), "c8_deliveries_per_s")
}
