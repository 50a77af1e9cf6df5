package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/revops/revops/internal/app"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// deletionBacklog is the dead receiver's backlog of the deleted endpoint: past
// PostgreSQL's 65,535 parameters, where the DELETE that locked every event in one
// statement failed every time.
const deletionBacklog = 70_000

// twoTenants are environment A (the stack's sandbox) and B (the same organization's
// live environment), each with its key, on the dev shape (startDev) with HTTPS receivers
// trusted: §21's test shape, A doing the heavy thing while B is served.
type twoTenants struct {
	db   *webhooktest.DB
	a, b devAPI
	tc   client.Client
}

func newTwoTenants(t *testing.T, p app.Parts) *twoTenants {
	t.Helper()
	db := webhooktest.New(t)
	ctx := context.Background()
	envB, err := db.Store.Environment(ctx, db.Env.OrganizationID, models.EnvLive)
	if err != nil {
		t.Fatal(err)
	}
	keyA := secretKey(t, db.Store, db.Env.OrganizationID, db.Env.Name)
	keyB := secretKey(t, db.Store, envB.OrganizationID, envB.Name)
	base, tc := startDev(t, db.Store, p, "--webhook-ca-file", webhooktest.CAFile(t), "--webhook-allow-private")
	return &twoTenants{db: db, a: devAPI{base: base, key: keyA.Plain}, b: devAPI{base: base, key: keyB.Plain}, tc: tc}
}

// deletionResult waits for the EndpointDeletion run of endpoint id and says what it did.
func (tt *twoTenants) deletionResult(t *testing.T, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var res wire.EndpointDeletionResult
	for {
		err := tt.tc.GetWorkflow(ctx, wire.EndpointDeletionWorkflowID(id), "").Get(ctx, &res)
		var notYet *serviceerror.NotFound
		if errors.As(err, &notYet) && ctx.Err() == nil {
			// The DELETE records the job; its run starts after the commit, a moment after the answer.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatalf("deletion of %s: %v", id, err)
		}
		break
	}
	return fmt.Sprintf("%d pages, %d deliveries", res.Pages, res.Rows)
}

// endpoint creates an endpoint of api's environment with body (JSON) and returns its id.
func (tt *twoTenants) endpoint(t *testing.T, api devAPI, body string) string {
	t.Helper()
	var ep struct{ ID string }
	if err := api.post(context.Background(), "/v1/webhook_endpoints", body, &ep); err != nil {
		t.Fatal(err)
	}
	return ep.ID
}

// CONTRACT §13, §21 on the dev shape (embedded Temporal, API and worker in one process,
// PostgreSQL): environment A deletes an endpoint whose dead receiver left 70,000
// deliveries retrying. The DELETE answers 200 while none of them has ended (a test
// transaction holds a row lock on one backlog event, so the deletion's job cannot end
// before the test lets it), the endpoint is 404 on every route and takes no new
// delivery, its EndpointDeletion run is open on revops-jobs fair by A, and environment
// B's requests are answered and its change delivered meanwhile. Once the lock goes, the
// job ends every delivery skipped in bounded pages and frees the endpoint's slot.
// (That the DELETE issues the same statements for 70,000 deliveries as for 10 is
// store.TestDeleteEndpointStatementsDoNotGrowWithItsBacklog.)
func TestDeletingAnEndpointWithALargeBacklogAnswersAtOnce(t *testing.T) {
	tt := newTwoTenants(t, app.Parts{})
	ctx := context.Background()
	db, sql := tt.db, tt.db.SQL()
	rcB := webhooktest.NewReceiver(t)
	dead := tt.endpoint(t, tt.a, `{"url":"https://127.0.0.1:9/dead"}`)
	tt.endpoint(t, tt.b, `{"url":"`+rcB.URL+`/b"}`)
	webhooktest.SeedBacklog(t, sql, db.Env, dead, deletionBacklog)

	hold := sql.Begin()
	defer hold.Rollback()
	var held []string
	if err := hold.Raw(`SELECT id FROM events WHERE environment_id = ? AND object_id = 'backlog' ORDER BY id LIMIT 1 FOR UPDATE`,
		db.Env.ID).Scan(&held).Error; err != nil || len(held) != 1 {
		t.Fatalf("locked %v (%v), want one backlog event", held, err)
	}

	// A bound on the wait only turns a DELETE that waits for the backlog into a failure
	// rather than a hung test.
	delCtx, cancelDel := context.WithTimeout(ctx, 30*time.Second)
	began := time.Now()
	var gone struct {
		ID      string
		Deleted bool
	}
	err := tt.a.do(delCtx, http.MethodDelete, "/v1/webhook_endpoints/"+dead, "", http.StatusOK, &gone)
	answered := time.Now()
	cancelDel()
	if err != nil || !gone.Deleted || gone.ID != dead {
		t.Fatalf("DELETE: %+v, %v", gone, err)
	}
	if n := countSQL(t, sql, `SELECT COUNT(*) FROM endpoint_deletions WHERE endpoint_id = ? AND environment_id = ?`, dead, db.Env.ID); n != 1 {
		t.Fatalf("%d deletion rows right after the answer, want its one awaiting the job", n)
	}
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "", ""}, {http.MethodPatch, "", `{"description":"x"}`}, {http.MethodDelete, "", ""},
		{http.MethodGet, "/secret", ""}, {http.MethodPost, "/rotate_secret", ""}, {http.MethodPost, "/test", `{"type":"account-created"}`},
	} {
		if err := tt.a.do(ctx, r.method, "/v1/webhook_endpoints/"+dead+r.path, r.body, http.StatusNotFound, nil); err != nil {
			t.Errorf("deleted endpoint: %v", err)
		}
	}
	var acct struct{ ID string }
	if err := tt.a.post(ctx, "/v1/accounts", `{"name":"A after the delete"}`, &acct); err != nil {
		t.Fatal(err)
	}
	if n := countSQL(t, sql, `SELECT COUNT(*) FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
		WHERE e.object_id = ? AND d.endpoint_id = ?`, acct.ID, dead); n != 0 {
		t.Fatalf("A's change after the delete got %d deliveries to the deleted endpoint", n)
	}
	waitJobRunning(t, tt.tc, wire.EndpointDeletionWorkflowID(dead), db.Env.ID)

	// B is served while A's deliveries wait for their end.
	var acctB struct{ ID string }
	if err := tt.b.post(ctx, "/v1/accounts", `{"name":"B meanwhile"}`, &acctB); err != nil {
		t.Fatal(err)
	}
	if err := tt.b.get(ctx, "/v1/webhook_endpoints", nil); err != nil {
		t.Fatalf("B's endpoints while A's deletion runs: %v", err)
	}
	waitFor(t, 2*time.Minute, "B's change delivered to B's receiver", func() bool { return len(rcB.Received()) > 0 })
	left := countSQL(t, sql, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status IN ('pending', 'retrying')`, dead)
	if left == 0 {
		t.Fatal("A's deliveries had all ended when B's delivery came: the test proves no order")
	}
	t.Logf("DELETE of an endpoint with %d retrying deliveries answered in %v; B delivered with %d of them still unfinished",
		deletionBacklog, answered.Sub(began).Round(time.Millisecond), left)

	if err := hold.Rollback().Error; err != nil {
		t.Fatal(err)
	}
	t.Logf("deletion's job: %s, ended %v after the DELETE answered", tt.deletionResult(t, dead), time.Since(answered).Round(time.Second))
	if n := countSQL(t, sql, `SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'skipped' AND last_error = 'endpoint_deleted'`, dead); n != deletionBacklog {
		t.Fatalf("%d deliveries skipped (endpoint_deleted), want %d", n, deletionBacklog)
	}
	if n := countSQL(t, sql, `SELECT (SELECT COUNT(*) FROM endpoint_deletions) +
		(SELECT COUNT(*) FROM events WHERE object_id = 'backlog' AND status <> 'skipped')`); n != 0 {
		t.Fatalf("%d deletion rows or backlog events not summarised skipped left", n)
	}
}

// CONTRACT §13: a run whose delivery's endpoint is deleted between two attempts wakes
// for its next attempt, sends nothing and ends quietly (completed, no attempt recorded);
// the delivery ends skipped (endpoint_deleted).
func TestARunWakingForADeletedEndpointEndsQuietly(t *testing.T) {
	tt := newTwoTenants(t, app.Parts{})
	ctx := context.Background()
	sql := tt.db.SQL()
	rc := webhooktest.NewReceiver(t)
	rc.SetRespond(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	// Ten seconds between attempts: the DELETE comes well before the second.
	id := tt.endpoint(t, tt.a, `{"url":"`+rc.URL+`/a","retry_policy":{"initial_interval":"10s","maximum_interval":"10s","maximum_attempts":5}}`)
	var acct struct{ ID string }
	if err := tt.a.post(ctx, "/v1/accounts", `{"name":"A"}`, &acct); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Minute, "the first attempt recorded", func() bool {
		return countSQL(t, sql, `SELECT COUNT(*) FROM delivery_attempts WHERE endpoint_id = ?`, id) == 1
	})
	if err := tt.a.do(ctx, http.MethodDelete, "/v1/webhook_endpoints/"+id, "", http.StatusOK, nil); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	t.Logf("deletion's job: %s", tt.deletionResult(t, id))

	var evID string
	if err := sql.Raw(`SELECT id FROM events WHERE object_id = ?`, acct.ID).Scan(&evID).Error; err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := tt.tc.GetWorkflow(waitCtx, wire.WorkflowID(evID), "").Get(waitCtx, nil); err != nil {
		t.Fatalf("the run woke for a deleted endpoint and ended with %v, want completed", err)
	}
	if got := rc.Received(); len(got) != 1 || got[0].At.After(deleted) {
		t.Fatalf("the receiver got %d requests, want the first attempt's only", len(got))
	}
	if n := countSQL(t, sql, `SELECT COUNT(*) FROM delivery_attempts WHERE event_id = ?`, evID); n != 1 {
		t.Errorf("%d attempts recorded, want the first only", n)
	}
	var d models.WebhookDelivery
	if err := sql.Where("event_id = ?", evID).Take(&d).Error; err != nil || d.Status != models.EventSkipped || d.LastError != models.DeliveryEndpointDeleted {
		t.Fatalf("delivery %+v (%v), want skipped (endpoint_deleted)", d, err)
	}
}
