package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
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
	org, err := st.CreateOrganization(ctx, "Acme", "hooks@acme.test", "x")
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
