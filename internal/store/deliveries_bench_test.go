package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/domain/webhook/webhooktest"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// The two store calls of every DeliverWebhook attempt, each against the code it replaced
// measured in the same run (PostgreSQL):
//
//	go test ./internal/store -run '^$' -bench 'RecordDeliveryAttempt|DeliveryForAttempt' -benchtime 2000x

// benchEvents is a PostgreSQL store with an environment of three endpoints ("*") and
// n events, each with its three deliveries.
func benchEvents(b *testing.B, n int) (*store.Store, store.Env, [][]models.WebhookDelivery) {
	b.Helper()
	postgresOnly(b)
	st := testdb.New(b)
	env := testdb.Seed(b, st, models.EnvLive)
	for i := 0; i < 3; i++ {
		newEndpoint(b, seeded{st: st, env: env}, fmt.Sprintf("https://%d.example/", i), nil, true)
	}
	return st, env, moreBenchEvents(b, st, env, n)
}

// moreBenchEvents writes n more events and returns their deliveries.
func moreBenchEvents(b *testing.B, st *store.Store, env store.Env, n int) [][]models.WebhookDelivery {
	b.Helper()
	ctx := context.Background()
	out := make([][]models.WebhookDelivery, n)
	for i := range out {
		ev := newAccountEvent(b, seeded{st: st, env: env})
		var err error
		if out[i], err = st.EventDeliveries(ctx, env, ev.ID); err != nil || len(out[i]) != 3 {
			b.Fatalf("deliveries %v %v", out[i], err)
		}
	}
	return out
}

type recordFunc func(ctx context.Context, env store.Env, a *models.DeliveryAttempt, status string) error

// BenchmarkRecordDeliveryAttempt records one failed attempt (delivery retrying) per
// operation, alone ("1 endpoint"), or as the three deliveries of one event do, at the
// same moment ("3 endpoints": one operation is the three records, queued on the event).
func BenchmarkRecordDeliveryAttempt(b *testing.B) {
	st, env, _ := benchEvents(b, 0)
	impls := []struct {
		name   string
		record recordFunc
	}{
		{"old", func(ctx context.Context, env store.Env, a *models.DeliveryAttempt, status string) error {
			return st.RecordDeliveryAttemptStepByStepForTest(ctx, env, a, webhook.AttemptChange(a, status))
		}},
		{"new", func(ctx context.Context, env store.Env, a *models.DeliveryAttempt, status string) error {
			return webhooktest.RecordAttempt(ctx, st, env, a, status)
		}},
	}
	record := func(b *testing.B, rec recordFunc, d models.WebhookDelivery, n int) {
		a := models.DeliveryAttempt{EventID: d.EventID, DeliveryID: d.ID, RunID: "bench", Number: n, Trigger: models.TriggerScheduled,
			StartedAt: time.Now().UTC(), Outcome: models.AttemptFailed, Error: "status 500"}
		if err := rec(context.Background(), env, &a, models.EventRetrying); err != nil {
			b.Error(err)
		}
	}
	for _, endpoints := range []int{1, 3} {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("%d endpoints/%s", endpoints, impl.name), func(b *testing.B) {
				events := moreBenchEvents(b, st, env, 100)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					ds := events[i%len(events)]
					if endpoints == 1 {
						record(b, impl.record, ds[0], i)
						continue
					}
					var wg sync.WaitGroup
					for _, d := range ds {
						wg.Add(1)
						go func() {
							defer wg.Done()
							record(b, impl.record, d, i)
						}()
					}
					wg.Wait()
				}
			})
		}
	}
}

// BenchmarkDeliveryForAttempt reads what an attempt needs before it sends.
func BenchmarkDeliveryForAttempt(b *testing.B) {
	st, _, events := benchEvents(b, 100)
	impls := []struct {
		name string
		read func(ctx context.Context, id string) (store.DeliveryTarget, error)
	}{
		{"old", st.DeliveryForAttemptThreeQueriesForTest},
		{"new", st.DeliveryForAttempt},
	}
	for _, impl := range impls {
		b.Run(impl.name, func(b *testing.B) {
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				ds := events[i%len(events)]
				if t, err := impl.read(ctx, ds[i%3].ID); err != nil || t.Endpoint == nil {
					b.Fatalf("%+v %v", t, err)
				}
			}
		})
	}
}
