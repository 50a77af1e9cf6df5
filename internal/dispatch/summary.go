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
func describe(e models.Event, trigger string, dests []models.Destination) (summary, details string) {
	dest := destinations(dests)
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

// endpoints are the destinations of the event's deliveries ds, as their endpoints are
// configured now (nil when the database cannot tell: the run starts anyway, its summary
// says so).
func (s *Starter) endpoints(ctx context.Context, e models.Event, ds []models.WebhookDelivery) []models.Destination {
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
	var out []models.Destination
	for _, d := range ds {
		if ep, ok := byID[d.EndpointID]; ok {
			out = append(out, models.DestinationOf(ep))
		}
	}
	return out
}

func endpointIDs(dests []models.Destination) []string {
	ids := make([]string, len(dests))
	for i, d := range dests {
		ids[i] = d.EndpointID
	}
	return ids
}

// maxDestinations is how many endpoints a summary names before "+N more".
const maxDestinations = 3

// destinations is "host, GET host (disabled), …" of the endpoints.
func destinations(dests []models.Destination) string {
	if len(dests) == 0 {
		return "no endpoint"
	}
	var parts []string
	for i, d := range dests {
		if i == maxDestinations {
			parts = append(parts, fmt.Sprintf("+%d more", len(dests)-i))
			break
		}
		parts = append(parts, destination(d))
	}
	return strings.Join(parts, ", ")
}

// destination is "host", "GET host" or "host (disabled)" of one endpoint.
func destination(ep models.Destination) string {
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
