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
// tells at a glance what a run delivers and where. Hosts only: a URL's path, query and
// user information may carry tokens, and no secret ever enters Temporal.
func describe(e models.Event, trigger string, eps []models.WebhookEndpoint) (summary, details string) {
	dest := destinations(eps)
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

// endpoints are the endpoints of the event's deliveries ds, as configured now (nil when
// the database cannot tell: the run starts anyway, its summary says so).
func (s *Starter) endpoints(ctx context.Context, e models.Event, ds []models.WebhookDelivery) []models.WebhookEndpoint {
	if len(ds) == 0 {
		return nil
	}
	env := store.EnvOf(e)
	all, err := s.Store.AllWebhookEndpoints(ctx, env)
	if err != nil {
		return nil
	}
	byID := make(map[string]models.WebhookEndpoint, len(all))
	for _, ep := range all {
		byID[ep.ID] = ep
	}
	var out []models.WebhookEndpoint
	for _, d := range ds {
		if ep, ok := byID[d.EndpointID]; ok {
			out = append(out, ep)
		}
	}
	return out
}

func endpointIDs(eps []models.WebhookEndpoint) []string {
	ids := make([]string, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	return ids
}

// maxDestinations is how many endpoints a summary names before "+N more".
const maxDestinations = 3

// destinations is "host, GET host (disabled), …" of the endpoints.
func destinations(eps []models.WebhookEndpoint) string {
	if len(eps) == 0 {
		return "no endpoint"
	}
	var parts []string
	for i, ep := range eps {
		if i == maxDestinations {
			parts = append(parts, fmt.Sprintf("+%d more", len(eps)-i))
			break
		}
		parts = append(parts, destination(ep))
	}
	return strings.Join(parts, ", ")
}

// destination is "host", "GET host" or "host (disabled)" of one endpoint.
func destination(ep models.WebhookEndpoint) string {
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
