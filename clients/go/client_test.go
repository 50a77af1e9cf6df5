package revops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestNewClientReadsTheEnvironment(t *testing.T) {
	t.Setenv("REVOPS_API_KEY", "sk_sandbox_env")
	t.Setenv("REVOPS_BASE_URL", "http://127.0.0.1:1/")
	c, err := NewClient()
	if err != nil {
		t.Fatal(err)
	}
	if c.key != "sk_sandbox_env" || c.baseURL != "http://127.0.0.1:1" {
		t.Fatalf("key %q, base URL %q", c.key, c.baseURL)
	}
	t.Setenv("REVOPS_API_KEY", "")
	if _, err := NewClient(); err == nil || !strings.Contains(err.Error(), "REVOPS_API_KEY") {
		t.Fatalf("no key: %v", err)
	}
	if _, err := NewClient(WithAPIKey("k"), WithBaseURL("127.0.0.1:8080")); err == nil {
		t.Fatal("a base URL without a scheme was accepted")
	}
}

func TestRequestHeadersAndDecoding(t *testing.T) {
	rec, c := newRecorder(t, status(201, accountJSON))
	a, err := c.CreateAccount(context.Background(), &AccountCreate{Name: "Acme", ExternalID: Value("ext-1")})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "a1" || a.Status != AccountStatusDraft || a.ExternalID != nil || a.CreatedAt.IsZero() {
		t.Fatalf("decoded %+v", a)
	}
	r := rec.requests()[0]
	if r.Method != "POST" || r.URL.Path != "/v1/accounts" {
		t.Fatalf("sent %s %s", r.Method, r.URL.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer sk_sandbox_test" {
		t.Errorf("Authorization %q", got)
	}
	if got := r.Header.Get("User-Agent"); got != "revops-go/"+Version {
		t.Errorf("User-Agent %q", got)
	}
	if r.Header.Get("Content-Type") != "application/json" || len(r.Header.Get("Idempotency-Key")) != 36 {
		t.Errorf("Content-Type %q, Idempotency-Key %q", r.Header.Get("Content-Type"), r.Header.Get("Idempotency-Key"))
	}
	// Optional fields left nil are not sent; given ones are.
	if body := rec.bodies[0]; body != `{"external_id":"ext-1","name":"Acme"}` {
		t.Errorf("body %s", body)
	}
}

func TestQueryParametersOnlyWhenSet(t *testing.T) {
	rec, c := newRecorder(t, status(200, `{"object":"list","data":[],"has_more":false}`), status(200, `{"object":"list","data":[],"has_more":false}`))
	if _, err := c.ListDeals(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListDeals(context.Background(), &ListDealsParams{Limit: 5, Status: DealStatusActive}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if reqs[0].URL.RawQuery != "" || reqs[1].URL.RawQuery != "limit=5&status=active" {
		t.Fatalf("queries %q, %q", reqs[0].URL.RawQuery, reqs[1].URL.RawQuery)
	}
	if reqs[0].Header.Get("Idempotency-Key") != "" {
		t.Error("a GET sent an Idempotency-Key")
	}
}

func TestBadArgumentsAreErrorsNotRequests(t *testing.T) {
	_, c := newRecorder(t) // any request fails the test
	ctx := context.Background()
	checks := map[string]error{}
	_, checks["empty id"] = c.GetDeal(ctx, "")
	_, checks["nil body"] = c.CreateAccount(ctx, nil)
	_, checks["nil required params"] = c.UsageSummary(ctx, nil)
	for _, err := range c.MeterValuesAll(ctx, "m", nil) {
		checks["iterator without params"] = err
	}
	for name, err := range checks {
		if !errors.Is(err, ErrMissingArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var nilClient *Client
	if _, err := nilClient.WhoAmI(ctx); err == nil {
		t.Error("a nil client did not fail")
	}
}

func TestErrorsCarryTheEnvelope(t *testing.T) {
	_, c := newRecorder(t,
		status(400, `{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"bad","param":"name","request_id":"req_1","errors":[{"param":"name","code":"parameter_invalid","message":"bad"}]}}`),
		func(w http.ResponseWriter, r *http.Request) { // a proxy's page: no envelope
			w.Header().Set("X-Request-Id", "req_proxy")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte("<html>sk_sandbox_test</html>"))
		},
	)
	_, err := c.CreateAccount(context.Background(), &AccountCreate{})
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("not an *Error: %v", err)
	}
	if apiErr.Status != 400 || apiErr.Type != ErrorTypeInvalidRequestError || apiErr.Code != "parameter_invalid" ||
		apiErr.Param != "name" || apiErr.RequestID != "req_1" || len(apiErr.Errors) != 1 || apiErr.Errors[0].Code != FaultCodeParameterInvalid {
		t.Fatalf("decoded %+v", apiErr)
	}
	_, err = c.WhoAmI(context.Background())
	if !errors.As(err, &apiErr) || apiErr.Status != 403 || apiErr.RequestID != "req_proxy" || apiErr.Message != "Forbidden" {
		t.Fatalf("proxy error %+v", err)
	}
	if strings.Contains(err.Error(), "sk_sandbox_test") {
		t.Fatalf("the error shows the key: %v", err)
	}
}

// A client or verifier printed with any verb (logged inside a struct, say) shows
// neither the API key nor the signing secret.
func TestFormattingShowsNoSecret(t *testing.T) {
	const key = "sk_sandbox_0123456789abcdef"
	c, err := NewClient(WithAPIKey(key), WithBaseURL("http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWebhooks(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	holder := struct {
		C *Client
		W *Webhooks
	}{c, w}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, holder)
		if strings.Contains(out, "0123456789abcdef") || strings.Contains(out, strings.TrimPrefix(newSecret, "whsec_")) {
			t.Errorf("%s shows a secret: %s", verb, out)
		}
		// The decoded secret, as %v prints a []byte: "[115 101 99 …".
		if bytesText := strings.Trim(fmt.Sprint(w.key[:4]), "[]"); strings.Contains(out, bytesText) {
			t.Errorf("%s shows the secret's bytes: %s", verb, out)
		}
	}
	if !strings.Contains(fmt.Sprint(c), "sk_sandbox_") {
		t.Errorf("the client should still say which kind of key it holds: %v", c)
	}
}

func TestUpdateSendsNullToClearAndLeavesUnsetOut(t *testing.T) {
	rec, c := newRecorder(t, status(200, accountJSON), status(200, dealJSON("d1")))
	ctx := context.Background()
	if _, err := c.UpdateAccount(ctx, "a1", &AccountUpdate{BillingEmail: Null[string](), Domain: Value("example.com")}); err != nil {
		t.Fatal(err)
	}
	// Null is sent as null; ExternalID, Name and Properties, unset, are not sent at all.
	if body := rec.bodies[0]; body != `{"billing_email":null,"domain":"example.com"}` {
		t.Errorf("body %s", body)
	}
	if _, err := c.UpdateDeal(ctx, "d1", &DealUpdate{NetPrice: Null[string](), NetPricePrecision: Null[Precision](), OpportunityID: Value("")}); err != nil {
		t.Fatal(err)
	}
	if r := rec.requests()[1]; r.Method != "PATCH" || r.URL.Path != "/v1/deals/d1" {
		t.Errorf("sent %s %s", r.Method, r.URL.Path)
	}
	if body := rec.bodies[1]; body != `{"net_price":null,"net_price_precision":null,"opportunity_id":""}` {
		t.Errorf("body %s", body)
	}
}
