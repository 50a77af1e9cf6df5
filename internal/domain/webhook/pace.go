package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// Paced endpoints (CONTRACT §27): an endpoint's rate_limit, checked at the edge, and the
// two caps a write that paces an endpoint is held to, decided in its transaction. The
// engine keeps the pace (workflows/fanout.go puts the attempts on the paced queue, keyed
// by endpoint; the weight override of each key is its rate): the write records the new
// rate for after the commit (store.Tx.Repace), and the minute check reconciles.

// Bounds of a rate_limit member (CONTRACT §27).
const (
	MinRateLimit = 1
	MaxRateLimit = 1000
)

// Defaults of the pacing settings (internal/platform/config).
const (
	// DefaultPacedRatePerEnvironment is REVOPS_PACED_RATE_PER_ENVIRONMENT: the rates of
	// an environment's paced endpoints, per second, added up.
	DefaultPacedRatePerEnvironment = 100
	// DefaultPacedEndpoints is REVOPS_PACED_ENDPOINTS: the paced endpoints the shipped
	// dynamic config is sized for, all environments together (deploy/temporal/
	// dynamicconfig.yaml raises the per-queue override cap and the per-key limiter cache
	// above it, with room for writes that race past the count).
	DefaultPacedEndpoints = 2000
)

// Codes of the pacing refusals.
const (
	CodeRateLimitTooHigh    = "rate_limit_too_high"
	CodeTooManyPacedEndpts  = "too_many_paced_endpoints"
	pacedRateSetting        = "REVOPS_PACED_RATE_PER_ENVIRONMENT"
	pacedEndpointsSetting   = "REVOPS_PACED_ENDPOINTS"
	rateLimitParam          = "rate_limit"
	rateLimitLimitParam     = "rate_limit.limit"
	rateLimitPeriodParam    = "rate_limit.period"
	rateLimitMembersMessage = `rate_limit must be null or an object {"limit":N,"period":"1s"|"1m"}.`
)

// ErrRateLimitTooHigh refuses a pace past the environment's room; ErrTooManyPaced one
// past the deployment's. Each comes wrapped in an *apperr.InvalidError.
var (
	ErrRateLimitTooHigh = errors.New("rate limit too high for the environment")
	ErrTooManyPaced     = errors.New("too many paced endpoints in the deployment")
)

// PaceLimits are the caps of CONTRACT §27 a write is held to; zero fields take the
// defaults.
type PaceLimits struct {
	PerEnvironment float64 // REVOPS_PACED_RATE_PER_ENVIRONMENT, per second
	Endpoints      int     // REVOPS_PACED_ENDPOINTS
}

func (l PaceLimits) orDefaults() PaceLimits {
	if l.PerEnvironment <= 0 {
		l.PerEnvironment = DefaultPacedRatePerEnvironment
	}
	if l.Endpoints <= 0 {
		l.Endpoints = DefaultPacedEndpoints
	}
	return l
}

// Pace is an endpoint's pace as a patch sets it: Limit per Period; Limit 0 unpaces.
type Pace struct {
	Limit  int
	Period string
}

// RateLimitObject is the rate_limit member of an endpoint object (null when unpaced).
type RateLimitObject struct {
	Limit  int    `json:"limit"`
	Period string `json:"period"`
}

// ToRateLimitObject is ep's rate_limit, nil when it is unpaced.
func ToRateLimitObject(ep models.WebhookEndpoint) *RateLimitObject {
	if ep.RateLimit <= 0 {
		return nil
	}
	return &RateLimitObject{Limit: ep.RateLimit, Period: ep.RatePeriod}
}

// checkRateLimit reads a rate_limit member as sent: null (unpaced) or {"limit":N,
// "period":"1s"|"1m"}, N from 1 to 1,000, both members required.
func checkRateLimit(fs *apperr.Faults, raw json.RawMessage) Pace {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return Pace{}
	}
	var members map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &members) != nil {
		fs.Invalid(rateLimitParam, rateLimitMembersMessage)
		return Pace{}
	}
	for name := range members {
		if name != "limit" && name != "period" {
			if textcheck.LineOK(fs, rateLimitParam+"."+name, name) {
				fs.Add(rateLimitParam+"."+name, apperr.CodeUnknownParameter, "rate_limit has no member %q: it takes limit and period.", name)
			}
		}
	}
	var p Pace
	switch l, ok := members["limit"]; {
	case !ok:
		fs.Missing(rateLimitLimitParam)
	default:
		p.Limit = checkLimit(fs, l)
	}
	switch v, ok := members["period"]; {
	case !ok:
		fs.Missing(rateLimitPeriodParam)
	default:
		var s string
		if json.Unmarshal(v, &s) != nil {
			fs.Invalid(rateLimitPeriodParam, `rate_limit.period must be "1s" or "1m".`)
		} else if textcheck.LineOK(fs, rateLimitPeriodParam, s) && s != models.RatePerSecond && s != models.RatePerMinute {
			fs.Invalid(rateLimitPeriodParam, `rate_limit.period must be "1s" or "1m".`)
		}
		p.Period = s
	}
	return p
}

// checkLimit reads rate_limit.limit: a whole number from MinRateLimit to MaxRateLimit.
func checkLimit(fs *apperr.Faults, raw json.RawMessage) int {
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || f != math.Trunc(f) || f < MinRateLimit || f > MaxRateLimit {
		fs.Invalid(rateLimitLimitParam, "rate_limit.limit must be a whole number from %d to %d.", MinRateLimit, MaxRateLimit)
		return 0
	}
	return int(f)
}

// withPace is ep paced as p says (unpaced when p.Limit is 0).
func withPace(ep models.WebhookEndpoint, p Pace) models.WebhookEndpoint {
	ep.RateLimit, ep.RatePeriod = p.Limit, p.Period
	if p.Limit <= 0 {
		ep.RateLimit, ep.RatePeriod = 0, ""
	}
	return ep
}

// checkPace holds next, the endpoint as a write leaves it (cur as it was: its own
// rate, if paced, is not counted twice; zero for a new endpoint), to the caps of
// CONTRACT §27, under the environment's lock (LockEndpoints), so that two writes cannot
// pass the environment's cap together; then it records a changed rate for after the
// commit. A write that does not raise the endpoint's rate is never refused.
func checkPace(tx *store.Tx, cur, next models.WebhookEndpoint, limits PaceLimits) error {
	limits = limits.orDefaults()
	was, rate := cur.PacedRate(), next.PacedRate()
	if rate > was {
		if err := checkEnvRoom(tx, next.ID, rate, limits.PerEnvironment); err != nil {
			return err
		}
	}
	if rate > 0 && was == 0 {
		n, err := tx.CountPacedEndpoints()
		if err != nil {
			return err
		}
		if n >= int64(limits.Endpoints) {
			return apperr.Invalid(ErrTooManyPaced, CodeTooManyPacedEndpts, rateLimitParam,
				"This deployment already has %d paced webhook endpoints, the most its Temporal configuration is sized for (%s): unpace or delete one, or ask the operator to raise %s together with the dynamic config (docs/production.md).",
				n, pacedEndpointsSetting, pacedEndpointsSetting)
		}
	}
	if rate != was {
		tx.Repace(next.ID, rate)
	}
	return nil
}

// checkEnvRoom refuses rate for endpoint id when the environment's other paced
// endpoints leave less room than that under its cap.
func checkEnvRoom(tx *store.Tx, id string, rate, perEnvironment float64) error {
	paced, err := tx.PacedEndpoints()
	if err != nil {
		return err
	}
	var used float64
	for _, ep := range paced {
		if ep.ID != id {
			used += ep.PacedRate()
		}
	}
	// A thousandth of a request per second of slack absorbs the rounding of per-minute
	// rates (60 × 1/60 adds up to 1 in decimal, not always in binary).
	if used+rate <= perEnvironment+1e-9 {
		return nil
	}
	room := max(perEnvironment-used, 0)
	return apperr.Invalid(ErrRateLimitTooHigh, CodeRateLimitTooHigh, rateLimitParam,
		"The paced endpoints of this environment may send at most %s requests per second together (%s); the others take %s, which leaves %s per second (%s per minute), and this rate_limit asks %s per second.",
		formatRate(perEnvironment), pacedRateSetting, formatRate(used), formatRate(room), formatRate(room*60), formatRate(rate))
}

// formatRate writes a rate with at most three decimals, without trailing zeros.
func formatRate(r float64) string {
	return strconv.FormatFloat(math.Floor(r*1000+1e-6)/1000, 'f', -1, 64)
}

// PaceText is an endpoint's pace as the dashboard and the CLI write it: "5/1s", or
// "unpaced".
func PaceText(ep models.WebhookEndpoint) string {
	if ep.RateLimit <= 0 {
		return "unpaced"
	}
	return fmt.Sprintf("%d/%s", ep.RateLimit, ep.RatePeriod)
}
