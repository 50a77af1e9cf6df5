// Package accounts holds the rules of Accounts (CONTRACT §6): validation, the properties
// merge, change detection, the status machine, and the object as the API and webhooks show it.
package accounts

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/mail"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/platform/jsonnum"
	"github.com/revops/revops/internal/platform/textcheck"
	"github.com/revops/revops/models"
)

// Limits of the writable fields.
const (
	MaxNameLen        = 255
	MaxPropertyKeys   = 50
	MaxPropertyKeyLen = 40
	MaxPropertyValLen = 500
)

// Input is the writable part of an account: the body of create and of PATCH.
type Input struct {
	Name         bodyfields.Field[string]         `json:"name"`
	ExternalID   bodyfields.Field[string]         `json:"external_id"`
	Domain       bodyfields.Field[string]         `json:"domain"`
	BillingEmail bodyfields.Field[string]         `json:"billing_email"`
	Properties   bodyfields.Field[map[string]any] `json:"properties"`
}

// Validate lists every fault of in; creating requires a name.
func Validate(in Input, creating bool) error {
	var fs apperr.Faults
	switch {
	case creating && (!in.Name.Set || in.Name.Null):
		fs.Missing("name")
	case in.Name.Set && !textcheck.LineOK(&fs, "name", in.Name.Value):
	case in.Name.Set && (in.Name.Null || strings.TrimSpace(in.Name.Value) == ""):
		fs.Invalid("name", "name must be a non-empty string.")
	case in.Name.Set && utf8.RuneCountInString(in.Name.Value) > MaxNameLen:
		fs.Invalid("name", "name must be at most %d characters.", MaxNameLen)
	}
	if f := in.ExternalID; f.Set && !f.Null && textcheck.LineOK(&fs, "external_id", f.Value) && (f.Value == "" || utf8.RuneCountInString(f.Value) > MaxNameLen) {
		fs.Invalid("external_id", "external_id must be 1 to %d characters, or null.", MaxNameLen)
	}
	if f := in.Domain; f.Set && !f.Null && textcheck.LineOK(&fs, "domain", f.Value) && !ValidDomain(f.Value) {
		fs.Invalid("domain", "domain %q is not a host name such as example.com.", f.Value)
	}
	if f := in.BillingEmail; f.Set && !f.Null && textcheck.LineOK(&fs, "billing_email", f.Value) && !ValidEmail(f.Value) {
		fs.Invalid("billing_email", "billing_email %q is not a valid email address.", f.Value)
	}
	if in.Properties.Set {
		validateProperties(&fs, in.Properties)
	}
	return fs.Err()
}

func validateProperties(fs *apperr.Faults, f bodyfields.Field[map[string]any]) {
	if f.Null {
		fs.Invalid("properties", "properties must be an object; remove a key by setting it to null.")
		return
	}
	keys := make([]string, 0, len(f.Value))
	for k := range f.Value {
		keys = append(keys, k)
	}
	sort.Strings(keys) // faults in a stable order
	for _, k := range keys {
		v, param := f.Value[k], "properties."+k
		if !textcheck.LineOK(fs, param, k) {
			continue
		}
		if k == "" || utf8.RuneCountInString(k) > MaxPropertyKeyLen {
			fs.Invalid(param, "property names must be 1 to %d characters.", MaxPropertyKeyLen)
			continue
		}
		switch v := v.(type) {
		case nil, bool:
		case json.Number:
			if jsonnum.Check(v) != nil {
				fs.Add(param, jsonnum.Code, "%s must be a finite number of at most %d characters written out in plain decimal.", param, jsonnum.MaxText)
			}
		case string:
			if textcheck.TextOK(fs, param, v) && utf8.RuneCountInString(v) > MaxPropertyValLen {
				fs.Invalid(param, "%s must be at most %d characters.", param, MaxPropertyValLen)
			}
		default:
			fs.Invalid(param, "%s must be a string, number, boolean or null (to remove it).", param)
		}
	}
}

// ValidEmail accepts a bare address (no display name), at most 254 characters.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && len(s) <= 254
}

// ValidDomain accepts a DNS host name of at least two labels (letters, digits, hyphens).
func ValidDomain(s string) bool {
	if len(s) > 253 || !strings.Contains(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// Apply returns cur with in applied (in must be valid) and whether anything changed.
// Properties merge key by key, null removing a key; numbers compare by value, so
// sending 1.0 for a stored 1 is no change.
func Apply(cur models.Account, in Input) (models.Account, bool, error) {
	next := cur
	if in.Name.Set {
		next.Name = in.Name.Value
	}
	bodyfields.Assign(&next.ExternalID, in.ExternalID)
	if in.Domain.Set && !in.Domain.Null {
		in.Domain.Value = strings.ToLower(in.Domain.Value) // host names are case-insensitive
	}
	bodyfields.Assign(&next.Domain, in.Domain)
	bodyfields.Assign(&next.BillingEmail, in.BillingEmail)
	props, err := decodeProperties(cur.Properties)
	if err != nil {
		return cur, false, err
	}
	merged := mergeProperties(props, in.Properties.Value)
	if len(merged) > MaxPropertyKeys {
		return cur, false, (&apperr.Faults{{Param: "properties", Code: apperr.CodeParameterInvalid,
			Message: fmt.Sprintf("an account has at most %d properties.", MaxPropertyKeys)}}).Err()
	}
	if !sameProperties(props, merged) {
		b, err := json.Marshal(merged) // map keys come out sorted
		if err != nil {
			return cur, false, fmt.Errorf("encode properties: %w", err)
		}
		next.Properties = string(b)
	}
	return next, changed(cur, next), nil
}

func changed(a, b models.Account) bool {
	return a.Name != b.Name || !sameStr(a.ExternalID, b.ExternalID) || !sameStr(a.Domain, b.Domain) ||
		!sameStr(a.BillingEmail, b.BillingEmail) || a.Properties != b.Properties || a.Status != b.Status
}

func sameStr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func decodeProperties(text string) (map[string]any, error) {
	props := map[string]any{}
	if text == "" {
		return props, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&props); err != nil {
		return nil, fmt.Errorf("decode stored properties: %w", err)
	}
	return props, nil
}

func mergeProperties(cur, patch map[string]any) map[string]any {
	out := make(map[string]any, len(cur)+len(patch))
	for k, v := range cur {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}

func sameProperties(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !sameValue(va, vb) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	na, okA := a.(json.Number)
	nb, okB := b.(json.Number)
	if okA && okB {
		ra, okRA := new(big.Rat).SetString(string(na))
		rb, okRB := new(big.Rat).SetString(string(nb))
		return okRA && okRB && ra.Cmp(rb) == 0
	}
	if okA || okB {
		return false
	}
	return a == b // string or bool
}

// Account actions.
const (
	ActionUpdate      = "update"
	ActionActivate    = "activate"
	ActionDeprovision = "deprovision"
)

// Transition is the account status machine: draft → active → deprovisioned (from draft too);
// edits are allowed until deprovisioned. It returns the new status and the event to emit.
func Transition(from, action string) (string, string, error) {
	switch {
	case action == ActionUpdate && (from == models.AccountDraft || from == models.AccountActive):
		return from, "account-updated", nil
	case action == ActionActivate && from == models.AccountDraft:
		return models.AccountActive, "account-updated", nil
	case action == ActionDeprovision && (from == models.AccountDraft || from == models.AccountActive):
		return models.AccountDeprovisioned, "account-deleted", nil
	}
	return from, "", fmt.Errorf("%w: %w", apperr.ErrInvalidTransition, apperr.Conflict("invalid_state_transition",
		"Cannot %s an account whose status is %s.", action, from))
}
