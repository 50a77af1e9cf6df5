package deals

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/platform/textcheck"
)

// Limits of the writable fields.
const (
	MaxTextLen = 255
	MaxURLLen  = 2048
	MaxItems   = 100
)

// Billing frequencies of a term.
var billingFrequencies = map[string]bool{"monthly": true, "quarterly": true, "annual": true, "one_time": true}

// CustomerRef is how a request names the deal's account.
type CustomerRef struct {
	ID string `json:"id"`
}

// SkuInput is one sku of a request; an id keeps an existing item, no id makes a new one.
type SkuInput struct {
	ID        *string `json:"id"`
	Code      *string `json:"code"`
	Name      *string `json:"name"`
	Quantity  *string `json:"quantity"`
	UnitPrice *string `json:"unit_price"`
}

// TermInput is one term of a request.
type TermInput struct {
	ID               *string `json:"id"`
	Name             *string `json:"name"`
	Description      *string `json:"description"`
	StartDate        *string `json:"start_date"`
	EndDate          *string `json:"end_date"`
	BillingFrequency *string `json:"billing_frequency"`
}

// Input is the writable part of a deal: the body of create and of PATCH.
type Input struct {
	Customer                  bodyfields.Field[CustomerRef] `json:"customer"`
	ContractActivatesDate     bodyfields.Field[string]      `json:"contract_activates_date"`
	NetPrice                  bodyfields.Field[string]      `json:"net_price"`
	NetPriceCurrency          bodyfields.Field[string]      `json:"net_price_currency"`
	NetPricePrecision         bodyfields.Field[string]      `json:"net_price_precision"`
	OriginalNetPrice          bodyfields.Field[string]      `json:"original_net_price"`
	OriginalNetPriceCurrency  bodyfields.Field[string]      `json:"original_net_price_currency"`
	OriginalNetPricePrecision bodyfields.Field[string]      `json:"original_net_price_precision"`
	OpportunityID             bodyfields.Field[string]      `json:"opportunity_id"`
	SignedContractURL         bodyfields.Field[string]      `json:"signed_contract_url"`
	Skus                      bodyfields.Field[[]SkuInput]  `json:"skus"`
	Terms                     bodyfields.Field[[]TermInput] `json:"terms"`
	Submit                    bodyfields.Field[bool]        `json:"submit"` // create only
}

// Validate lists every fault of the fields taken one by one; rules joining fields
// (a price and its precision) are checked on the merged deal by Apply.
func Validate(in Input, creating bool) error {
	var fs apperr.Faults
	switch c := in.Customer; {
	case creating && !c.Set:
		fs.Missing("customer")
	case c.Set && c.Null:
		fs.Invalid("customer", "customer must be an object such as {\"id\": \"<account id>\"}.")
	case c.Set && c.Value.ID == "":
		fs.Missing("customer.id")
	case c.Set:
		textcheck.LineOK(&fs, "customer.id", c.Value.ID)
	}
	if f := in.ContractActivatesDate; f.Set && !f.Null && lineOK(&fs, "contract_activates_date", &f.Value) && !ValidDate(f.Value) {
		fs.Invalid("contract_activates_date", "contract_activates_date must be a date as YYYY-MM-DD, or null.")
	}
	for _, p := range []string{"net_price", "original_net_price"} {
		price, currency, precision := in.prices(p)
		if price.Set && !price.Null && lineOK(&fs, p, &price.Value) && !decimalSyntax.MatchString(price.Value) {
			fs.Invalid(p, "%s must be a decimal string such as \"19999.00\" (no sign, no exponent), or null.", p)
		}
		if currency.Set && !currency.Null && lineOK(&fs, p+"_currency", &currency.Value) && !ValidCurrency(currency.Value) {
			fs.Invalid(p+"_currency", "%s_currency %q is not an ISO 4217 currency code (upper case, such as \"USD\").", p, currency.Value)
		}
		if precision.Set && !precision.Null && lineOK(&fs, p+"_precision", &precision.Value) && !ValidPrecision(precision.Value) {
			fs.Invalid(p+"_precision", "%s_precision must be one of \"0\" to \"6\", or null.", p)
		}
	}
	if f := in.OpportunityID; f.Set && !f.Null && lineOK(&fs, "opportunity_id", &f.Value) && (f.Value == "" || utf8.RuneCountInString(f.Value) > MaxTextLen) {
		fs.Invalid("opportunity_id", "opportunity_id must be 1 to %d characters, or null.", MaxTextLen)
	}
	if f := in.SignedContractURL; f.Set && !f.Null && lineOK(&fs, "signed_contract_url", &f.Value) && !ValidHTTPSURL(f.Value) {
		fs.Invalid("signed_contract_url", "signed_contract_url must be an https:// URL of at most %d characters, or null.", MaxURLLen)
	}
	validateSkus(&fs, in.Skus)
	validateTerms(&fs, in.Terms)
	return fs.Err()
}

// prices returns the price, currency and precision fields of one price group.
func (in Input) prices(group string) (price, currency, precision bodyfields.Field[string]) {
	if group == "net_price" {
		return in.NetPrice, in.NetPriceCurrency, in.NetPricePrecision
	}
	return in.OriginalNetPrice, in.OriginalNetPriceCurrency, in.OriginalNetPricePrecision
}

// validateItems checks a replace-wholesale list (skus, terms): absent is fine, null or too
// long is one fault, and each item is checked by each with its param prefix.
func validateItems[T any](fs *apperr.Faults, name string, f bodyfields.Field[[]T], each func(p string, item T)) {
	if !f.Set {
		return
	}
	if f.Null || len(f.Value) > MaxItems {
		fs.Invalid(name, "%s must be an array of at most %d items ([] removes them all).", name, MaxItems)
		return
	}
	for i, item := range f.Value {
		each(fmt.Sprintf("%s[%d]", name, i), item)
	}
}

func validateSkus(fs *apperr.Faults, f bodyfields.Field[[]SkuInput]) {
	validateItems(fs, "skus", f, func(p string, s SkuInput) {
		lineOK(fs, p+".id", s.ID)
		requireText(fs, p+".code", s.Code)
		requireText(fs, p+".name", s.Name)
		requireDecimal(fs, p+".quantity", s.Quantity)
		requireDecimal(fs, p+".unit_price", s.UnitPrice)
	})
}

func validateTerms(fs *apperr.Faults, f bodyfields.Field[[]TermInput]) {
	validateItems(fs, "terms", f, func(p string, t TermInput) {
		lineOK(fs, p+".id", t.ID)
		requireText(fs, p+".name", t.Name)
		if t.Description != nil && textcheck.TextOK(fs, p+".description", *t.Description) && utf8.RuneCountInString(*t.Description) > 5000 {
			fs.Invalid(p+".description", "%s.description must be at most 5000 characters.", p)
		}
		for _, d := range []struct {
			name string
			v    *string
		}{{"start_date", t.StartDate}, {"end_date", t.EndDate}} {
			if d.v != nil && lineOK(fs, p+"."+d.name, d.v) && !ValidDate(*d.v) {
				fs.Invalid(p+"."+d.name, "%s.%s must be a date as YYYY-MM-DD, or null.", p, d.name)
			}
		}
		if t.StartDate != nil && t.EndDate != nil && ValidDate(*t.StartDate) && ValidDate(*t.EndDate) && *t.EndDate < *t.StartDate {
			fs.Invalid(p+".end_date", "%s.end_date must not be before start_date.", p)
		}
		switch {
		case t.BillingFrequency == nil:
			fs.Missing(p + ".billing_frequency")
		case !lineOK(fs, p+".billing_frequency", t.BillingFrequency):
		case !billingFrequencies[*t.BillingFrequency]:
			fs.Invalid(p+".billing_frequency", "%s.billing_frequency must be monthly, quarterly, annual or one_time.", p)
		}
	})
}

func requireText(fs *apperr.Faults, param string, v *string) {
	switch {
	case v == nil:
		fs.Missing(param)
	case !lineOK(fs, param, v):
	case strings.TrimSpace(*v) == "" || utf8.RuneCountInString(*v) > MaxTextLen:
		fs.Invalid(param, "%s must be 1 to %d characters.", param, MaxTextLen)
	}
}

func requireDecimal(fs *apperr.Faults, param string, v *string) {
	switch {
	case v == nil:
		fs.Missing(param)
	case !lineOK(fs, param, v):
	case !itemDecimal.MatchString(*v):
		fs.Invalid(param, "%s must be a decimal string with at most 6 fractional digits, such as \"12.50\".", param)
	}
}

// lineOK applies CONTRACT §15's one-line string rule to an optional string (every
// string of a deal but a term's description): nil passes.
func lineOK(fs *apperr.Faults, param string, v *string) bool {
	return v == nil || textcheck.LineOK(fs, param, *v)
}

var (
	// decimalSyntax: no sign, no exponent, no leading zeros, at most 18 integer digits.
	decimalSyntax = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})(\.[0-9]{1,6})?$`)
	itemDecimal   = decimalSyntax
	dateSyntax    = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// ValidDate accepts a real calendar date written YYYY-MM-DD.
func ValidDate(s string) bool {
	if !dateSyntax.MatchString(s) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// ValidPrecision accepts "0" to "6".
func ValidPrecision(s string) bool {
	return len(s) == 1 && s[0] >= '0' && s[0] <= '6'
}

// ValidHTTPSURL accepts an absolute https URL with a host.
func ValidHTTPSURL(s string) bool {
	if len(s) > MaxURLLen {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil && strings.HasPrefix(s, "https://")
}

// FractionDigits returns how many digits follow the decimal point of a valid decimal string.
func FractionDigits(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// precisionOf turns a valid precision string into its number.
func precisionOf(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
