package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/internal/platform/webhookfilter"
	"github.com/revops/revops/models"
)

// Endpoint filters of CONTRACT §25: checked here when an endpoint is saved (the API and
// the dashboard both validate through ValidateEndpointFields), evaluated by the store
// when an event's deliveries are created, and tried out by Endpoints.TestFilter.

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

// TestFilter tells whether in's filter takes in's payload, or the payload of the event it
// names (as it was delivered). Nothing is stored; a filter that could not be saved is
// refused with the same fault as the save would give, and a payload is held to §15's
// number rule as any body. A filter of {} takes everything. At most MaxFilterTests tests
// of an environment run at once in this process (CONTRACT §21: what a test payload costs
// is tenant work); the gate is taken after the checks that need no decoding, so that a
// bad test is a 400 rather than a 429 (a payload naming a member twice where the filter
// reads it is found while decoding, within the gate).
func (e *Endpoints) TestFilter(ctx context.Context, env models.Env, in FilterTestInput) (bool, error) {
	f, err := checkFilterTest(in)
	if err != nil {
		return false, err
	}
	leave, err := e.filterTests.Enter(ctx, env.ID, e.MaxFilterTests, "filter tests")
	if err != nil {
		return false, err
	}
	defer leave()
	if in.EventID == nil {
		return matchPayload(f, *in.Payload)
	}
	ev, err := e.Store.Event(ctx, env, *in.EventID)
	if errors.Is(err, apperr.ErrNotFound) {
		return false, apperr.Faults{{Param: "event_id", Code: apperr.CodeParameterInvalid,
			Message: "event_id " + *in.EventID + " is not an event of this environment."}}.Err()
	}
	if err != nil {
		return false, err
	}
	return matchEvent(ctx, f, ev.Payload), nil
}

// checkFilterTest validates a filter test's members and returns its filter (nil: {}).
func checkFilterTest(in FilterTestInput) (*webhookfilter.Filter, error) {
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
	case hasPayload:
		checkPayloadNumbers(&fs, *in.Payload)
	case textcheck.LineOK(&fs, "event_id", *in.EventID) && !textcheck.IsID(*in.EventID):
		fs.Invalid("event_id", "event_id %q is not an event id.", *in.EventID)
	}
	return f, fs.Err()
}

// checkPayloadNumbers applies §15's number rule to a test payload, as to any free JSON a
// client sends: before anything is built from it, in one pass over its bytes (a number of
// a million digits costs its bytes once, and is refused).
func checkPayloadNumbers(fs *apperr.Faults, payload []byte) {
	nf := jsonnum.FirstFault(payload)
	if nf == nil {
		return
	}
	param := nf.Param("payload")
	if nf.Len == 0 {
		fs.Add(param, jsonnum.Code, "%s must be a finite number of at most %d characters written out; its exponent has more than %d digits.",
			param, jsonnum.MaxText, jsonnum.MaxExponentDigits)
		return
	}
	fs.Add(param, jsonnum.Code, "%s must be a finite number of at most %d characters written out in plain decimal (it has %d).",
		param, jsonnum.MaxText, nf.Len)
}

// matchPayload evaluates f (nil: {}) on a client's payload (the body decoded it already:
// it is JSON).
func matchPayload(f *webhookfilter.Filter, payload []byte) (bool, error) {
	ok, err := f.Match(payload)
	switch {
	case errors.Is(err, webhookfilter.ErrTooCostly): // cannot happen: Parse refuses such filters
		return false, apperr.Faults{{Param: "filter", Code: apperr.CodeParameterInvalid, Message: "filter " + err.Error() + "."}}.Err()
	case err != nil:
		return false, apperr.Faults{{Param: "payload", Code: apperr.CodeParameterInvalid, Message: err.Error() + "."}}.Err()
	}
	return ok, nil
}

// matchEvent evaluates f (nil: {}) on a stored event's payload as the fan-out did (the
// fan-out's eventDoc): a payload the evaluator cannot read, or an evaluation past its
// bound, lets the event through.
func matchEvent(ctx context.Context, f *webhookfilter.Filter, payload string) bool {
	ok, err := f.Match([]byte(payload))
	if err != nil {
		slog.WarnContext(ctx, "filter test on a stored event not evaluated; the endpoint would take it", "error", err)
		return true
	}
	return ok
}
