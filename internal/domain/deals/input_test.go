package deals

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/internal/platform/bodyfields"
	"github.com/revops/revops/internal/testkit/jsontest"
	"github.com/revops/revops/models"
)

// decode builds an Input from JSON the way the API does.
var decode = jsontest.Decode[Input]

func TestValidate(t *testing.T) {
	const cust = `"customer":{"id":"a1"}`
	cases := []struct {
		name     string
		body     string
		creating bool
		want     string
	}{
		{"minimal create", `{` + cust + `}`, true, ""},
		{"customer missing on create", `{}`, true, "customer:parameter_missing"},
		{"customer optional on patch", `{}`, false, ""},
		{"customer null", `{"customer":null}`, false, "customer:parameter_invalid"},
		{"customer id empty", `{"customer":{"id":""}}`, true, "customer.id:parameter_missing"},
		{"full valid", `{` + cust + `,"contract_activates_date":"2024-02-29","net_price":"19999.00","net_price_currency":"USD","net_price_precision":"2",
			"original_net_price":"25000","original_net_price_currency":"EUR","original_net_price_precision":"0",
			"opportunity_id":"opp_1","signed_contract_url":"https://docs.example.com/c.pdf"}`, true, ""},
		{"nulls clear", `{"contract_activates_date":null,"net_price":null,"opportunity_id":null,"signed_contract_url":null}`, false, ""},
		{"bad date format", `{"contract_activates_date":"2024-1-05"}`, false, "contract_activates_date:parameter_invalid"},
		{"impossible date", `{"contract_activates_date":"2023-02-29"}`, false, "contract_activates_date:parameter_invalid"},
		{"rfc3339 is not a date", `{"contract_activates_date":"2024-01-05T00:00:00Z"}`, false, "contract_activates_date:parameter_invalid"},
		{"lower-case currency", `{"net_price_currency":"usd"}`, false, "net_price_currency:parameter_invalid"},
		{"unknown currency", `{"original_net_price_currency":"ABC"}`, false, "original_net_price_currency:parameter_invalid"},
		{"precision 7", `{"net_price_precision":"7"}`, false, "net_price_precision:parameter_invalid"},
		{"precision not a digit", `{"net_price_precision":"2.0"}`, false, "net_price_precision:parameter_invalid"},
		{"negative price", `{"net_price":"-1.00"}`, false, "net_price:parameter_invalid"},
		{"exponent price", `{"net_price":"1e3"}`, false, "net_price:parameter_invalid"},
		{"leading zero", `{"net_price":"01.00"}`, false, "net_price:parameter_invalid"},
		{"http url", `{"signed_contract_url":"http://example.com/c.pdf"}`, false, "signed_contract_url:parameter_invalid"},
		{"url without host", `{"signed_contract_url":"https:///c.pdf"}`, false, "signed_contract_url:parameter_invalid"},
		{"empty opportunity", `{"opportunity_id":""}`, false, "opportunity_id:parameter_invalid"},
		{"skus null", `{"skus":null}`, false, "skus:parameter_invalid"},
		{"skus empty", `{"skus":[]}`, false, ""},
		{"sku valid", `{"skus":[{"code":"PRO","name":"Pro","quantity":"10","unit_price":"99.50"}]}`, false, ""},
		{"sku faults", `{"skus":[{"code":"","quantity":"1.1234567","unit_price":"x"}]}`, false,
			"skus[0].code:parameter_invalid skus[0].name:parameter_missing skus[0].quantity:parameter_invalid skus[0].unit_price:parameter_invalid"},
		{"term valid", `{"terms":[{"name":"SLA","description":null,"start_date":"2024-01-01","end_date":"2024-12-31","billing_frequency":"annual"}]}`, false, ""},
		{"term faults", `{"terms":[{"start_date":"2024-13-01","end_date":"2024-01-01","billing_frequency":"weekly"}]}`, false,
			"terms[0].name:parameter_missing terms[0].start_date:parameter_invalid terms[0].billing_frequency:parameter_invalid"},
		{"term ends before start", `{"terms":[{"name":"x","start_date":"2024-02-01","end_date":"2024-01-31","billing_frequency":"one_time"}]}`, false,
			"terms[0].end_date:parameter_invalid"},
		{"every fault listed", `{"net_price_currency":"usd","net_price_precision":"9","signed_contract_url":"ftp://x"}`, false,
			"net_price_currency:parameter_invalid net_price_precision:parameter_invalid signed_contract_url:parameter_invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := apperr.Summary(Validate(decode(t, c.body), c.creating)); got != c.want {
				t.Fatalf("faults %q, want %q", got, c.want)
			}
		})
	}
}

func TestApplyPrices(t *testing.T) {
	cases := []struct {
		name string
		cur  models.Deal
		body string
		want string
	}{
		{"exact digits", models.Deal{}, `{"net_price":"19999.00","net_price_currency":"USD","net_price_precision":"2"}`, ""},
		{"precision 0", models.Deal{}, `{"net_price":"19999","net_price_currency":"JPY","net_price_precision":"0"}`, ""},
		{"too few digits", models.Deal{}, `{"net_price":"19999.0","net_price_currency":"USD","net_price_precision":"2"}`, "net_price:parameter_invalid"},
		{"digits with precision 0", models.Deal{}, `{"net_price":"1.00","net_price_currency":"USD","net_price_precision":"0"}`, "net_price:parameter_invalid"},
		{"price without currency and precision", models.Deal{}, `{"original_net_price":"1.00"}`,
			"original_net_price_currency:parameter_missing original_net_price_precision:parameter_missing"},
		{"precision alone is fine", models.Deal{}, `{"net_price_precision":"2"}`, ""},
		{"stored price checked against new precision", models.Deal{NetPrice: ptr("10.00"), NetPriceCurrency: ptr("USD"), NetPricePrecision: ptr("2")},
			`{"net_price_precision":"3"}`, "net_price:parameter_invalid"},
		{"clearing the price frees precision", models.Deal{NetPrice: ptr("10.00"), NetPriceCurrency: ptr("USD"), NetPricePrecision: ptr("2")},
			`{"net_price":null,"net_price_precision":null}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := decode(t, c.body)
			if err := Validate(in, false); err != nil {
				t.Fatalf("field validation: %v", err)
			}
			_, err := Apply(c.cur, in)
			if got := apperr.Summary(err); got != c.want {
				t.Fatalf("faults %q, want %q", got, c.want)
			}
		})
	}
}

func TestApplyItemsReplacedWholesale(t *testing.T) {
	first, err := Apply(models.Deal{Skus: "[]", Terms: "[]"}, decode(t,
		`{"skus":[{"code":"A","name":"a","quantity":"1","unit_price":"1.00"},{"code":"B","name":"b","quantity":"2","unit_price":"2.00"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var skus []Sku
	if err := json.Unmarshal([]byte(first.Skus), &skus); err != nil || len(skus) != 2 || skus[0].ID == "" || skus[0].ID == skus[1].ID {
		t.Fatalf("ids not assigned: %s (%v)", first.Skus, err)
	}
	keep := `{"skus":[{"id":"` + skus[1].ID + `","code":"B","name":"b","quantity":"2","unit_price":"2.00"}]}`
	second, err := Apply(first, decode(t, keep))
	if err != nil {
		t.Fatal(err)
	}
	var after []Sku
	_ = json.Unmarshal([]byte(second.Skus), &after)
	if len(after) != 1 || after[0].ID != skus[1].ID || !Changed(first, second) {
		t.Fatalf("replace did not keep only B with its id: %s", second.Skus)
	}
	if again, err := Apply(second, decode(t, keep)); err != nil || Changed(second, again) {
		t.Fatalf("sending the same items with their ids is a change (%v)", err)
	}
	for name, body := range map[string]string{
		"unknown id":  `{"skus":[{"id":"nope","code":"B","name":"b","quantity":"2","unit_price":"2.00"}]}`,
		"repeated id": `{"skus":[` + strings.TrimSuffix(strings.TrimPrefix(keep, `{"skus":[`), `]}`) + `,` + strings.TrimSuffix(strings.TrimPrefix(keep, `{"skus":[`), `]}`) + `]}`,
	} {
		if _, err := Apply(second, decode(t, body)); apperr.Summary(err) == "" {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestReadyToSign(t *testing.T) {
	full := models.Deal{Status: "approved", NetPrice: ptr("1.00"), NetPriceCurrency: ptr("USD"), NetPricePrecision: ptr("2")}
	if err := ReadyToSign(full); err != nil {
		t.Fatal(err)
	}
	partial := full
	partial.NetPriceCurrency = nil
	var ce *apperr.ConflictError
	if err := ReadyToSign(partial); !errors.As(err, &ce) || !strings.Contains(ce.Message, "net_price_currency") || !strings.Contains(ce.Message, "approved") {
		t.Fatalf("got %v", err)
	}
}

func TestCurrencies(t *testing.T) {
	for _, c := range []string{"USD", "EUR", "JPY", "GBP", "CHF", "XOF", "SLE", "VES"} {
		if !ValidCurrency(c) {
			t.Errorf("%s refused", c)
		}
	}
	for _, c := range []string{"usd", "US", "USDD", "XXX", "ABC", ""} {
		if ValidCurrency(c) {
			t.Errorf("%s accepted", c)
		}
	}
	if len(iso4217) < 150 {
		t.Fatalf("only %d codes", len(iso4217))
	}
}

func ptr(s string) *string { return &s }

// TestValidateStrings: CONTRACT §15 — every string of a deal refuses NUL, invalid UTF-8
// and control characters with invalid_string, before its own rule; a term's description
// is free text (tabs and newlines kept).
func TestValidateStrings(t *testing.T) {
	s := func(v string) *string { return &v }
	sku := func(k, v string) SkuInput {
		it := SkuInput{Code: s("c"), Name: s("n"), Quantity: s("1"), UnitPrice: s("2")}
		for name, p := range map[string]**string{"id": &it.ID, "code": &it.Code, "name": &it.Name, "quantity": &it.Quantity, "unit_price": &it.UnitPrice} {
			if name == k {
				*p = s(v)
			}
		}
		return it
	}
	term := func(k, v string) TermInput {
		it := TermInput{Name: s("n"), BillingFrequency: s("monthly")}
		for name, p := range map[string]**string{"id": &it.ID, "name": &it.Name, "description": &it.Description,
			"start_date": &it.StartDate, "end_date": &it.EndDate, "billing_frequency": &it.BillingFrequency} {
			if name == k {
				*p = s(v)
			}
		}
		return it
	}
	var cases []struct {
		name string
		in   Input
		want string
	}
	add := func(name string, in Input, want string) {
		cases = append(cases, struct {
			name string
			in   Input
			want string
		}{name, in, want})
	}
	for _, bad := range []string{"a\x00", "a\xff", "\xc0\x80", "a\nb", "a\tb", "\x1b[0m", "a\x7f", "a\u0085"} {
		add("customer.id "+bad, Input{Customer: bodyfields.Field[CustomerRef]{Set: true, Value: CustomerRef{ID: bad}}}, "customer.id:invalid_string")
		for param, f := range map[string]func(*Input) *bodyfields.Field[string]{
			"contract_activates_date":      func(in *Input) *bodyfields.Field[string] { return &in.ContractActivatesDate },
			"net_price":                    func(in *Input) *bodyfields.Field[string] { return &in.NetPrice },
			"net_price_currency":           func(in *Input) *bodyfields.Field[string] { return &in.NetPriceCurrency },
			"net_price_precision":          func(in *Input) *bodyfields.Field[string] { return &in.NetPricePrecision },
			"original_net_price":           func(in *Input) *bodyfields.Field[string] { return &in.OriginalNetPrice },
			"original_net_price_currency":  func(in *Input) *bodyfields.Field[string] { return &in.OriginalNetPriceCurrency },
			"original_net_price_precision": func(in *Input) *bodyfields.Field[string] { return &in.OriginalNetPricePrecision },
			"opportunity_id":               func(in *Input) *bodyfields.Field[string] { return &in.OpportunityID },
			"signed_contract_url":          func(in *Input) *bodyfields.Field[string] { return &in.SignedContractURL },
		} {
			var in Input
			*f(&in) = bodyfields.Field[string]{Set: true, Value: bad}
			add(param+" "+bad, in, param+":invalid_string")
		}
		for _, k := range []string{"id", "code", "name", "quantity", "unit_price"} {
			add("skus "+k+" "+bad, Input{Skus: bodyfields.Field[[]SkuInput]{Set: true, Value: []SkuInput{sku(k, bad)}}}, "skus[0]."+k+":invalid_string")
		}
		for _, k := range []string{"id", "name", "start_date", "end_date", "billing_frequency"} {
			add("terms "+k+" "+bad, Input{Terms: bodyfields.Field[[]TermInput]{Set: true, Value: []TermInput{term(k, bad)}}}, "terms[0]."+k+":invalid_string")
		}
		want := "terms[0].description:invalid_string"
		if bad == "a\nb" || bad == "a\tb" || bad == "\x1b[0m" || bad == "a\x7f" || bad == "a\u0085" {
			want = ""
		}
		add("terms description "+bad, Input{Terms: bodyfields.Field[[]TermInput]{Set: true, Value: []TermInput{term("description", bad)}}}, want)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := apperr.Summary(Validate(c.in, false)); got != c.want {
				t.Fatalf("faults %q, want %q", got, c.want)
			}
		})
	}
}
