package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/models"
)

// An event every endpoint's filter rejected (CONTRACT §25) is skipped, and its page does
// not promise that a replay reaches the endpoints subscribed now: a replay never
// re-evaluates a filter, so those endpoints stay left out.
func TestFilteredEventPageSaysWhatAReplayDoes(t *testing.T) {
	s := newSite(t)
	u := s.newUser("Acme", "owner@acme.test")
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	ep, err := webhook.CreateEndpoint(context.Background(), s.store, s.sandbox(u.orgID), models.WebhookEndpoint{
		URL: "https://hooks1.example/revops", Method: "POST", EventTypes: []string{"*"}, Enabled: true, Secret: "whsec_x",
		Filter: `{"account.name":"Initech"}`}, time.Now().UTC(), idempotency.Reply[webhook.EndpointObject]{})
	if err != nil {
		t.Fatal(err)
	}
	e := s.createAccount(key.Plain, "Globex")
	c := s.client()
	c.mustLogin(u)
	page := c.get("/dashboard/deliveries/" + e.ID).body
	if !strings.Contains(page, `data-endpoint-id="`+ep.ID+`"`) {
		t.Fatalf("the page does not list the filtered endpoint: %.3000s", page)
	}
	if strings.Contains(page, "Replaying it sends it to the endpoints subscribed now") ||
		!strings.Contains(page, "Replaying it leaves out the endpoints whose filter rejected it") {
		t.Errorf("the page misstates what a replay of a filtered event does: %.3000s", page)
	}
}
