package deals

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/models"
)

// Sku is a sku item as stored and shown.
type Sku struct {
	ID        string `json:"id"`
	Code      string `json:"code"`
	Name      string `json:"name"`
	Quantity  string `json:"quantity"`
	UnitPrice string `json:"unit_price"`
}

// Term is a term item as stored and shown.
type Term struct {
	ID               string  `json:"id"`
	Name             string  `json:"name"`
	Description      *string `json:"description"`
	StartDate        *string `json:"start_date"`
	EndDate          *string `json:"end_date"`
	BillingFrequency string  `json:"billing_frequency"`
}

// Apply returns cur with a valid in applied: absent fields stay, null clears, skus and
// terms are replaced wholesale (an item's id must be one of the deal's current items of
// that list; items without id get a new one). It then checks the rules that join fields.
func Apply(cur models.Deal, in Input) (models.Deal, error) {
	next := cur
	if in.Customer.Set {
		next.AccountID = in.Customer.Value.ID
	}
	bodyfields.Assign(&next.ContractActivatesDate, in.ContractActivatesDate)
	bodyfields.Assign(&next.NetPrice, in.NetPrice)
	bodyfields.Assign(&next.NetPriceCurrency, in.NetPriceCurrency)
	bodyfields.Assign(&next.NetPricePrecision, in.NetPricePrecision)
	bodyfields.Assign(&next.OriginalNetPrice, in.OriginalNetPrice)
	bodyfields.Assign(&next.OriginalNetPriceCurrency, in.OriginalNetPriceCurrency)
	bodyfields.Assign(&next.OriginalNetPricePrecision, in.OriginalNetPricePrecision)
	bodyfields.Assign(&next.OpportunityID, in.OpportunityID)
	bodyfields.Assign(&next.SignedContractURL, in.SignedContractURL)
	var fs apperr.Faults
	if in.Skus.Set {
		text, err := replaceSkus(&fs, cur.Skus, in.Skus.Value)
		if err != nil {
			return cur, err
		}
		next.Skus = text
	}
	if in.Terms.Set {
		text, err := replaceTerms(&fs, cur.Terms, in.Terms.Value)
		if err != nil {
			return cur, err
		}
		next.Terms = text
	}
	checkPrice(&fs, "net_price", next.NetPrice, next.NetPriceCurrency, next.NetPricePrecision)
	checkPrice(&fs, "original_net_price", next.OriginalNetPrice, next.OriginalNetPriceCurrency, next.OriginalNetPricePrecision)
	if err := fs.Err(); err != nil {
		return cur, err
	}
	return next, nil
}

// checkPrice: a price needs its currency and precision, and has exactly precision
// fractional digits ("19999.00" with "2"; "19999" with "0").
func checkPrice(fs *apperr.Faults, p string, price, currency, precision *string) {
	if price == nil {
		return
	}
	if currency == nil {
		fs.Add(p+"_currency", apperr.CodeParameterMissing, "%s_currency is required while %s is set.", p, p)
	}
	if precision == nil {
		fs.Add(p+"_precision", apperr.CodeParameterMissing, "%s_precision is required while %s is set.", p, p)
		return
	}
	if want := precisionOf(*precision); FractionDigits(*price) != want {
		fs.Invalid(p, "%s %q must have exactly %d fractional digits, as %s_precision is %q.", p, *price, want, p, *precision)
	}
}

// keptIDs returns the ids of the stored items of a list.
func keptIDs(text string) (map[string]bool, error) {
	var items []struct {
		ID string `json:"id"`
	}
	if text != "" {
		if err := json.Unmarshal([]byte(text), &items); err != nil {
			return nil, fmt.Errorf("decode stored items: %w", err)
		}
	}
	ids := make(map[string]bool, len(items))
	for _, it := range items {
		ids[it.ID] = true
	}
	return ids, nil
}

// itemID keeps a known id, assigns one when none is given, and records a fault for an
// unknown or repeated id.
func itemID(fs *apperr.Faults, param string, given *string, known, seen map[string]bool) string {
	if given == nil {
		return uuid.NewString()
	}
	if !known[*given] || seen[*given] {
		fs.Invalid(param, "%s %q is not an item of this deal (leave id out for a new item).", param, *given)
	}
	seen[*given] = true
	return *given
}

func replaceSkus(fs *apperr.Faults, stored string, in []SkuInput) (string, error) {
	known, err := keptIDs(stored)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	out := make([]Sku, len(in))
	for i, s := range in {
		out[i] = Sku{ID: itemID(fs, fmt.Sprintf("skus[%d].id", i), s.ID, known, seen),
			Code: deref(s.Code), Name: deref(s.Name), Quantity: deref(s.Quantity), UnitPrice: deref(s.UnitPrice)}
	}
	return encodeItems(out)
}

func replaceTerms(fs *apperr.Faults, stored string, in []TermInput) (string, error) {
	known, err := keptIDs(stored)
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	out := make([]Term, len(in))
	for i, t := range in {
		out[i] = Term{ID: itemID(fs, fmt.Sprintf("terms[%d].id", i), t.ID, known, seen),
			Name: deref(t.Name), Description: t.Description, StartDate: t.StartDate, EndDate: t.EndDate,
			BillingFrequency: deref(t.BillingFrequency)}
	}
	return encodeItems(out)
}

func encodeItems[T any](items []T) (string, error) {
	b, err := json.Marshal(items)
	if err != nil {
		return "", fmt.Errorf("encode items: %w", err)
	}
	return string(b), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Changed tells whether next differs from cur in anything a caller can see.
func Changed(cur, next models.Deal) bool {
	same := func(a, b *string) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }
	return cur.AccountID != next.AccountID || cur.Status != next.Status ||
		!same(cur.ContractActivatesDate, next.ContractActivatesDate) ||
		!same(cur.NetPrice, next.NetPrice) || !same(cur.NetPriceCurrency, next.NetPriceCurrency) ||
		!same(cur.NetPricePrecision, next.NetPricePrecision) || !same(cur.OriginalNetPrice, next.OriginalNetPrice) ||
		!same(cur.OriginalNetPriceCurrency, next.OriginalNetPriceCurrency) ||
		!same(cur.OriginalNetPricePrecision, next.OriginalNetPricePrecision) ||
		!same(cur.OpportunityID, next.OpportunityID) || !same(cur.SignedContractURL, next.SignedContractURL) ||
		cur.Skus != next.Skus || cur.Terms != next.Terms
}

// ReadyToSign refuses to sign a deal without its net price (409).
func ReadyToSign(d models.Deal) error {
	var missing []string
	for _, f := range []struct {
		name string
		v    *string
	}{{"net_price", d.NetPrice}, {"net_price_currency", d.NetPriceCurrency}, {"net_price_precision", d.NetPricePrecision}} {
		if f.v == nil {
			missing = append(missing, f.name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", apperr.ErrInvalidTransition, apperr.Conflict("invalid_state_transition",
		"Cannot sign a deal whose status is %s: %s not set (prices are edited while the deal is draft or pending_approval).",
		d.Status, strings.Join(missing, ", ")))
}
