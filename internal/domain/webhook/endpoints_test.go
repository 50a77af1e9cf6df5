package webhook_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Second: "1m30s", 150 * time.Minute: "2h30m", time.Second: "1s",
		1500 * time.Millisecond: "1.5s", 24 * time.Hour: "24h", time.Hour + time.Second: "1h0m1s", 5 * time.Minute: "5m",
	} {
		if got := webhook.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(webhook.FormatDuration(d)); err != nil || back != d {
			t.Errorf("%q does not parse back to %v: %v %v", webhook.FormatDuration(d), d, back, err)
		}
	}
}

// A destination refused at save time is webhook.ErrURLNotAllowed, carried by an
// apperr.InvalidError that names url_not_allowed and the url parameter: the package says
// what is wrong, the edge chooses the status (CONTRACT §8).
func TestRefusedDestinationIsErrURLNotAllowed(t *testing.T) {
	e := &webhook.Endpoints{} // refused before the store is reached
	ctx, url := context.Background(), "https://127.0.0.1/hook"
	for name, call := range map[string]func() error{
		"create": func() error {
			_, err := e.Create(ctx, models.Env{}, webhook.EndpointFields{URL: &url}, idempotency.Reply[webhook.EndpointObject]{})
			return err
		},
		"put": func() error {
			_, _, err := e.Put(ctx, models.Env{}, webhook.EndpointFields{URL: &url})
			return err
		},
	} {
		err := call()
		var ie *apperr.InvalidError
		if !errors.Is(err, webhook.ErrURLNotAllowed) || !errors.As(err, &ie) || ie.Code != webhook.CodeURLNotAllowed || ie.Param != "url" {
			t.Errorf("%s of %s: %v (%#v), want ErrURLNotAllowed as url_not_allowed on url", name, url, err, ie)
		}
	}
}
