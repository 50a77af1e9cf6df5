package meters

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/platform/apiobject"
	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// The alerts of a meter (CONTRACT §24) as the API defines, lists and deletes them. When
// an alert fires is the consumer's and the backfill's business; an alert here is only
// its definition.

// MaxAlerts is how many alerts a meter may have (CONTRACT §24).
const MaxAlerts = 32

// CodeTooManyAlerts refuses a meter's 33rd alert.
const CodeTooManyAlerts = "too_many_alerts"

// AlertAggregations are the aggregations an alert may watch: their figures only grow
// within a window (a sum may shrink by negative increments, but it is what is billed).
// The value of a latest or min meter moves either way, so "the first time it reaches the
// threshold" would say nothing about the bill.
var AlertAggregations = []string{models.AggSum, models.AggCount, models.AggMax, models.AggUniqueCount}

// AlertObject is an alert as the API returns it (CONTRACT §24).
type AlertObject struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	Meter       string          `json:"meter"` // the meter's key
	MeterID     string          `json:"meter_id"`
	Threshold   json.Number     `json:"threshold"` // exact decimal, a JSON number as meter values are (§18)
	Window      string          `json:"window"`
	AccountID   *string         `json:"account_id"` // null: every account
	Group       json.RawMessage `json:"group"`      // {}: any group
	Description string          `json:"description"`
	CreatedAt   string          `json:"created_at"`
}

// ToAlertObject converts a stored alert of meter m to the API form.
func ToAlertObject(m models.Meter, a models.MeterAlert) AlertObject {
	group := json.RawMessage(a.Group)
	if a.Group == "" {
		group = json.RawMessage("{}")
	}
	return AlertObject{
		ID: a.ID, Object: "meter_alert", Meter: m.Key, MeterID: m.ID, Threshold: json.Number(a.Threshold),
		Window: a.Window, AccountID: apiobject.NonEmpty(a.AccountID), Group: group, Description: a.Description,
		CreatedAt: a.CreatedAt.UTC().Format(time.RFC3339Nano),
	}
}

// CreateAlert records an alert on the environment's meter key, with reply's answer (its
// AlertObject). The meter's row is locked while its alerts are counted, so that
// concurrent creates cannot pass MaxAlerts together, and a meter deleted meanwhile is
// not found.
func CreateAlert(ctx context.Context, st Store, env models.Env, key string, d AlertDefinition, reply idempotency.Reply[AlertObject]) (AlertObject, error) {
	var out AlertObject
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		m, err := tx.LockMeter(key)
		if err != nil {
			return err
		}
		if err := checkAlert(m, d); err != nil {
			return err
		}
		n, err := tx.CountMeterAlerts(m.ID)
		if err != nil {
			return err
		}
		if n >= MaxAlerts {
			return apperr.Invalid(errors.New("too many meter alerts"), CodeTooManyAlerts, "",
				"Meter %q already has %d alerts, the most it may have; delete one first.", m.Key, MaxAlerts)
		}
		a := models.MeterAlert{
			MeterID: m.ID, Threshold: d.Threshold.String(), Window: d.Window, AccountID: d.AccountID,
			Group: groupText(d.Group), Description: d.Description,
		}
		if err := tx.InsertMeterAlert(&a); err != nil {
			return err
		}
		out = ToAlertObject(m, a)
		return reply.Keep(tx, out)
	})
	return out, err
}

// checkAlert checks d against its meter: an aggregation alerts can watch, and group keys
// among the meter's group_by.
func checkAlert(m models.Meter, d AlertDefinition) error {
	var fs apperr.Faults
	if !slices.Contains(AlertAggregations, m.Aggregation) {
		// The path's key names the meter: it is the parameter that cannot take an alert.
		fs.Invalid("key", "Meter %q is a %s meter; alerts watch %s meters only (a %s value moves either way, so crossing a threshold says nothing about the bill).",
			m.Key, m.Aggregation, strings.Join(AlertAggregations, ", "), m.Aggregation)
	}
	keys := make([]string, 0, len(d.Group))
	for k := range d.Group {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(m.GroupBy, k) {
			fs.Invalid("group."+k, "%q is not one of meter %q's group_by keys %v.", k, m.Key, m.GroupBy)
		}
	}
	return fs.Err()
}

// groupText is the canonical text of an alert's group: a JSON object, its keys sorted
// (encoding/json sorts a map's), "{}" for none.
func groupText(g map[string]string) string {
	if len(g) == 0 {
		return "{}"
	}
	b, err := json.Marshal(g)
	if err != nil { // a map of strings always encodes
		panic(err)
	}
	return string(b)
}

// Alerts lists the alerts of the environment's meter key, newest first.
func Alerts(ctx context.Context, st Store, env models.Env, key string, page store.Page) ([]AlertObject, bool, error) {
	m, err := st.Meter(ctx, env, key)
	if err != nil {
		return nil, false, err
	}
	as, more, err := st.MeterAlerts(ctx, env, m.ID, page)
	if err != nil {
		return nil, false, err
	}
	out := make([]AlertObject, len(as))
	for i, a := range as {
		out[i] = ToAlertObject(m, a)
	}
	return out, more, nil
}

// AlertsNow reads the alerts of the environment's listed meters, at most MaxAlerts a
// meter, and the firings of the windows that contain now (the series over a threshold
// today or this month), at most maxFirings (more: others are over too): the dashboard's
// Usage page (CONTRACT §24).
func AlertsNow(ctx context.Context, st Store, env models.Env, meterIDs []string, now time.Time, maxFirings int) (
	alerts map[string][]models.MeterAlert, firings []models.MeterAlertFiring, more bool, err error) {
	if alerts, err = st.AlertsOfMeters(ctx, env, meterIDs, MaxAlerts); err != nil {
		return nil, nil, false, err
	}
	var ids []string
	for _, as := range alerts {
		for _, a := range as {
			ids = append(ids, a.ID)
		}
	}
	firings, more, err = st.FiringsNow(ctx, env, ids, now, maxFirings)
	return alerts, firings, more, err
}

// Alert finds the alert id of the environment's meter key: an alert of another meter is
// not found.
func Alert(ctx context.Context, st Store, env models.Env, key, id string) (AlertObject, error) {
	m, err := st.Meter(ctx, env, key)
	if err != nil {
		return AlertObject{}, err
	}
	a, err := st.MeterAlert(ctx, env, m.ID, id)
	if err != nil {
		return AlertObject{}, err
	}
	return ToAlertObject(m, a), nil
}

// DeleteAlert removes the alert id of the environment's meter key, with reply's answer:
// the deleted stub, as a meter's own hard delete answers.
func DeleteAlert(ctx context.Context, st Store, env models.Env, key, id string, reply idempotency.Reply[Deleted]) (Deleted, error) {
	var out Deleted
	_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		m, err := tx.FindMeter(key)
		if err != nil {
			return err
		}
		a, err := tx.DeleteMeterAlert(m.ID, id)
		if err != nil {
			return err
		}
		out = apiobject.DeletedOf("meter_alert", a.ID)
		return reply.Keep(tx, out)
	})
	return out, err
}
