// Package replaycli is `revops webhooks replay`: it replays webhook events through the
// Revops API with a secret key, one by one by id or in bulk by filter, showing progress.
package replaycli

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"time"

	revops "github.com/revops/revops/clients/go"
	"github.com/revops/revops/internal/cli/cliapi"
)

// options are the command's flags.
type options struct {
	cliapi.Target
	typ            string
	endpoint       string // one endpoint's deliveries only
	failed, dryRun bool
	since, poll    time.Duration
	ids            []string
}

const usage = `usage: revops webhooks replay [--endpoint ID] ID…
       revops webhooks replay --failed [--since 24h] [--type T] [--endpoint ID] [--env sandbox|live] [--dry-run]`

// Run runs `revops webhooks replay` with args (what follows "replay"): progress goes
// to stderr, listings and the summary to stdout.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, c, err := setUp(args, stderr)
	if err != nil {
		return err
	}
	switch {
	case o.failed && o.dryRun:
		return listFailed(ctx, c, o, stdout)
	case o.failed:
		return bulk(ctx, c, o, stdout, stderr)
	default:
		return replayIDs(ctx, c, o, stdout, stderr)
	}
}

// setUp parses args and connects to the target.
func setUp(args []string, stderr io.Writer) (options, *revops.Client, error) {
	var o options
	fs := o.Flags("revops webhooks replay", usage, stderr)
	fs.BoolVar(&o.failed, "failed", false, "replay every failed event (with --since, --type)")
	fs.DurationVar(&o.since, "since", 0, "only events created within this duration (e.g. 24h; 0: any time)")
	fs.StringVar(&o.typ, "type", "", "only events of this type (e.g. deal-signed)")
	fs.StringVar(&o.endpoint, "endpoint", "", "only the deliveries to this webhook endpoint (its id)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "list what would be replayed, replay nothing")
	fs.DurationVar(&o.poll, "poll", 500*time.Millisecond, "how often a bulk job's progress is read")
	ids, err := parseInterleaved(fs, args)
	if err != nil {
		return o, nil, err
	}
	o.ids = ids
	if err := o.check(); err != nil {
		return o, nil, err
	}
	c, err := o.Connect()
	return o, c, err
}

func (o options) check() error {
	if err := o.Check(); err != nil {
		return err
	}
	switch {
	case o.failed && len(o.ids) > 0:
		return errors.New("give event ids or --failed, not both\n" + usage)
	case !o.failed && len(o.ids) == 0:
		return errors.New("no event to replay\n" + usage)
	case !o.failed && (o.since != 0 || o.typ != ""):
		return errors.New("--since and --type go with --failed")
	case o.since < 0:
		return errors.New("--since must be positive")
	case o.poll <= 0:
		return errors.New("--poll must be positive")
	}
	return nil
}

// parseInterleaved parses flags placed before, between or after the ids.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var ids []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		for len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			ids, args = append(ids, args[0]), args[1:]
		}
		if len(args) == 0 {
			return ids, nil
		}
	}
}

// filter is the bulk filter of --failed, --since, --type and --endpoint (with
// --endpoint, status is that endpoint's delivery's); --since counts whole seconds back
// from now.
func (o options) filter(now time.Time) *revops.EventReplayFilter {
	f := &revops.EventReplayFilter{Status: revops.Ptr(revops.EventStatusFailed)}
	if o.typ != "" {
		f.Type = revops.Ptr(revops.EventType(o.typ))
	}
	if o.endpoint != "" {
		f.EndpointID = revops.String(o.endpoint)
	}
	if o.since > 0 {
		f.CreatedAfter = revops.Value(now.Add(-o.since).UTC().Truncate(time.Second))
	}
	return f
}
