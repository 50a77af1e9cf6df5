package webhook_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

type identities struct {
	ids []string
	err error
}

func (i identities) WorkerIdentities(context.Context) ([]string, error) { return i.ids, i.err }

// The rolling-upgrade gate (CONTRACT §26): ordering "object" passes only when every
// worker seen names a release that honours lanes; "none" always passes; a refusal is a
// 400 on "ordering" that says why.
func TestCheckOrdering(t *testing.T) {
	ctx := context.Background()
	current := webhook.WorkerIdentity("12@host-a", "v1.4.0")
	cases := []struct {
		name    string
		w       webhook.WorkerIdentities
		refused string // a word of the refusal; "" = accepted
	}{
		{"every worker honours lanes", identities{ids: []string{current, webhook.WorkerIdentity("9@host-b", "v1.4.0")}}, ""},
		{"an earlier release", identities{ids: []string{current, "77@host-c@"}}, "77@host-c@"},
		{"no worker", identities{}, "no worker"},
		{"Temporal away", identities{err: errors.New("unavailable")}, "could not be listed"},
		{"no view of the workers", nil, "cannot see"},
	}
	for _, c := range cases {
		if err := webhook.CheckOrdering(ctx, c.w, models.OrderingNone); err != nil {
			t.Errorf("%s: ordering none refused: %v", c.name, err)
		}
		err := webhook.CheckOrdering(ctx, c.w, models.OrderingObject)
		if c.refused == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		var inv *apperr.InvalidError
		if !errors.As(err, &inv) || !errors.Is(err, webhook.ErrOrderingNotReady) || !strings.Contains(err.Error(), c.refused) ||
			!strings.Contains(err.Error(), "ordering") {
			t.Errorf("%s: %v, want a 400 on ordering saying %q", c.name, err, c.refused)
		}
	}
	if !webhook.HonoursLanes(current) || webhook.HonoursLanes("12@host@") || webhook.HonoursLanes("12@host+lanes") {
		t.Error("HonoursLanes reads identities wrongly")
	}
}

// The gate stands in front of an endpoint's create (and update, which reads the endpoint
// first): ordering "object" is refused while a worker of an earlier release polls, before
// anything is written (no store is reached: the Endpoints here have none).
func TestCreateAsksTheGate(t *testing.T) {
	e := &webhook.Endpoints{AllowPrivate: true, LaneWorkers: identities{ids: []string{"77@host-c@"}}}
	url, object := "https://127.0.0.1/hooks", models.OrderingObject
	_, err := e.Create(context.Background(), models.Env{}, webhook.EndpointFields{URL: &url, Ordering: &object}, idempotency.Reply[webhook.EndpointObject]{})
	if !errors.Is(err, webhook.ErrOrderingNotReady) {
		t.Fatalf("create with ordering object while an earlier worker polls: %v, want the gate's refusal", err)
	}
}
