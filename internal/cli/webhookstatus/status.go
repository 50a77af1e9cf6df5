// Package webhookstatus is `revops webhooks status`: every webhook endpoint of the
// environment with its health (CONTRACT §23) in one table, read through the API with a
// secret key.
package webhookstatus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
	"github.com/revops/revops/internal/platform/textcheck"
)

const usage = "usage: revops webhooks status [--env sandbox|live] [--latency=false]"

// options are the command's flags.
type options struct {
	cliapi.Target
	latency bool
}

// Run runs `revops webhooks status` with args (what follows "status"): the table goes
// to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, c, err := setUp(args, stderr)
	if err != nil {
		return err
	}
	rows, err := Read(ctx, c, time.Now(), o.latency)
	if err != nil {
		return err
	}
	return Print(stdout, rows)
}

// setUp parses args and connects to the target.
func setUp(args []string, stderr io.Writer) (options, *revops.Client, error) {
	var o options
	fs := o.Flags("revops webhooks status", usage, stderr)
	fs.BoolVar(&o.latency, "latency", true, "read each endpoint's stats for the p95 column (one request per endpoint)")
	if err := fs.Parse(args); err != nil {
		return o, nil, err
	}
	if fs.NArg() > 0 {
		return o, nil, fmt.Errorf("unexpected argument %q\n%s", fs.Arg(0), usage)
	}
	c, err := o.Connect()
	return o, c, err
}

// Health is the endpoint's health as the table shows it (CONTRACT §23).
type Health struct {
	Status         string // healthy, failing, disabled or idle
	SuccessRate24h *float64
	LastSuccessAt  *time.Time
	FailingSince   *time.Time
}

// Row is one endpoint as the table shows it.
type Row struct {
	ID, Description string
	Host            string // the URL's host only: paths and queries may hold tokens (§13)
	Enabled         bool
	DisabledReason  string
	Ordering        string  // none or object (CONTRACT §26); "" shows "—"
	Health          *Health // nil: the API sent none
	// Pace is the endpoint's rate_limit as "5/1s" (CONTRACT §27); "" when unpaced.
	Pace string
	// P95 is the highest hourly p95 of the last 24 hours (an upper bound of the day's,
	// the hourly ones being bucket upper bounds already); nil: no attempt, or not read.
	P95 *time.Duration
}

// maxEndpoints bounds the listing: far above what an environment may have (16).
const maxEndpoints = 1000

// Read lists every endpoint of the key's environment with its health and, with latency,
// its p95 of the last 24 hours before now.
func Read(ctx context.Context, c *revops.Client, now time.Time, latency bool) ([]Row, error) {
	var rows []Row
	for ep, err := range c.ListWebhookEndpointsAll(ctx, &revops.ListWebhookEndpointsParams{Limit: 100}) {
		if err != nil {
			return nil, fmt.Errorf("list webhook endpoints: %w", cliapi.Err(err))
		}
		r := toRow(ep)
		if latency {
			p95, err := p95Of(ctx, c, ep.ID, now)
			if err != nil {
				return nil, err
			}
			r.P95 = p95
		}
		if rows = append(rows, r); len(rows) == maxEndpoints {
			break
		}
	}
	return rows, nil
}

func toRow(ep *revops.Endpoint) Row {
	r := Row{ID: ep.ID, Description: cliapi.Value(ep.Description), Enabled: ep.Enabled,
		DisabledReason: string(cliapi.Value(ep.DisabledReason)), Ordering: string(ep.Ordering),
		Health: &Health{Status: string(ep.Health.Status), SuccessRate24h: ep.Health.SuccessRate24h,
			LastSuccessAt: ep.Health.LastSuccessAt, FailingSince: ep.Health.FailingSince}}
	if u, err := url.Parse(ep.URL); err == nil {
		r.Host = u.Host
	}
	if rl := ep.RateLimit; rl != nil {
		r.Pace = fmt.Sprintf("%d/%s", rl.Limit, rl.Period)
	}
	return r
}

// p95Of reads the endpoint's hourly stats of the 24 whole hours up to the next hour
// boundary after now (GET /v1/webhook_endpoints/{id}/stats) and returns the highest p95.
// An endpoint deleted meanwhile leaves the column empty.
func p95Of(ctx context.Context, c *revops.Client, id string, now time.Time) (*time.Duration, error) {
	to := now.UTC().Truncate(time.Hour).Add(time.Hour)
	stats, err := c.GetWebhookEndpointStats(ctx, id, &revops.GetWebhookEndpointStatsParams{
		From: to.Add(-24 * time.Hour), To: to, Window: revops.EndpointStatsWindowHour})
	var apiErr *revops.Error
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stats of webhook endpoint %s: %w", id, cliapi.Err(err))
	}
	var worst *time.Duration
	for _, w := range stats.Data {
		if w.Attempts == 0 {
			continue
		}
		if d := time.Duration(w.DurationMSP95) * time.Millisecond; worst == nil || d > *worst {
			worst = &d
		}
	}
	return worst, nil
}

// Print writes the table: one line per endpoint, "—" where there is nothing to show.
func Print(w io.Writer, rows []Row) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "No webhook endpoint in this environment.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tDESCRIPTION\tHOST\tENABLED\tORDERING\tPACE\tHEALTH\tSUCCESS 24H\tLAST SUCCESS\tFAILING SINCE\tP95 24H")
	for _, r := range rows {
		enabled := "yes"
		if !r.Enabled {
			enabled = "no"
			if r.DisabledReason != "" {
				enabled += " (" + r.DisabledReason + ")"
			}
		}
		health, rate, last, failing := "—", "—", "—", "—"
		if h := r.Health; h != nil {
			health = textcheck.Printable(h.Status, 12)
			if h.SuccessRate24h != nil {
				rate = percent(*h.SuccessRate24h)
			}
			last, failing = when(h.LastSuccessAt), when(h.FailingSince)
		}
		p95 := "—"
		if r.P95 != nil {
			p95 = r.P95.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, orDash(textcheck.Printable(r.Description, 40)),
			orDash(textcheck.Printable(r.Host, 60)), enabled, orDash(textcheck.Printable(r.Ordering, 12)), orDash(textcheck.Printable(r.Pace, 12)), health, rate, last, failing, p95)
	}
	return tw.Flush()
}

// percent shows a success rate as the dashboard does, floored to a tenth of a percent:
// 9,999 successes of 10,000 read 99.9 %, never 100 % while an attempt failed. The
// epsilon keeps a float's representation error (0.29×1000 = 289.99…) from losing a tenth.
func percent(r float64) string {
	return strconv.FormatFloat(math.Floor(r*1000+1e-9)/10, 'f', 1, 64) + "%"
}

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
