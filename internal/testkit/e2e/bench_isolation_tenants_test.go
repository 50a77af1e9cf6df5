package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/meters"
)

// isolation is the tenant-isolation benchmark's two tenants on one rig: B is the rig's
// environment (its deals, endpoint and receiver) with one meter; A is another
// organization's sandbox. The meter consumer runs here, on the job pool, as the worker
// runs it.
type isolation struct {
	r          *benchRig
	cfg        isoConfig
	keyB, envB string
	keyA, envA string
	seq        atomic.Int64
	consumer   consumerCtl
}

func newIsolation(b *testing.B, r *benchRig, cfg isoConfig) *isolation {
	ctx := context.Background()
	iso := &isolation{r: r, cfg: cfg, keyB: r.key, envB: r.env.ID}
	iso.seq.Store(time.Now().UnixNano() % 1e12)
	keyA, envA := r.sandboxOf(ctx, b, "Heavy", "heavy@acme.test")
	iso.keyA, iso.envA = keyA, envA.ID
	if err := r.callAs(iso.keyB, r.api.URL, "POST", "/v1/meters", map[string]any{"key": "b_calls",
		"filter": map[string]any{"metric_name": "calls"}, "aggregation": "count"}, nil); err != nil {
		b.Fatal(err)
	}
	iso.consumer = consumerCtl{st: r.st.OnJobsPool()}
	iso.consumer.start(cfg.consumers[0])
	b.Cleanup(iso.consumer.stop)
	return iso
}

// consumerCtl runs meters.Consumer with a number of consumers, stopped and started again
// between cases.
type consumerCtl struct {
	st     meters.Store
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *consumerCtl) start(n int) {
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go func() {
		defer close(c.done)
		(&meters.Consumer{Store: c.st, Consumers: n}).Run(ctx)
	}()
}

func (c *consumerCtl) stop() {
	if c.cancel != nil {
		c.cancel()
		<-c.done
		c.cancel = nil
	}
}

// post sends one usage batch with key.
func (iso *isolation) post(key string, body []byte) error {
	return iso.send(key, "POST", "/v1/usage/events", body)
}

// send makes one request with key and body as is (nil: none).
func (iso *isolation) send(key, method, path string, body []byte) error {
	req, err := http.NewRequest(method, iso.r.api.URL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := iso.r.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, got)
	}
	return nil
}

// usageBody is a batch of n metrics "calls" over 250 accounts, each with its own
// metadata: a region (4), a plan (3), a user (10,000) and pad bytes of padding.
func usageBody(seq int64, n, pad int) []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"transaction_id":"iso-%d","mode":"increment","event_metrics":[`, seq)
	now := time.Now().Unix()
	padding := strings.Repeat("p", pad)
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"account_id":"acct_%d","product":"platform","metric_name":"calls","metric_value":%d,"metric_resolution":"hour","timestamp":%d,"metadata":{"region":"r%d","plan":"p%d","user":"user_%d"`,
			rand.IntN(250), rand.IntN(1000), now-rand.Int64N(600), rand.IntN(4), rand.IntN(3), rand.IntN(10000))
		if pad > 0 {
			sb.WriteString(`,"pad":"` + padding + `"`)
		}
		sb.WriteString("}}")
	}
	sb.WriteString("]}")
	return []byte(sb.String())
}

// ingestA posts batches of 1,000 metrics to A from 4 clients.
func (iso *isolation) ingestA(b *testing.B, batches, pad int) {
	if err := parallel(4, batches, func(int) error {
		return iso.post(iso.keyA, usageBody(iso.seq.Add(1), 1000, pad))
	}); err != nil {
		b.Fatal(err)
	}
}

// aMeter is A's i-th meter: every one grouped by the user (10,000 values), the heavy
// case of the issue, over sum, count, max and unique_count.
func aMeter(i int) map[string]any {
	m := map[string]any{"key": "a_m" + strconv.Itoa(i), "filter": map[string]any{"metric_name": "calls"}}
	switch i % 4 {
	case 0:
		m["aggregation"], m["group_by"] = "sum", []string{"user"}
	case 1:
		m["aggregation"], m["group_by"] = "count", []string{"user", "region"}
	case 2:
		m["aggregation"], m["group_by"] = "max", []string{"user"}
	default:
		m["aggregation"], m["value_key"], m["group_by"] = "unique_count", "user", []string{"region", "plan"}
	}
	return m
}

// backfill creates A's meters over its history and waits until every one is ready.
func (iso *isolation) backfill(b *testing.B) {
	for i := range iso.cfg.meters {
		if err := iso.r.callAs(iso.keyA, iso.r.api.URL, "POST", "/v1/meters", aMeter(i), nil); err != nil {
			b.Fatal(err)
		}
	}
	iso.waitZero(b, "A's meters not ready", `SELECT count(*) FROM meters WHERE environment_id = ? AND status <> 'ready'`, iso.envA)
}

// deleteAll deletes A's meters and waits until every purge has ended.
func (iso *isolation) deleteAll(b *testing.B) {
	for i := range iso.cfg.meters {
		if err := iso.send(iso.keyA, "DELETE", "/v1/meters/a_m"+strconv.Itoa(i), nil); err != nil {
			b.Fatal(err)
		}
	}
	iso.waitZero(b, "A's purges", `SELECT count(*) FROM meter_purges WHERE environment_id = ?`, iso.envA)
}

func (iso *isolation) waitCountedA(b *testing.B) { iso.waitCounted(b, iso.envA) }
func (iso *isolation) waitCountedB(b *testing.B) { iso.waitCounted(b, iso.envB) }

// waitCounted waits until the consumer has taken every batch of env.
func (iso *isolation) waitCounted(b *testing.B, env string) {
	iso.waitZero(b, "batches waiting", `SELECT count(*) FROM usage_batches WHERE environment_id = ? AND gen IS NULL`, env)
}

// waitZero polls q until it counts 0 (at most 15 minutes).
func (iso *isolation) waitZero(b *testing.B, what, q string, args ...any) {
	give := time.Now().Add(15 * time.Minute)
	for {
		var n int64
		if err := iso.r.scratch.Raw(q, args...).Scan(&n).Error; err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(give) {
			b.Fatalf("%s: %d after 15 minutes", what, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
