package dashboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/revops/revops/internal/platform/signing"
)

// The endpoint form's filter (CONTRACT §25) in Chromium: "Test filter" evaluates what is
// typed on the sample of the chosen type — match, no match, or the fault with its JSON
// Pointer — without saving; saving stores the filter, the edit form shows it, and an
// empty textarea removes it.
func TestBrowserEndpointFilter(t *testing.T) {
	rcv, s, u, env := newOwnerSite(t, "Acme Corp")
	ctx := newBrowser(t)
	base := s.srv.URL
	browserLogin(t, ctx, base, u)

	testFilter := func(step, filter, sampleType string) string {
		t.Helper()
		// The answer comes on a new page: drop the last one's first, so that waiting for
		// a result waits for that page.
		value(t, ctx, step+": clear the last result", chromedp.Evaluate[bool](`(() => { document.querySelector('#filter-result')?.remove(); return true })()`))
		run(t, ctx, step,
			chromedp.SetValue(css(`#endpoint-filter`), filter),
			chromedp.SetValue(css(`#filter-type`), sampleType),
			chromedp.Click(css(`#test-filter`)),
			chromedp.WaitVisible(css(`#filter-result`)),
		)
		return value(t, ctx, step+": read the result", chromedp.Text(css(`#filter-result`)))
	}
	run(t, ctx, "open the add form",
		chromedp.Navigate(base+"/dashboard/webhooks/new"),
		chromedp.WaitVisible(css(`#endpoint-url`)),
		chromedp.SetValue(css(`#endpoint-url`), rcv.srv.URL+"/big-deals"),
	)
	big := `{"deal.net_price": {"$gte": "1000"}}`
	for _, tc := range []struct{ step, filter, sampleType, want string }{
		{"a big deal matches", big, "deal-signed", "MATCH the deal-signed sample would be delivered"},
		{"a higher bound does not", `{"deal.net_price": {"$gte": 20000}}`, "deal-signed", "NO MATCH"},
		{"an account has no deal", big, "account-created", "NO MATCH"},
		{"a fault names its pointer", `{"deal.status": {"$in": "signed"}}`, "deal-signed", "FAULT filter/deal.status/$in"},
		{"text that is not JSON", `{"deal.status": `, "deal-signed", "FAULT filter must be a JSON object"},
	} {
		if got := testFilter(tc.step, tc.filter, tc.sampleType); !strings.Contains(got, tc.want) {
			t.Fatalf("%s: result %q, want %q", tc.step, got, tc.want)
		}
	}
	if got := value(t, ctx, "the filter stays as typed", chromedp.Value(css(`#endpoint-filter`))); got != `{"deal.status": ` {
		t.Fatalf("textarea after the test: %q", got)
	}
	if eps := s.endpoints(env); len(eps) != 0 {
		t.Fatalf("testing a filter saved endpoints: %+v", eps)
	}
	// Signed with ed25519, chosen in the form (CONTRACT §25): its page shows the public key.
	run(t, ctx, "save with the filter",
		chromedp.SetValue(css(`#endpoint-filter`), big),
		chromedp.SetValue(css(`#endpoint-signing`), signing.SchemeEd25519),
		chromedp.Click(css(`#save-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
		chromedp.WaitVisible(css(`#webhook-public-key`)),
		screenshot("endpoint-filter"),
	)
	eps := s.endpoints(env)
	if len(eps) != 1 {
		t.Fatalf("%d endpoints after saving", len(eps))
	}
	if eps[0].Filter != `{"deal.net_price":{"$gte":"1000"}}` || signing.Scheme(eps[0].Secret) != signing.SchemeEd25519 {
		t.Fatalf("after saving: filter %q, scheme %s", eps[0].Filter, signing.Scheme(eps[0].Secret))
	}
	if public, _ := signing.PublicKey(eps[0].Secret); value(t, ctx, "the public key shown", chromedp.Value(css(`#webhook-public-key`))) != public {
		t.Fatal("the page does not show the endpoint's public key")
	}
	shown := value(t, ctx, "the edit form shows the filter", chromedp.Value(css(`#endpoint-filter`)))
	if !strings.Contains(shown, `"deal.net_price": {`) || !strings.Contains(shown, "\n") {
		t.Fatalf("edit form filter %q, want it indented", shown)
	}
	// An event the filter rejects lists the endpoint as filtered out on its page.
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	ev := s.createAccount(key.Plain, "Globex")
	run(t, ctx, "the event shows the endpoint filtered out",
		chromedp.Navigate(base+"/dashboard/deliveries/"+ev.ID),
		chromedp.WaitVisible(css(`#filtered-endpoints li[data-endpoint-id="`+eps[0].ID+`"]`)),
		chromedp.Navigate(base+"/dashboard/webhooks/"+eps[0].ID),
		chromedp.WaitVisible(css(`#endpoint-filter`)),
	)
	// The saved page shows a notice already: drop it, so that waiting for one waits for
	// the next page.
	value(t, ctx, "empty the filter", chromedp.Evaluate[bool](`(() => { document.querySelector('#endpoint-filter').value = '';
		document.querySelector('.notice')?.remove(); return true })()`))
	run(t, ctx, "save without a filter",
		chromedp.Click(css(`#save-endpoint`)),
		chromedp.WaitVisible(css(`.notice`)),
	)
	if ep := s.endpoints(env)[0]; ep.Filter != "" {
		t.Fatalf("filter after emptying the field: %q", ep.Filter)
	}
}
