package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

func webhookEnvs(t *testing.T) (*store.Store, store.Env, store.Env) {
	t.Helper()
	ctx := context.Background()
	st := testdb.New(t)
	org, err := orgs.CreateWithHash(ctx, st, "Acme", "hooks@acme.test", "x")
	if err != nil {
		t.Fatal(err)
	}
	live, _ := st.Environment(ctx, org.ID, models.EnvLive)
	sandbox, _ := st.Environment(ctx, org.ID, models.EnvSandbox)
	return st, live, sandbox
}

// putOldest is the §8 PUT as webhook.Endpoints.Put makes it: url, method and enabled,
// on the oldest endpoint or on a new one with secret.
func putOldest(st *store.Store, env store.Env, url, method string, enabled bool, secret string, now time.Time) (models.WebhookEndpoint, bool, error) {
	return webhook.PutOldest(context.Background(), st, env,
		models.WebhookEndpoint{URL: url, Method: method, Enabled: enabled, Secret: secret},
		webhook.EndpointPatch{URL: &url, Method: &method, Enabled: &enabled}, now)
}

func TestWebhookEndpointPutKeepsSecretAndIsPerEnvironment(t *testing.T) {
	ctx := context.Background()
	st, live, sandbox := webhookEnvs(t)
	now := time.Now().UTC()

	// Concurrent first PUTs: one creates, the others update; one row, one secret.
	var wg sync.WaitGroup
	created := make(chan bool, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, c, err := putOldest(st, sandbox, "https://a.example/h", "POST", true, "whsec_c2VjcmV0"+string(rune('A'+i)), now)
			if err != nil {
				t.Error(err)
			}
			created <- c
		}(i)
	}
	wg.Wait()
	close(created)
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d PUTs created the endpoint, want 1", n)
	}
	first, _ := st.WebhookEndpoint(ctx, sandbox)

	ep, c, err := putOldest(st, sandbox, "https://b.example/", "GET", false, "whsec_other", now)
	if err != nil || c || ep.Secret != first.Secret || ep.URL != "https://b.example/" || ep.Method != "GET" || ep.Enabled {
		t.Fatalf("update: %+v created=%v err=%v", ep, c, err)
	}
	if _, err := st.WebhookEndpoint(ctx, live); !errors.Is(err, apperr.ErrNotFound) {
		t.Fatalf("live endpoint: %v, want not found", err)
	}
	// Enabled=false is written on creation too.
	ep, _, err = putOldest(st, live, "https://c.example/", "POST", false, "whsec_live", now)
	if err != nil || ep.Enabled {
		t.Fatalf("create disabled: %+v %v", ep, err)
	}
	if got, _ := st.WebhookEndpoint(ctx, live); got.Enabled {
		t.Fatal("disabled endpoint stored as enabled")
	}

	rot, err := webhook.RotateSecret(ctx, st, sandbox, first.ID, "whsec_new", now, 24*time.Hour, idempotency.Reply[webhook.SecretObject]{})
	if err != nil || rot.Secret != "whsec_new" || rot.PreviousSecret != first.Secret || rot.PreviousUntil == nil {
		t.Fatalf("rotate: %+v %v", rot, err)
	}
	if got, _ := st.WebhookEndpoint(ctx, sandbox); got.Secret != "whsec_new" || got.PreviousSecret != first.Secret ||
		got.PreviousUntil.Sub(now.Add(24*time.Hour)).Abs() > time.Second {
		t.Fatalf("after rotation: %+v", got)
	}
}

// The singular PUT and a rotation of the same endpoint, committing together (PostgreSQL;
// SQLite's write transactions are exclusive): the PUT patches the row as the rotation
// left it, never a copy it read before, so the rotated secret survives (CONTRACT §13).
func TestWebhookEndpointPutKeepsAConcurrentRotation(t *testing.T) {
	ctx := context.Background()
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	org, err := orgs.CreateWithHash(ctx, st, "Acme", "hooks@acme.test", "x")
	if err != nil {
		t.Fatal(err)
	}
	live, _ := st.Environment(ctx, org.ID, models.EnvLive)
	ep, _, err := putOldest(st, live, "https://a.example/h", "POST", true, "whsec_first", time.Now().UTC())
	if err != nil {
		t.Fatal(err)
	}

	locked, release, rotated := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := st.InTx(ctx, live, func(tx *store.Tx) error {
			cur, err := tx.LockEndpoint(ep.ID)
			if err != nil {
				return err
			}
			cur.PreviousSecret, cur.Secret = cur.Secret, "whsec_rotated"
			if err := tx.SaveEndpoint(&cur); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
		rotated <- err
	}()
	select {
	case <-locked:
	case err := <-rotated:
		t.Fatalf("rotation: %v", err)
	}
	put := make(chan error, 1)
	go func() {
		_, _, err := putOldest(st, live, "https://b.example/h", "POST", true, "whsec_unused", time.Now().UTC())
		put <- err
	}()
	// The PUT must be waiting on the rotation's row lock before the rotation commits.
	raw := testdb.Raw(t, "postgres", url)
	for waiting := int64(0); waiting == 0; {
		if err := raw.Raw(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting).Error; err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-put:
			t.Fatalf("the PUT finished while the rotation held the endpoint: %v", err)
		case <-time.After(5 * time.Millisecond): // poll again
		}
	}
	close(release)
	if err := <-rotated; err != nil {
		t.Fatal(err)
	}
	if err := <-put; err != nil {
		t.Fatal(err)
	}
	got, err := st.WebhookEndpoint(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if got.Secret != "whsec_rotated" || got.PreviousSecret != "whsec_first" || got.URL != "https://b.example/h" {
		t.Fatalf("after PUT and rotation: secret %q previous %q url %q; want the rotation's secrets and the PUT's URL", got.Secret, got.PreviousSecret, got.URL)
	}
}
