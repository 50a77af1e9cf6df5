package dashboard

import (
	"context"
	"time"

	"github.com/revops/revops/models"
)

// endpointFiguresOf reads each endpoint's hourly attempt rollups over the chart's days
// (store.EndpointStatHours: one primary-key range of endpoint_stat_rollups an endpoint,
// never the attempts; at most webhook.MaxEndpoints endpoints) and sums them into its
// figures at now.
func (h *handler) endpointFiguresOf(ctx context.Context, env models.Env, eps []models.WebhookEndpoint, now time.Time) (map[string]endpointFigures, error) {
	from := dayAxis(now, chartDays)[0]
	to := now.UTC().Truncate(time.Hour).Add(time.Hour)
	out := make(map[string]endpointFigures, len(eps))
	for _, ep := range eps {
		rows, err := h.store.EndpointStatHours(ctx, env, ep.ID, from, to)
		if err != nil {
			return nil, err
		}
		hours := make([]hourStats, len(rows))
		for i, r := range rows {
			hours[i] = hourStats{Start: r.HourStart, Attempts: r.Attempts, Succeeded: r.Succeeded, Failed: r.Failed,
				Timeouts: r.Timeouts, Buckets: r.Buckets[:]}
		}
		out[ep.ID] = figuresOf(hours, now)
	}
	return out, nil
}
