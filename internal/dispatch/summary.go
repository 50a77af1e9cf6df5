package dispatch

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// describe returns the StaticSummary and StaticDetails of a run, so that the Temporal UI
// tells at a glance what a run delivers and where. Host only: the URL's path, query and
// user information may carry tokens, and no secret ever enters Temporal.
func (s *Starter) describe(ctx context.Context, e models.Event, trigger string) (summary, details string) {
	dest := s.destination(ctx, e)
	summary = fmt.Sprintf("%s · %s %s → %s", e.Type, e.ObjectType, short(e.ObjectID), dest)
	if trigger == models.TriggerManual {
		summary += " (replay)"
	}
	details = strings.Join([]string{
		fmt.Sprintf("**Event** `%s` (%s)", e.ID, e.Type),
		fmt.Sprintf("**Object** %s `%s`", e.ObjectType, e.ObjectID),
		fmt.Sprintf("**Environment** %s · organization `%s`", e.Environment, e.OrganizationID),
		"**Destination** " + dest,
		"**Trigger** " + trigger,
	}, "\n")
	return summary, details
}

// destination is "POST host" of the environment's endpoint as configured now.
func (s *Starter) destination(ctx context.Context, e models.Event) string {
	ep, err := s.Store.WebhookEndpoint(ctx, store.EnvOf(e))
	if err != nil {
		return "no endpoint"
	}
	u, err := url.Parse(ep.URL)
	if err != nil || u.Host == "" {
		return "invalid endpoint"
	}
	dest := u.Host
	if ep.Method != "" && ep.Method != "POST" {
		dest = ep.Method + " " + dest
	}
	if !ep.Enabled {
		dest += " (disabled)"
	}
	return dest
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
