package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/internal/platform/webhookfilter"
	"github.com/revops/revops/models"
)

// Endpoint filters of CONTRACT §25: checked here when an endpoint is saved (the API and
// the dashboard both validate through ValidateEndpointFields), evaluated by the store
// when an event's deliveries are created, and tried out by TestFilter.

// checkFilter validates a filter member and returns it as stored: compact JSON, or ""
// (no filter) for null and {}. A fault names the JSON Pointer of its place in the body
// (filter/deal.status/$in/3).
func checkFilter(fs *apperr.Faults, raw json.RawMessage) string {
	text, err := compactFilter(raw)
	if err != nil || text == "" {
		if err != nil {
			addFilterFault(fs, err)
		}
		return ""
	}
	if _, err := webhookfilter.Parse([]byte(text)); err != nil {
		addFilterFault(fs, err)
		return ""
	}
	return text
}

// compactFilter is raw without insignificant white space (the size bound counts what is
// stored), "" for null and {}.
func compactFilter(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", &webhookfilter.Fault{Pointer: "filter", Message: "must be a JSON object"}
	}
	if b.String() == "{}" {
		return "", nil
	}
	return b.String(), nil
}

// addFilterFault records the evaluator's fault on its pointer; any other error of
// Parse is a fault of the filter as a whole.
func addFilterFault(fs *apperr.Faults, err error) {
	var f *webhookfilter.Fault
	if errors.As(err, &f) {
		fs.Invalid(f.Pointer, "%s %s.", f.Pointer, f.Message)
		return
	}
	fs.Invalid("filter", "filter is not valid: %v", err)
}

// FilterTestInput is a body of POST /v1/webhook_endpoints/filter_test: a filter, and
// either a payload or the id of one of the environment's events.
type FilterTestInput struct {
	Filter  *json.RawMessage
	Payload *json.RawMessage
	EventID *string
}

// EventReader reads one of the environment's events (filter tests on stored events).
type EventReader interface {
	Event(ctx context.Context, env models.Env, id string) (models.Event, error)
}

// TestFilter is POST /v1/webhook_endpoints/filter_test (TestFilter's rule).
func (e *Endpoints) TestFilter(ctx context.Context, env models.Env, in FilterTestInput) (bool, error) {
	return TestFilter(ctx, e.Store, env, in)
}

// TestFilter tells whether in's filter takes in's payload, or the payload of the event it
// names (as it was delivered). Nothing is stored; a filter that could not be saved is
// refused with the same fault as the save would give. A filter of {} takes everything.
func TestFilter(ctx context.Context, events EventReader, env models.Env, in FilterTestInput) (bool, error) {
	var fs apperr.Faults
	var f *webhookfilter.Filter
	if in.Filter == nil || string(bytes.TrimSpace(*in.Filter)) == "null" {
		fs.Missing("filter")
	} else if text, err := compactFilter(*in.Filter); err != nil {
		addFilterFault(&fs, err)
	} else if text != "" {
		if f, err = webhookfilter.Parse([]byte(text)); err != nil {
			addFilterFault(&fs, err)
		}
	}
	hasPayload := in.Payload != nil && string(bytes.TrimSpace(*in.Payload)) != "null"
	switch {
	case hasPayload && in.EventID != nil:
		fs.Invalid("event_id", "Give either payload or event_id, not both.")
	case !hasPayload && in.EventID == nil:
		fs.Missing("payload")
	case in.EventID != nil && textcheck.LineOK(&fs, "event_id", *in.EventID) && !textcheck.IsID(*in.EventID):
		fs.Invalid("event_id", "event_id %q is not an event id.", *in.EventID)
	}
	if err := fs.Err(); err != nil {
		return false, err
	}
	var payload []byte
	if hasPayload {
		payload = *in.Payload
	} else {
		ev, err := events.Event(ctx, env, *in.EventID)
		if errors.Is(err, apperr.ErrNotFound) {
			return false, apperr.Faults{{Param: "event_id", Code: apperr.CodeParameterInvalid,
				Message: "event_id " + *in.EventID + " is not an event of this environment."}}.Err()
		}
		if err != nil {
			return false, err
		}
		payload = []byte(ev.Payload)
	}
	if f == nil {
		return true, nil
	}
	return matchPayload(f, payload)
}

// matchPayload evaluates f on payload (the body decoded it already: it is JSON).
func matchPayload(f *webhookfilter.Filter, payload []byte) (bool, error) {
	ok, err := f.Match(payload)
	if err != nil {
		return false, apperr.Faults{{Param: "payload", Code: apperr.CodeParameterInvalid, Message: "payload must be a JSON value."}}.Err()
	}
	return ok, nil
}
