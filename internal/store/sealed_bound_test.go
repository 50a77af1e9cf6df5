package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/secretbox"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// openForm opens a second store on url with the test keys, writing secrets bound to
// their row when bound says so (nil: the store decides, as REVOPS_SEAL_BOUND unset).
func openForm(t testing.TB, url string, bound *bool) *store.Store {
	t.Helper()
	o := keyed()
	o.SealBound = bound
	return openWith(t, url, o)
}

func ptr[T any](v T) *T { return &v }

// sealedColumnsOf reads the sealed columns of endpoint id as stored.
func sealedColumnsOf(t *testing.T, st *store.Store, id string) map[string]string {
	t.Helper()
	var rows []struct{ Secret, PreviousSecret, Headers string }
	if err := st.ScanForTest(context.Background(), &rows, `SELECT secret, previous_secret, headers FROM webhook_endpoints WHERE id = ?`, id); err != nil || len(rows) != 1 {
		t.Fatalf("sealed columns of %s: %v (%d rows)", id, err, len(rows))
	}
	return map[string]string{"secret": rows[0].Secret, "previous_secret": rows[0].PreviousSecret, "headers": rows[0].Headers}
}

// createWith creates an endpoint in env with secret and headers through st.
func createWith(t testing.TB, st *store.Store, env models.Env, secret string, headers map[string]string) models.WebhookEndpoint {
	t.Helper()
	ep, err := webhook.CreateEndpoint(context.Background(), st, env, models.WebhookEndpoint{URL: "https://receiver.example/h", Method: "POST",
		Enabled: true, Secret: secret, Headers: headers}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// otherTenant is a second organization's live environment in db.
func otherTenant(t *testing.T, db seeded) models.Env {
	t.Helper()
	ctx := context.Background()
	org, err := orgs.CreateWithHash(ctx, db.st, "Globex", "b@example.com", "x")
	if err != nil {
		t.Fatal(err)
	}
	env, err := db.st.Environment(ctx, org.ID, models.EnvLive)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// CONTRACT §25: a sealed value is bound to its table, column and row. One copied from
// another tenant's row, or from another column of the same row, does not open, on each
// read path (the endpoint read and list, the attempt's raw join under a column prefix),
// and the refusal names the row (table, column, id), never the value, sealed or clear.
func TestSealedValueCopiedElsewhereDoesNotOpen(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		if !db.st.SealsBound() {
			t.Fatal("a database that holds no secret yet: the store writes the unbound form")
		}
		a := createWith(t, db.st, db.env, "whsec_tenantAsecret", map[string]string{"X-Api-Key": "tenantAheader"})
		envB := otherTenant(t, db)
		b := createWith(t, db.st, envB, "whsec_tenantBsecret", map[string]string{"X-Api-Key": "tenantBheader"})
		ev := newAccountEvent(t, db)
		delivery := deliveriesByEndpoint(t, db, ev.ID)[a.ID]
		storedA, storedB := sealedColumnsOf(t, db.st, a.ID), sealedColumnsOf(t, db.st, b.ID)
		for col, v := range storedA {
			if v != "" && !secretbox.IsBound(v) {
				t.Fatalf("%s stored unbound: %q", col, v)
			}
		}
		secrets := []string{"tenantAsecret", "tenantBsecret", "tenantAheader", "tenantBheader", storedB["secret"], storedB["headers"], storedA["secret"]}

		for _, move := range []struct {
			what, column, from string
		}{
			{"tenant B's secret into A's row", "secret", storedB["secret"]},
			{"tenant B's headers into A's row", "headers", storedB["headers"]},
			{"A's own secret into its previous_secret", "previous_secret", storedA["secret"]},
			{"A's own headers into its secret", "secret", storedA["headers"]},
		} {
			exec(t, db, `UPDATE webhook_endpoints SET `+move.column+` = ? WHERE id = ?`, move.from, a.ID)
			wantPlace := secretbox.Place{Table: "webhook_endpoints", Column: move.column, Row: a.ID}.String()
			_, errRead := db.st.WebhookEndpointByID(ctx, db.env, a.ID)
			_, errAttempt := db.st.DeliveryForAttempt(ctx, delivery.ID)
			_, errList := db.st.AllWebhookEndpoints(ctx, db.env)
			for path, err := range map[string]error{"read": errRead, "attempt": errAttempt, "list": errList} {
				var sealErr *store.SealError
				if !errors.As(err, &sealErr) || !strings.Contains(err.Error(), wantPlace) || !strings.Contains(err.Error(), "another row or column") {
					t.Fatalf("%s, %s: %v; want a refusal naming %s", move.what, path, err, wantPlace)
				}
				for _, s := range secrets {
					if strings.Contains(err.Error(), s) {
						t.Fatalf("%s, %s: the error shows a value: %v", move.what, path, err)
					}
				}
			}
			// Put back, the value opens again: it was refused for its place only.
			exec(t, db, `UPDATE webhook_endpoints SET `+move.column+` = ? WHERE id = ?`, storedA[move.column], a.ID)
			got, err := db.st.WebhookEndpointByID(ctx, db.env, a.ID)
			if err != nil || got.Secret != "whsec_tenantAsecret" || got.Headers["X-Api-Key"] != "tenantAheader" || got.PreviousSecret != "" {
				t.Fatalf("after %s put back: %+v, %v", move.what, got, err)
			}
		}
		if got, err := db.st.WebhookEndpointByID(ctx, envB, b.ID); err != nil || got.Secret != "whsec_tenantBsecret" {
			t.Fatalf("tenant B's own endpoint: %v", err)
		}
	})
}

// A sealed field is never written without its row's id: the place could not be named.
func TestSealedWriteWithoutRowIDFails(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		_, err := db.st.SealedMapRoundTripForTest(context.Background(), store.SealedMapForTest{Headers: map[string]string{"X-Api-Key": "noid"}})
		var sealErr *store.SealError
		if !errors.As(err, &sealErr) || !strings.Contains(err.Error(), "sealed_maps_test.headers") || strings.Contains(err.Error(), "noid") {
			t.Fatalf("write without an id: %v", err)
		}
	})
}

// CONTRACT §25, rolling upgrades: a process of the release before (its sealer,
// previousRelease) keeps working beside this one until the operator switches. This
// release reads what the release before sealed; while the switch is off (the setting
// unset on a database holding the release before's secrets, or false) it writes what the
// release before reads; switched on, it writes the bound form, which the release before
// refuses loudly (malformed, never read as a clear secret); Reseal then moves the unbound
// values in bounded batches, and a second run finds nothing.
func TestSealFormRollingUpgrade(t *testing.T) {
	forBoth(t, models.EnvLive, func(t *testing.T, ctx context.Context, db seeded) {
		prev := previousSealer(t, testdb.Keys(), keyID(t, testdb.Keys()))
		if openForm(t, db.url, ptr(false)).SealsBound() {
			t.Fatal("REVOPS_SEAL_BOUND=false: the store writes the bound form")
		}

		// The release before wrote an endpoint (rotated: both secret columns, headers).
		old := newEndpoint(t, db, "https://old.example/h", nil, true)
		exec(t, db, `UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, headers = ? WHERE id = ?`,
			prev.mustSeal(t, "whsec_oldcurrent"), prev.mustSeal(t, "whsec_oldprevious"), prev.mustSeal(t, `{"X-Old":"oldheader"}`), old.ID)
		want := map[string][3]string{old.ID: {"whsec_oldcurrent", "whsec_oldprevious", "map[X-Old:oldheader]"}}

		// This release, the setting unset: the database keeps the release before's
		// secrets, so it writes their form, which the release before reads.
		cur := openForm(t, db.url, nil)
		if cur.SealsBound() {
			t.Fatal("auto on a database keeping unbound secrets: the store writes the bound form")
		}
		assertSecrets(t, cur, db.env, want)
		fresh := createWith(t, cur, db.env, "whsec_writtenunbound", map[string]string{"X-New": "newheader"})
		rotated, err := webhook.RotateSecret(ctx, cur, db.env, old.ID, "whsec_rotatedunbound", time.Now().UTC(), time.Hour, idempotency.Reply[webhook.SecretObject]{})
		if err != nil {
			t.Fatal(err)
		}
		want[fresh.ID] = [3]string{"whsec_writtenunbound", "", "map[X-New:newheader]"}
		want[old.ID] = [3]string{"whsec_rotatedunbound", "whsec_oldcurrent", "map[X-Old:oldheader]"}
		if rotated.PreviousSecret != "whsec_oldcurrent" {
			t.Fatalf("rotation: previous = %q", rotated.PreviousSecret)
		}
		assertPreviousReads(t, prev, cur, want)

		// The switch: every process runs this release. New writes are bound; this
		// release reads both forms; the release before cannot read a bound value, and
		// says so rather than use it as a clear secret.
		bound := openForm(t, db.url, ptr(true))
		after := createWith(t, bound, db.env, "whsec_writtenbound", nil)
		want[after.ID] = [3]string{"whsec_writtenbound", "", "map[]"}
		stored := sealedColumnsOf(t, bound, after.ID)["secret"]
		if !secretbox.IsBound(stored) {
			t.Fatalf("written after the switch: %q", stored)
		}
		if got, err := prev.Open(stored); err == nil || !strings.Contains(err.Error(), "malformed") || got != "" {
			t.Fatalf("the release before read a bound value: %q, %v", got, err)
		}
		assertSecrets(t, cur, db.env, want)
		if use, err := bound.SecretKeyUse(ctx); err != nil || use.Unbound != 5 {
			t.Fatalf("unbound before the re-seal: %+v, %v; want 5 (old's three columns, fresh's secret and headers)", use, err)
		}

		// The re-seal (revops migrate): in batches of one, the two endpoints holding
		// unbound values; then nothing.
		if n, err := bound.Reseal(ctx, 1); err != nil || n != 2 {
			t.Fatalf("reseal = %d, %v; want 2", n, err)
		}
		if n, err := bound.Reseal(ctx, store.ResealBatch); err != nil || n != 0 {
			t.Fatalf("second reseal = %d, %v; want 0", n, err)
		}
		for id := range want {
			for col, v := range sealedColumnsOf(t, bound, id) {
				if v != "" && !secretbox.IsBound(v) {
					t.Errorf("%s of %s still unbound after the re-seal", col, id)
				}
			}
		}
		if use, err := bound.SecretKeyUse(ctx); err != nil || use.Unbound != 0 || use.Clear != 0 {
			t.Fatalf("after the re-seal: %+v, %v", use, err)
		}
		assertSecrets(t, bound, db.env, want)
		// Nothing unbound is left: a process started without the setting binds too.
		if !openForm(t, db.url, nil).SealsBound() {
			t.Error("auto on a database keeping only bound secrets: the store writes the unbound form")
		}
	})
}

// assertSecrets reads every endpoint of env through st: secret, previous secret, headers.
func assertSecrets(t *testing.T, st *store.Store, env models.Env, want map[string][3]string) {
	t.Helper()
	eps, err := st.AllWebhookEndpoints(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != len(want) {
		t.Fatalf("%d endpoints, want %d", len(eps), len(want))
	}
	for _, ep := range eps {
		got := [3]string{ep.Secret, ep.PreviousSecret, fmt.Sprint(ep.Headers)}
		if got != want[ep.ID] {
			t.Errorf("endpoint %s reads %v, want %v", ep.ID, got, want[ep.ID])
		}
	}
}

// assertPreviousReads opens every sealed column as the release before's serializer does
// (its sealer; headers as a JSON object) and compares them with want.
func assertPreviousReads(t *testing.T, prev previousRelease, st *store.Store, want map[string][3]string) {
	t.Helper()
	for id, w := range want {
		cols := sealedColumnsOf(t, st, id)
		var got [3]string
		for i, col := range []string{"secret", "previous_secret", "headers"} {
			if secretbox.IsBound(cols[col]) {
				t.Fatalf("%s of %s written bound before the switch", col, id)
			}
			plain, err := prev.Open(cols[col])
			if err != nil {
				t.Fatalf("the release before reads %s of %s: %v", col, id, err)
			}
			got[i] = plain
		}
		headers := map[string]string{}
		if got[2] != "" {
			if err := json.Unmarshal([]byte(got[2]), &headers); err != nil {
				t.Fatal(err)
			}
		}
		got[2] = fmt.Sprint(headers)
		if got != w {
			t.Errorf("the release before reads %s as %v, want %v", id, got, w)
		}
	}
}
