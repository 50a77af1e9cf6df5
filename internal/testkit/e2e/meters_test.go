package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/meters/meterstest"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// devMatchingRows is how many rows of the metered metric exist when the meters are created.
const devMatchingRows = 20000

// CONTRACT §18 "Covering every event exactly once", on the dev shape: the embedded
// Temporal server with `revops dev`'s dynamic config (devstack) and one process running
// the API and the worker as `revops dev` wires them (app.Run), on PostgreSQL. A client
// keeps sending batches of 1,000 usage rows through POST /v1/usage/events; once 20,000
// rows of the metric exist, meters of three aggregations are created through POST
// /v1/meters while it goes on. Each is backfilling; its MeterBackfill run (started by the
// API after commit, on revops-jobs, fair by its environment) makes it ready while rows
// keep coming; then the client stops, and once as_of passes its last batch every value
// GET /v1/meters/{key}/values answers, at every window size, with and without group_by,
// equals meters.Reference over the stored rows: no row missed, none counted twice,
// whether it came before the meter, while it was created or after.
func TestMetersCountEveryRowOnceAcrossTheirBackfill(t *testing.T) {
	db := webhooktest.New(t)
	ctx := context.Background()
	key := secretKey(t, db.Store, db.Env.OrganizationID, db.Env.Name)
	base, tc := startDev(t, db.Store, app.Parts{})

	now := time.Now().UTC()
	began := time.Now()
	feed := meterstest.StartFeed(ctx, httpPost(base+"/v1/usage/events", key.Plain), 1000, 0, 1, now)
	for feed.Matching() < devMatchingRows {
		if err := feed.Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d rows of %s in %d batches in %s; creating the meters while ingest goes on",
		feed.Matching(), meterstest.Metric, feed.Batches(), time.Since(began).Round(time.Millisecond))

	// From now on four batches a second: rows keep coming while the meters are created
	// and backfilled, at a pace the consumer follows on a shared machine.
	feed.SetPause(250 * time.Millisecond)
	api := devAPI{base: base, key: key.Plain, retryBusy: true} // meters created while this environment's own ingest goes on
	var created []models.Meter
	for _, body := range []string{
		`{"key":"calls-by-region","filter":{"metric_name":"calls"},"aggregation":"sum","group_by":["region"]}`,
		`{"key":"api-users","filter":{"metric_name":"calls","product":"api"},"aggregation":"unique_count","value_key":"user"}`,
		`{"key":"calls-latest","filter":{"metric_name":"calls"},"aggregation":"latest","group_by":["region"]}`,
	} {
		var obj struct{ ID, Key, Status string }
		if err := api.post(ctx, "/v1/meters", body, &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Status != models.MeterBackfilling {
			t.Fatalf("meter %s created %s with %d rows before it, want backfilling", obj.Key, obj.Status, feed.Matching())
		}
		m, err := db.Store.MeterByID(ctx, obj.ID)
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, m)
	}
	step := time.Now()
	for _, m := range created {
		waitMeterReady(t, api, m.Key, 3*time.Minute)
	}
	t.Logf("meters ready %s after their creation, %d rows of %s sent by then", time.Since(step).Round(time.Millisecond), feed.Matching(), meterstest.Metric)
	last, err := feed.Stop()
	if err != nil {
		t.Fatal(err)
	}

	rows, err := db.Store.MeterRows(ctx, db.Env.ID, meterstest.Metric)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != feed.Matching() {
		t.Fatalf("%d stored rows of %s, the feed had %d accepted", len(rows), meterstest.Metric, feed.Matching())
	}
	for _, m := range created {
		values := meterstest.HTTPValues(api.get)
		meterstest.WaitAsOf(t, values, m.Key, last, 3*time.Minute)
		n := meterstest.Check(t, values, m, rows, now, last)
		wid := wire.MeterBackfillWorkflowID(m.ID)
		var res wire.MeterBackfillResult
		if err := tc.GetWorkflow(ctx, wid, "").Get(ctx, &res); err != nil {
			t.Fatalf("run of %s: %v", wid, err)
		}
		d, err := tc.DescribeWorkflowExecution(ctx, wid, "")
		if err != nil {
			t.Fatal(err)
		}
		info := d.GetWorkflowExecutionInfo()
		if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED || info.GetTaskQueue() != wire.JobsTaskQueue ||
			info.GetPriority().GetFairnessKey() != db.Env.ID {
			t.Errorf("%s: %s on %s with fairness key %q, want completed on %s fair by %s", wid, info.GetStatus(),
				info.GetTaskQueue(), info.GetPriority().GetFairnessKey(), wire.JobsTaskQueue, db.Env.ID)
		}
		t.Logf("meter %s (%s): %d values equal the reference; backfill %d pages, %d rows", m.Key, m.Aggregation, n, res.Pages, res.Rows)
	}
	t.Logf("%d rows of %s in %d batches in all", len(rows), meterstest.Metric, feed.Batches())
}

// httpPost posts usage batches to url with key, expecting 201.
func httpPost(url, key string) meterstest.Post {
	api := devAPI{base: url, key: key}
	return func(ctx context.Context, body []byte) error { return api.post(ctx, "", string(body), nil) }
}

// devAPI calls the dev process's API with a secret key.
// devAPI calls a running Revops with one key. retryBusy: a 429 is retried (see do); the
// §21 tests leave it off, where the quiet environment being refused is the failure.
type devAPI struct {
	base, key string
	retryBusy bool
}

// post sends body to path, expecting 201, and decodes the answer into into (nil: none).
func (a devAPI) post(ctx context.Context, path, body string, into any) error {
	return a.do(ctx, http.MethodPost, path, body, http.StatusCreated, into)
}

// get reads path, expecting 200 (meterstest.Get).
func (a devAPI) get(ctx context.Context, path string, into any) error {
	return a.do(ctx, http.MethodGet, path, "", http.StatusOK, into)
}

// do sends the request; with retryBusy, again after Retry-After while it is answered 429
// (a lock held past the request's lock timeout by the environment's own backfill or
// consumer on a loaded machine, CONTRACT §21: a client retries it), up to five times.
func (a devAPI) do(ctx context.Context, method, path, body string, want int, into any) error {
	var res *http.Response
	var b []byte
	for try := 1; ; try++ {
		req, err := http.NewRequestWithContext(ctx, method, a.base+path, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+a.key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if res, err = http.DefaultClient.Do(req); err != nil {
			return err
		}
		b, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if !a.retryBusy || res.StatusCode != http.StatusTooManyRequests || want == http.StatusTooManyRequests || try == 5 {
			break
		}
		wait, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		time.Sleep(time.Duration(max(wait, 1)) * time.Second)
	}
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, a.base+path, res.StatusCode, b)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(b, into)
}

// waitMeterReady waits until GET /v1/meters/{key} says ready, within bound.
func waitMeterReady(t *testing.T, api devAPI, key string, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		var m struct{ Status string }
		if err := api.get(context.Background(), "/v1/meters/"+key, &m); err != nil {
			t.Fatal(err)
		}
		if m.Status == models.MeterReady {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("meter %s still %s after %s", key, m.Status, bound)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
