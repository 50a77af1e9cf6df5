package replaycli

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/revops/revops/internal/apiclient"
)

// event is what the command shows of an event.
type event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	ObjectID  string `json:"object_id"`
	CreatedAt string `json:"created_at"`
}

type job struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Matched  int    `json:"matched"`
	Replayed int    `json:"replayed"`
	Failed   int    `json:"failed"`
}

// bar draws `[#####     ] 50/100` on one terminal line.
func bar(w io.Writer, done, total int) {
	const width = 20
	filled := width
	if total > 0 {
		filled = done * width / total
	}
	fmt.Fprintf(w, "\r[%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), done, total)
}

// replayIDs replays the given events one by one (or, with --dry-run, shows them).
func replayIDs(ctx context.Context, c *apiclient.Client, o options, stdout, stderr io.Writer) error {
	var failures []string
	var body any
	if o.endpoint != "" {
		body = map[string]string{"endpoint_id": o.endpoint}
	}
	replayed := 0
	for i, id := range o.ids {
		var e event
		var err error
		if o.dryRun {
			err = c.Do(ctx, "GET", "/v1/events/"+url.PathEscape(id), nil, &e)
		} else {
			err = c.Do(ctx, "POST", "/v1/events/"+url.PathEscape(id)+"/replay", body, &e)
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", id, err))
		} else if o.dryRun {
			fmt.Fprintf(stdout, "would replay %s  %-16s %-9s %s\n", e.ID, e.Type, e.Status, e.CreatedAt)
		} else {
			replayed++
		}
		if !o.dryRun {
			bar(stderr, i+1, len(o.ids))
		}
	}
	if !o.dryRun {
		fmt.Fprintln(stderr)
		fmt.Fprintf(stdout, "replayed %d of %d event(s)\n", replayed, len(o.ids))
	}
	for _, f := range failures {
		fmt.Fprintln(stderr, "  not replayed:", f)
	}
	if len(failures) > 0 {
		return fmt.Errorf("%d event(s) not replayed", len(failures))
	}
	return nil
}

// listFailed shows, page by page, the events a bulk replay would take.
func listFailed(ctx context.Context, c *apiclient.Client, o options, stdout io.Writer) error {
	q := o.filter(time.Now())
	q.Set("limit", "100")
	n := 0
	for {
		var page struct {
			Data    []event `json:"data"`
			HasMore bool    `json:"has_more"`
		}
		if err := c.Do(ctx, "GET", "/v1/events?"+q.Encode(), nil, &page); err != nil {
			return err
		}
		for _, e := range page.Data {
			fmt.Fprintf(stdout, "would replay %s  %-16s %s  object %s\n", e.ID, e.Type, e.CreatedAt, e.ObjectID)
		}
		n += len(page.Data)
		if !page.HasMore || len(page.Data) == 0 {
			break
		}
		q.Set("starting_after", page.Data[len(page.Data)-1].ID)
	}
	fmt.Fprintf(stdout, "%d failed event(s) would be replayed (dry run: nothing replayed)\n", n)
	return nil
}

// bulk starts a replay job on the server and follows it to the end.
func bulk(ctx context.Context, c *apiclient.Client, o options, stdout, stderr io.Writer) error {
	body := map[string]any{}
	for k, v := range o.filter(time.Now()) {
		body[k] = v[0]
	}
	var j job
	if err := c.Do(ctx, "POST", "/v1/events/replay", body, &j); err != nil {
		return err
	}
	t := time.NewTicker(o.poll)
	defer t.Stop()
	for {
		bar(stderr, j.Replayed+j.Failed, j.Matched)
		if j.Status == "done" {
			break
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr)
			return fmt.Errorf("stopped following replay job %s (it goes on on the server): %w", j.ID, ctx.Err())
		case <-t.C:
		}
		if err := c.Do(ctx, "GET", "/v1/events/replay/"+url.PathEscape(j.ID), nil, &j); err != nil {
			fmt.Fprintln(stderr)
			return err
		}
	}
	fmt.Fprintln(stderr)
	fmt.Fprintf(stdout, "replay job %s: matched %d, replayed %d, not replayed %d\n", j.ID, j.Matched, j.Replayed, j.Failed)
	if j.Failed > 0 {
		return fmt.Errorf("%d event(s) not replayed (a delivery of them was in progress)", j.Failed)
	}
	return nil
}
