package webhook

import (
	"context"
	"log/slog"
	"sync"

	"github.com/revops/revops/internal/platform/webhookfilter"
	"github.com/revops/revops/models"
)

// fanoutFilters are the filters of the endpoints one change fans out to, each parsed once
// for all the change's events (nil: the endpoint has none), and the Reader that decodes
// an event's payload once for all of them (building only what they read).
type fanoutFilters struct {
	of     []*webhookfilter.Filter
	reader *webhookfilter.Reader
}

// parse parses the filter of each endpoint of eps. The API validated every one when it
// was saved, so a parse failure is a stored filter this release does not read: it must
// not block the change, so the endpoint takes every event (nil), and the fault is logged
// (its pointer and message only: never a payload).
func (f *FanOut) parse(ctx context.Context, eps []models.WebhookEndpoint) fanoutFilters {
	out := make([]*webhookfilter.Filter, len(eps))
	for i, ep := range eps {
		if ep.Filter == "" {
			continue
		}
		parsed, err := f.filters.parse(ep.Filter)
		if err != nil {
			slog.WarnContext(ctx, "webhook endpoint filter unreadable; the endpoint takes every event",
				"endpoint_id", ep.ID, "error", err)
			continue
		}
		out[i] = parsed
	}
	return fanoutFilters{of: out, reader: webhookfilter.NewReader(out...)}
}

// doc is an event's payload, to be decoded at most once for all the change's filters.
func (fs fanoutFilters) doc(payload string) eventDoc {
	return eventDoc{payload: payload, reader: fs.reader}
}

// maxParsedFilters bounds a fan-out's cache: when full it starts again empty
// (maxParsedFilters filters of at most 4 KiB of text each).
const maxParsedFilters = 512

// filterCache keeps the filters a fan-out parsed, by their text: every change of an
// environment reads the same stored filters, and parsing one (≈ 90 µs for 4 KiB) costs
// far more than evaluating it (≈ 2 µs), inside the change's transaction. A parsed
// filter is immutable and depends on its text alone.
type filterCache struct {
	mu     sync.Mutex
	byText map[string]*webhookfilter.Filter
}

func (c *filterCache) parse(text string) (*webhookfilter.Filter, error) {
	c.mu.Lock()
	f, ok := c.byText[text]
	c.mu.Unlock()
	if ok {
		return f, nil
	}
	f, err := webhookfilter.Parse([]byte(text))
	if err != nil {
		return nil, err // not kept: a fault is logged each time, as rare as it is
	}
	c.mu.Lock()
	if len(c.byText) >= maxParsedFilters {
		clear(c.byText)
	}
	c.byText[text] = f
	c.mu.Unlock()
	return f, nil
}

// eventDoc is an event's payload decoded at most once, for all the filters that read it.
type eventDoc struct {
	payload string
	reader  *webhookfilter.Reader
	doc     webhookfilter.Doc
	decoded bool
	failed  bool
}

// matches tells whether filter f (nil: none) takes the event whose payload d holds. A
// payload the evaluator cannot read (the change wrote it: it cannot happen) or an
// evaluation past its step bound (Parse refuses every filter that could get there) lets
// the event through to every endpoint, logged without the payload: a filter never blocks
// a change.
func (d *eventDoc) matches(ctx context.Context, f *webhookfilter.Filter) bool {
	if f == nil || d.failed {
		return true
	}
	if !d.decoded {
		doc, err := d.reader.Decode([]byte(d.payload))
		if err != nil {
			d.failed = true
			slog.WarnContext(ctx, "event payload unreadable by webhook filters; every endpoint takes it", "error", err)
			return true
		}
		d.doc, d.decoded = doc, true
	}
	ok, err := f.MatchDoc(d.doc)
	if err != nil {
		slog.WarnContext(ctx, "webhook endpoint filter not evaluated; the endpoint takes the event", "error", err)
		return true
	}
	return ok
}
