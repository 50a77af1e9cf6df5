package app

import (
	"fmt"

	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/platform/config"
	"github.com/revops/revops/internal/store"
)

// NewEndpoints builds a process's one webhook Sender from cfg (REVOPS_WEBHOOK_ALLOW_PRIVATE,
// REVOPS_WEBHOOK_CA_FILE and the service's acknowledgement sentence) and the endpoints
// service over it and st. Run calls it once and shares the result between the worker's
// deliveries, the API and the dashboard; tests that serve api.New without Run call it to
// get the same parts. A CA file that cannot be loaded is an error, never a Sender without
// it: receivers behind that CA would fail on TLS, in deliveries and manual tests alike.
func NewEndpoints(cfg config.Config, st *store.Store) (*webhook.Endpoints, error) {
	sender, err := webhook.NewSender(cfg.WebhookAllowPrivate, cfg.WebhookCAFile, cfg.AckSentence())
	if err != nil {
		return nil, fmt.Errorf("webhook sender: %w", err)
	}
	return &webhook.Endpoints{Store: st, Sender: sender, AllowPrivate: cfg.WebhookAllowPrivate, MaxFilterTests: cfg.FilterTests,
		Pace: webhook.PaceLimits{PerEnvironment: cfg.PacedRatePerEnvironment, Endpoints: cfg.PacedEndpoints}}, nil
}
