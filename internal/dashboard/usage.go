package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/revops/revops/internal/domain/meters"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// usageMaxRows bounds the daily figures one meter's chart reads (30 days × every group
// of every account), so that a meter with many groups does not make a page load read
// without end. A chart cut there says it is partial.
const usageMaxRows = 20000

// meterCard is one meter on the Usage page.
type meterCard struct {
	Key, Description, Aggregation, Filter, ValueKey string
	GroupBy                                         []string
	Status                                          string
	Backfilling                                     bool
	AsOfText, AsOfISO                               string // the values' as_of, to the second
	Partial                                         bool   // usageMaxRows figures were read and more remained
	Empty                                           bool   // no figure in the 30 days
	Chart                                           usageChart
	Alerts                                          []alertRow // CONTRACT §24
}

type usageData struct {
	Meters      []meterCard
	Days        int
	From, Until string // the days shown, "2026-10-26" … "2026-11-24"
	MaxMeters   int
	MaxRows     string // usageMaxRows, written for people
	OverMore    bool   // more than usageMaxFirings series are over a threshold: not all are listed
	MaxFirings  int
}

// usagePage lists the environment's meters, each with its last 30 days by day (UTC):
// the top five groups and the rest, read from the kept figures (CONTRACT §18).
func (h *handler) usagePage(c *gin.Context) {
	ctx := c.Request.Context()
	env, err := h.env(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	list, err := h.allMeters(ctx, env)
	if err != nil {
		h.fail(c, err)
		return
	}
	now := h.now().UTC()
	days := dayAxis(now, usageChartDays)
	d := usageData{Days: usageChartDays, From: days[0].Format("2006-01-02"), Until: days[len(days)-1].Format("2006-01-02"), MaxMeters: meters.MaxMeters,
		MaxRows: groupDigits(strconv.Itoa(usageMaxRows))}
	alerts, overMore, err := h.meterAlerts(ctx, env, list, now)
	if err != nil {
		h.fail(c, err)
		return
	}
	d.OverMore, d.MaxFirings = overMore, usageMaxFirings
	for _, m := range list {
		card := toMeterCard(m)
		card.Alerts = alerts[m.ID]
		rows, asOf, partial, err := h.meterDays(ctx, env, m, days, now, usageMaxRows)
		if errors.Is(err, apperr.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			h.fail(c, err)
			return
		}
		series, bad := buildSeries(rows, m.Aggregation, m.GroupBy, days)
		if bad > 0 {
			// Values answers only the windows asked for, as exact decimals: anything else
			// is a fault to look into, not a reason to hide the page.
			h.log.Error("usage page: figures left out of a chart", "meter", m.Key, "count", bad)
		}
		card.AsOfText, card.AsOfISO = asOf.UTC().Format("2006-01-02 15:04:05 UTC"), asOf.UTC().Format(time.RFC3339)
		card.Partial, card.Empty = partial, len(series) == 0
		card.Chart = drawUsage(series, days, m.Aggregation)
		d.Meters = append(d.Meters, card)
	}
	h.render(c, http.StatusOK, "usage", view{Title: "Usage", Nav: "usage", Data: d})
}

// allMeters reads every meter of env (at most meters.MaxMeters, so one page, but a
// bound is not a reason to drop one).
func (h *handler) allMeters(ctx context.Context, env models.Env) ([]models.Meter, error) {
	var out []models.Meter
	page := store.Page{Limit: meters.MaxMeters}
	for {
		ms, more, err := meters.List(ctx, h.store, env, page)
		if err != nil || !more || len(ms) == 0 {
			return append(out, ms...), err
		}
		out = append(out, ms...)
		page.StartingAfter = ms[len(ms)-1].ID
	}
}

// meterDays reads m's daily figures over days with every group_by key, page by page, up to
// maxRows; partial says more remained. asOf is the oldest page's: the chart is only as
// current as that.
func (h *handler) meterDays(ctx context.Context, env models.Env, m models.Meter, days []time.Time, now time.Time, maxRows int) (rows []meters.Value, asOf time.Time, partial bool, err error) {
	q := meters.ValuesQuery{From: days[0], To: days[len(days)-1].AddDate(0, 0, 1), Window: meters.WindowDay,
		GroupBy: m.GroupBy, Limit: min(meters.MaxLimit, maxRows)}
	for {
		p, err := h.meters.Values(ctx, env, m.Key, q, now)
		if err != nil {
			return nil, time.Time{}, false, err
		}
		if asOf.IsZero() || p.AsOf.Before(asOf) {
			asOf = p.AsOf
		}
		rows = append(rows, p.Data...)
		if p.NextPage == "" {
			return rows, asOf, false, nil
		}
		if len(rows) >= maxRows {
			return rows, asOf, true, nil
		}
		q.Page = p.NextPage
	}
}

func toMeterCard(m models.Meter) meterCard {
	filter := "metric_name=" + m.FilterMetricName
	if m.FilterProduct != "" {
		filter += ", product=" + m.FilterProduct
	} else {
		filter += ", any product"
	}
	return meterCard{Key: m.Key, Description: m.Description, Aggregation: m.Aggregation, Filter: filter,
		ValueKey: m.ValueKey, GroupBy: m.GroupBy, Status: m.Status, Backfilling: m.Status == models.MeterBackfilling}
}
