package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// What binding secrets to their row costs a read (CONTRACT §25): an environment's 16
// endpoints, each with a signing secret, a previous one and two headers, sealed unbound
// (the baseline: the release before's form) in one environment and bound in another,
// read in turn in the same loop by the same store on one SQLite file. It prints both
// and their ratio.
func BenchmarkSealedEndpointReads(b *testing.B) {
	ctx := context.Background()
	url := filepath.Join(b.TempDir(), "revops.db")
	testdb.Open(b, url)
	unbound, bound := false, true
	live := testdb.Seed(b, openForm(b, url, nil), models.EnvLive)
	sandbox, err := openForm(b, url, nil).Environment(ctx, live.OrganizationID, models.EnvSandbox)
	if err != nil {
		b.Fatal(err)
	}
	envs := map[bool]models.Env{false: live, true: sandbox}
	for _, form := range []*bool{&unbound, &bound} {
		st, env := openForm(b, url, form), envs[*form]
		for i := range 16 {
			ep := createWith(b, st, env, fmt.Sprintf("whsec_%044d", i), map[string]string{"X-Api-Key": "k", "Authorization": "Bearer t"})
			if _, err := webhook.RotateSecret(ctx, st, env, ep.ID, fmt.Sprintf("whsec_%044d", i+100), time.Now().UTC(), time.Hour,
				idempotency.Reply[webhook.SecretObject]{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	st := openForm(b, url, nil)
	if use, err := st.SecretKeyUse(ctx); err != nil || use.Unbound != 16*3 {
		b.Fatalf("unbound values: %+v, %v; want 48", use, err)
	}
	var spent [2]time.Duration // unbound, bound
	read := func(st *store.Store, env models.Env) time.Duration {
		start := time.Now()
		if eps, err := st.AllWebhookEndpoints(ctx, env); err != nil || len(eps) != 16 {
			b.Fatalf("%d endpoints, %v", len(eps), err)
		}
		return time.Since(start)
	}
	for b.Loop() {
		spent[0] += read(st, envs[false])
		spent[1] += read(st, envs[true])
	}
	n := float64(b.N)
	b.ReportMetric(float64(spent[0].Microseconds())/n, "unbound_µs/read")
	b.ReportMetric(float64(spent[1].Microseconds())/n, "bound_µs/read")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "bound/unbound")
}
