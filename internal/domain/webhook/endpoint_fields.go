package webhook

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/models"
)

// An endpoint's fields as a request or the dashboard's form gives them, checked against
// the rules of CONTRACT §8, §13 and §25 into the patch a write applies.

// RetryPolicyInput is a retry_policy member; nil fields keep the base policy's value.
type RetryPolicyInput struct {
	InitialInterval    *string  `json:"initial_interval"`
	BackoffCoefficient *float64 `json:"backoff_coefficient"`
	MaximumInterval    *string  `json:"maximum_interval"`
	MaximumAttempts    *int     `json:"maximum_attempts"`
}

// EndpointFields is a POST or PATCH body of /v1/webhook_endpoints; nil fields were absent.
type EndpointFields struct {
	URL         *string
	Method      *string
	Description *string
	EventTypes  *[]string
	Enabled     *bool
	RetryPolicy *RetryPolicyInput
	Signing     *string // hmac-sha256 or ed25519 (CONTRACT §25)
	Ordering    *string // none or object (CONTRACT §26)
	// Filter is the filter member as sent (CONTRACT §25): null or {} removes the filter.
	Filter *json.RawMessage
	// Headers are the custom headers to set (a null value removes one; null as a whole
	// removes them all) (CONTRACT §25).
	Headers bodyfields.Field[map[string]HeaderValue]
	// RateLimit is the rate_limit member as sent (CONTRACT §27): null unpaces.
	RateLimit *json.RawMessage
}

// ValidateEndpointFields checks a body and returns it as a patch; create requires url and
// fills the defaults (POST, enabled, ["*"], the default policy). base is the policy a
// partial retry_policy completes: the endpoint's own for a PATCH. savedURL is the
// endpoint's URL as saved ("" for a new one): sent again unchanged, it is not judged as
// a new URL would be (credentials.go).
func ValidateEndpointFields(in EndpointFields, create bool, base models.RetryPolicy, savedURL string) (EndpointPatch, error) {
	var fs apperr.Faults
	var p EndpointPatch
	if in.URL != nil || create {
		if u, ok := checkURL(&fs, in.URL, savedURL); ok {
			p.URL = &u
		}
	}
	if in.Method != nil && checkMethod(&fs, *in.Method) {
		p.Method = in.Method
	}
	if d := in.Description; d != nil {
		if textcheck.TextOK(&fs, "description", *d) && utf8.RuneCountInString(*d) > MaxDescriptionLength {
			fs.Invalid("description", "description must be at most %d characters.", MaxDescriptionLength)
		}
		p.Description = d
	}
	if in.EventTypes != nil {
		p.EventTypes = checkEventTypes(&fs, *in.EventTypes)
	}
	p.Enabled = in.Enabled
	if in.RetryPolicy != nil {
		r := checkRetryPolicy(&fs, *in.RetryPolicy, base)
		p.RetryPolicy = &r
	}
	if in.Signing != nil && checkSigning(&fs, *in.Signing) {
		p.Signing = in.Signing
	}
	if in.Ordering != nil && checkOrdering(&fs, *in.Ordering) {
		p.Ordering = in.Ordering
	}
	if in.Filter != nil {
		f := checkFilter(&fs, *in.Filter)
		p.Filter = &f
	}
	if in.Headers.Set {
		c := HeaderChanges{Clear: true}
		if !in.Headers.Null {
			c = checkHeaders(&fs, in.Headers.Value)
		}
		p.Headers = &c
	}
	if in.RateLimit != nil {
		pace := checkRateLimit(&fs, *in.RateLimit)
		p.Pace = &pace
	}
	if create {
		if p.Method == nil {
			post := http.MethodPost
			p.Method = &post
		}
		if p.EventTypes == nil {
			p.EventTypes = []string{catalog.Wildcard}
		}
		if p.Enabled == nil {
			on := true
			p.Enabled = &on
		}
		if p.RetryPolicy == nil {
			p.RetryPolicy = &base
		}
		if p.Signing == nil {
			hmac := signing.SchemeHMAC
			p.Signing = &hmac
		}
		if p.Headers != nil && len(fs) == 0 {
			if _, err := mergeHeaders(nil, *p.Headers); err != nil {
				return p, err
			}
		}
	}
	return p, fs.Err()
}

// checkMethod records a fault unless m is POST or GET, and tells whether it is.
func checkMethod(fs *apperr.Faults, m string) bool {
	if !textcheck.LineOK(fs, "method", m) {
		return false
	}
	if m != http.MethodPost && m != http.MethodGet {
		fs.Invalid("method", "method must be POST or GET.")
		return false
	}
	return true
}

// checkSigning records a fault unless s names a signing scheme, and tells whether it does.
func checkSigning(fs *apperr.Faults, s string) bool {
	if !textcheck.LineOK(fs, "signing", s) {
		return false
	}
	if s != signing.SchemeHMAC && s != signing.SchemeEd25519 {
		fs.Invalid("signing", "signing must be %q or %q.", signing.SchemeHMAC, signing.SchemeEd25519)
		return false
	}
	return true
}

// checkOrdering records a fault unless o names an ordering (CONTRACT §26), and tells
// whether it does.
func checkOrdering(fs *apperr.Faults, o string) bool {
	if !textcheck.LineOK(fs, "ordering", o) {
		return false
	}
	if o != models.OrderingNone && o != models.OrderingObject {
		fs.Invalid("ordering", "ordering must be %q or %q.", models.OrderingNone, models.OrderingObject)
		return false
	}
	return true
}

// checkURL applies §8's rules to a url member (required when checked), and refuses
// credentials in a URL other than saved.
func checkURL(fs *apperr.Faults, raw *string, saved string) (string, bool) {
	switch {
	case raw == nil || *raw == "":
		fs.Missing("url")
	case !textcheck.LineOK(fs, "url", *raw): // url.Parse lets C1 controls through
	case len(*raw) > MaxURLLength:
		fs.Invalid("url", "url must be at most %d characters.", MaxURLLength)
	default:
		u, err := url.Parse(*raw)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
			fs.Invalid("url", "url must be an absolute URL beginning with https://.")
			return "", false
		}
		return *raw, checkCredentials(fs, u, *raw, saved)
	}
	return "", false
}

// checkEventTypes: "*" or known types, each once, at least one.
func checkEventTypes(fs *apperr.Faults, types []string) []string {
	if len(types) == 0 {
		fs.Invalid("event_types", `event_types must list at least one type, or "*" for every type.`)
		return nil
	}
	seen := map[string]bool{}
	for i, t := range types {
		param := fmt.Sprintf("event_types[%d]", i)
		switch {
		case !textcheck.LineOK(fs, param, t):
		case t != catalog.Wildcard && !catalog.Known(t):
			fs.Add(param, CodeInvalidEventType, "%q is not an event type; use \"*\" or one of %v.", t, catalog.Names())
		case seen[t]:
			fs.Invalid(param, "%s lists %q twice.", "event_types", t)
		}
		seen[t] = true
	}
	return types
}

// checkRetryPolicy completes in with base and checks the bounds of §13.
func checkRetryPolicy(fs *apperr.Faults, in RetryPolicyInput, base models.RetryPolicy) models.RetryPolicy {
	r, before := base, len(*fs)
	if in.InitialInterval != nil {
		r.InitialIntervalMS = checkInterval(fs, "retry_policy.initial_interval", *in.InitialInterval)
	}
	if in.MaximumInterval != nil {
		r.MaximumIntervalMS = checkInterval(fs, "retry_policy.maximum_interval", *in.MaximumInterval)
	}
	if c := in.BackoffCoefficient; c != nil {
		if *c < MinBackoff || *c > MaxBackoff || math.IsNaN(*c) {
			fs.Invalid("retry_policy.backoff_coefficient", "retry_policy.backoff_coefficient must be between %.1f and %.1f.", MinBackoff, MaxBackoff)
		}
		r.BackoffCoefficient = *c
	}
	if n := in.MaximumAttempts; n != nil {
		if *n < 1 || *n > MaxRetryAttempts {
			fs.Invalid("retry_policy.maximum_attempts", "retry_policy.maximum_attempts must be between 1 and %d.", MaxRetryAttempts)
		}
		r.MaximumAttempts = *n
	}
	if len(*fs) > before {
		return r
	}
	if r.MaximumIntervalMS < r.InitialIntervalMS {
		fs.Invalid("retry_policy.maximum_interval", "retry_policy.maximum_interval (%s) must be at least initial_interval (%s).",
			FormatDuration(r.MaximumInterval()), FormatDuration(r.InitialInterval()))
	} else if total := r.Schedule(); total > MaxRetrySchedule {
		fs.Invalid("retry_policy.maximum_attempts", "These retries would span %s from the first attempt to the last; the most is %s: lower maximum_attempts or the intervals.",
			FormatDuration(total.Round(time.Second)), FormatDuration(MaxRetrySchedule))
	}
	return r
}

// checkInterval parses a Go duration within the §13 bounds, in whole milliseconds.
func checkInterval(fs *apperr.Faults, param, s string) int64 {
	if !textcheck.LineOK(fs, param, s) {
		return 0
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		fs.Invalid(param, "%s must be a duration such as \"30s\", \"5m\" or \"1h\".", param)
	case d < MinRetryInterval || d > MaxRetryInterval:
		fs.Invalid(param, "%s must be between 1s and 24h.", param)
	case d%time.Millisecond != 0:
		fs.Invalid(param, "%s must be a whole number of milliseconds.", param)
	}
	return d.Milliseconds()
}

// FormatDuration writes a duration as Go duration text without zero units: "1h", "1h30m", "90s" → "1m30s".
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
