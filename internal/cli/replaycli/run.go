package replaycli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
)

// bar draws `[#####     ] 50/100` on one terminal line.
func bar(w io.Writer, done, total int64) {
	const width = 20
	filled := int64(width)
	if total > 0 {
		filled = done * width / total
	}
	fmt.Fprintf(w, "\r[%s%s] %d/%d", strings.Repeat("#", int(filled)), strings.Repeat(" ", width-int(filled)), done, total)
}

// created is how an event's creation time is shown: as the API gives it.
func created(e *revops.Event) string { return e.CreatedAt.UTC().Format(time.RFC3339Nano) }

// replayIDs replays the given events one by one (or, with --dry-run, shows them).
func replayIDs(ctx context.Context, c *revops.Client, o options, stdout, stderr io.Writer) error {
	var failures []string
	var body *revops.EventReplayOne
	if o.endpoint != "" {
		body = &revops.EventReplayOne{EndpointID: revops.String(o.endpoint)}
	}
	replayed := 0
	for i, id := range o.ids {
		var e *revops.Event
		var err error
		if o.dryRun {
			e, err = c.GetEvent(ctx, id)
		} else {
			e, err = c.ReplayEvent(ctx, id, body)
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", id, cliapi.Err(err)))
		} else if o.dryRun {
			fmt.Fprintf(stdout, "would replay %s  %-16s %-9s %s\n", e.ID, e.Type, e.Status, created(e))
		} else {
			replayed++
		}
		if !o.dryRun {
			bar(stderr, int64(i+1), int64(len(o.ids)))
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
func listFailed(ctx context.Context, c *revops.Client, o options, stdout io.Writer) error {
	f := o.filter(time.Now())
	params := &revops.ListEventsParams{Limit: 100, Status: *f.Status, EndpointID: cliapi.Value(f.EndpointID), Type: cliapi.Value(f.Type)}
	if after, ok := f.CreatedAfter.Get(); ok {
		params.CreatedAfter = after
	}
	n := 0
	for e, err := range c.ListEventsAll(ctx, params) {
		if err != nil {
			return cliapi.Err(err)
		}
		fmt.Fprintf(stdout, "would replay %s  %-16s %s  object %s\n", e.ID, e.Type, created(e), e.ObjectID)
		n++
	}
	fmt.Fprintf(stdout, "%d failed event(s) would be replayed (dry run: nothing replayed)\n", n)
	return nil
}

// bulk starts a replay job on the server and follows it to the end.
func bulk(ctx context.Context, c *revops.Client, o options, stdout, stderr io.Writer) error {
	j, err := c.ReplayEvents(ctx, o.filter(time.Now()))
	if err != nil {
		return cliapi.Err(err)
	}
	t := time.NewTicker(o.poll)
	defer t.Stop()
	for {
		bar(stderr, j.Replayed+j.Failed, j.Matched)
		if j.Status == revops.ReplayJobStatusDone {
			break
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr)
			return fmt.Errorf("stopped following replay job %s (it goes on on the server): %w", j.ID, ctx.Err())
		case <-t.C:
		}
		if j, err = c.GetReplayJob(ctx, j.ID); err != nil {
			fmt.Fprintln(stderr)
			return cliapi.Err(err)
		}
	}
	fmt.Fprintln(stderr)
	fmt.Fprintf(stdout, "replay job %s: matched %d, replayed %d, not replayed %d\n", j.ID, j.Matched, j.Replayed, j.Failed)
	if j.Failed > 0 {
		// A bulk job replays each matched delivery to its own endpoint, so a delivery
		// whose endpoint is gone (a stopped `revops listen`'s) cannot go again; a replay
		// by event id reaches the endpoints subscribed now.
		return fmt.Errorf("%d delivery(ies) not replayed: still in progress, or the endpoint was deleted "+
			"(`revops webhooks replay ID…` sends an event to the endpoints subscribed now)", j.Failed)
	}
	return nil
}
