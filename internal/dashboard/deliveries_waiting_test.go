package dashboard_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/revops/revops/internal/testkit/testdb"
)

// A delivery waiting in its lane (CONTRACT §26) shows "waiting behind" the event it waits
// for, linked to that event's page, on the Deliveries list and on its event's page; one
// that is not waiting shows nothing of the kind. The event's page shows its sequence, or
// says it has none. (The lane itself is the store's: the row is set here by hand.)
func TestDeliveriesShowWaitingBehind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "revops.db")
	s := newSiteOn(t, testdb.Open(t, path))
	u := s.newUser("Acme", "owner@acme.test")
	key, err := s.keys.Create(context.Background(), u.orgID, "sandbox", "secret")
	if err != nil {
		t.Fatal(err)
	}
	eps := s.newEndpoints(s.sandbox(u.orgID), []string{"*"}, []string{"account-created"})
	head, waiting := s.createAccount(key.Plain, "Globex"), s.createAccount(key.Plain, "Initech")
	held := s.deliveryTo(waiting, eps[0].ID)
	raw := testdb.Raw(t, "sqlite", path)
	if err := raw.Exec("UPDATE webhook_deliveries SET waiting_for = ?, sequence = 2 WHERE id = ?", head.ID, held.ID).Error; err != nil {
		t.Fatal(err)
	}
	// The head as an event written before sequences (whatever the store gave it).
	if err := raw.Exec("UPDATE events SET sequence = CASE WHEN id = ? THEN 2 END WHERE id IN (?, ?)", waiting.ID, waiting.ID, head.ID).Error; err != nil {
		t.Fatal(err)
	}
	c := s.client()
	c.mustLogin(u)
	link := `waiting behind <a href="/dashboard/deliveries/` + head.ID + `" class="mono">` + head.ID + `</a>`

	list := c.get("/dashboard/deliveries").body
	row := func(id string) string {
		i := strings.Index(list, `data-event-id="`+id+`"`)
		if i < 0 {
			t.Fatalf("event %s is not listed: %.3000s", id, list)
		}
		return list[i : i+strings.Index(list[i:], "</tr>")]
	}
	if r := row(waiting.ID); !strings.Contains(r, "Billing <span class=\"state state-pending\">pending</span> <small class=\"waiting-for\">"+link) ||
		strings.Count(r, "waiting behind") != 1 {
		t.Fatalf("the waiting event's row: %s", r)
	}
	if r := row(head.ID); strings.Contains(r, "waiting behind") {
		t.Fatalf("the head's row says it waits: %s", r)
	}

	page := c.get("/dashboard/deliveries/" + waiting.ID).body
	if !strings.Contains(page, link) || strings.Count(page, "waiting behind") != 1 || !strings.Contains(page, `<dd id="event-sequence">2</dd>`) {
		t.Fatalf("the waiting event's page: %.6000s", page)
	}
	page = c.get("/dashboard/deliveries/" + head.ID).body
	if strings.Contains(page, "waiting behind") || !strings.Contains(page, `<dd id="event-sequence">none (written before event sequences)</dd>`) {
		t.Fatalf("the head's page: %.6000s", page)
	}
}
