package dashboard

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/models"
)

// usageMaxFirings bounds the series over a threshold one Usage page lists (CONTRACT §21):
// past it the page says more are over.
const usageMaxFirings = 200

// alertRow is one usage alert of a meter (CONTRACT §24) with the series over its
// threshold in the current window.
type alertRow struct {
	ID, Threshold, Window, Account, Group, Description string
	Over                                               []overRow
}

// overRow is one series over its alert's threshold in the window that contains now.
type overRow struct {
	AccountID, Group, Value string
	From, Until, Crossed    time.Time // the window, and the figures' as_of that crossed it
}

// meterAlerts reads the alerts of the listed meters and the series over them now
// (meters.Queries.AlertsNow): at most meters.MaxAlerts alerts a meter and
// usageMaxFirings series in all (more: there were others).
func (h *handler) meterAlerts(ctx context.Context, env models.Env, list []models.Meter, now time.Time) (map[string][]alertRow, bool, error) {
	ids := make([]string, len(list))
	groupBy := make(map[string][]string, len(list))
	for i, m := range list {
		ids[i], groupBy[m.ID] = m.ID, m.GroupBy
	}
	alerts, firings, more, err := meters.AlertsNow(ctx, h.store, env, ids, now, usageMaxFirings)
	if err != nil {
		return nil, false, err
	}
	meterOf := map[string]string{}
	for meterID, as := range alerts {
		for _, a := range as {
			meterOf[a.ID] = meterID
		}
	}
	over := map[string][]overRow{}
	for _, f := range firings {
		over[f.AlertID] = append(over[f.AlertID], overRow{AccountID: f.AccountID, Group: firingGroupText(f.Groups, groupBy[meterOf[f.AlertID]]),
			Value: f.Value, From: f.WindowStart, Until: f.WindowEnd, Crossed: f.AsOf})
	}
	out := make(map[string][]alertRow, len(alerts))
	for meterID, as := range alerts {
		for _, a := range as {
			r := alertRow{ID: a.ID, Threshold: a.Threshold, Window: a.Window, Account: a.AccountID, Group: alertGroupText(a.Group),
				Description: a.Description, Over: over[a.ID]}
			sort.SliceStable(r.Over, func(i, j int) bool { return r.Over[i].AccountID < r.Over[j].AccountID })
			out[meterID] = append(out[meterID], r)
		}
	}
	return out, more, nil
}

// alertGroupText shows an alert's group ({"region":"eu"}) as "region=eu", keys in order;
// "" for any group.
// The values are the texts themselves (the template escapes them), not JSON: "<é>", not
// "\u003cé\u003e" as the stored group spells it.
func alertGroupText(group string) string {
	var g map[string]string // the API keeps a group's values as strings (meters.DecodeAlert)
	if json.Unmarshal([]byte(group), &g) != nil {
		return group
	}
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + g[k]
	}
	return strings.Join(parts, ", ")
}

// firingGroupText shows a series' group values (the JSON array of the meter's group_by
// values, null when absent) as "region=eu", an absent value as "(none)"; "" when the
// meter does not group.
func firingGroupText(groups string, groupBy []string) string {
	var vals []*string
	if json.Unmarshal([]byte(groups), &vals) != nil {
		return groups
	}
	parts := make([]string, 0, len(groupBy))
	for i, k := range groupBy {
		v := "(none)"
		if i < len(vals) && vals[i] != nil {
			v = *vals[i]
		}
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ", ")
}
