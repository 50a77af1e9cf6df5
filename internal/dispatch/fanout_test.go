package dispatch

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/webhook"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
	"github.com/revops/revops/workflows/wire"
)

// countingStore is the real store, counting the reads a start of an event read from the
// database makes.
type countingStore struct {
	*store.Store
	deliveries, endpoints atomic.Int32
}

func (c *countingStore) EventDeliveries(ctx context.Context, env models.Env, eventID string) ([]models.WebhookDelivery, error) {
	c.deliveries.Add(1)
	return c.Store.EventDeliveries(ctx, env, eventID)
}

func (c *countingStore) AllWebhookEndpoints(ctx context.Context, env models.Env) ([]models.WebhookEndpoint, error) {
	c.endpoints.Add(1)
	return c.Store.AllWebhookEndpoints(ctx, env)
}

// reads is how many deliveries and endpoints reads the store has served, and resets them.
func (c *countingStore) reads() [2]int32 {
	return [2]int32{c.deliveries.Swap(0), c.endpoints.Swap(0)}
}

// fanoutChange writes, on a real PostgreSQL, an environment's endpoints — five enabled
// that take account-created (one with GET; four of them take every type), one enabled
// that does not, one disabled — and one change with two events, and returns the events
// as the change returns them.
func fanoutChange(t *testing.T) (*store.Store, []models.Event) {
	t.Helper()
	ctx := context.Background()
	st := testdb.New(t)
	env := testdb.Seed(t, st, models.EnvLive)
	start := time.Now().UTC()
	for i, ep := range []models.WebhookEndpoint{
		{URL: "https://a.example/h?token=t", Method: "POST", Enabled: true},
		{URL: "https://b.example/h", Method: "GET", EventTypes: []string{"account-created"}, Enabled: true},
		{URL: "https://c.example/h", Method: "POST", Enabled: true},
		{URL: "https://d.example/h", Method: "POST", Enabled: true},
		{URL: "https://e.example/h", Method: "POST", Enabled: true},
		{URL: "https://deals.example/h", Method: "POST", EventTypes: []string{"deal-signed"}, Enabled: true},
		{URL: "https://off.example/h", Method: "POST", Enabled: false},
	} {
		ep.Secret = "whsec_" + uuid.NewString()
		if _, err := webhook.CreateEndpoint(ctx, st, env, ep, start.Add(time.Duration(i)*time.Millisecond), idempotency.Reply[webhook.EndpointObject]{}); err != nil {
			t.Fatal(err)
		}
	}
	events, err := st.InTx(ctx, env, func(tx *store.Tx) error {
		a := models.Account{ID: uuid.NewString(), Name: "Globex", Status: "draft", Properties: "{}"}
		if err := tx.InsertAccount(&a); err != nil {
			return err
		}
		tx.Emit(store.Emit{Type: "account-created", ObjectType: "account", ObjectID: a.ID, Object: a},
			store.Emit{Type: "account-updated", ObjectType: "account", ObjectID: a.ID, Object: a})
		return nil
	})
	if err != nil || len(events) != 2 {
		t.Fatalf("create account: %v %v", events, err)
	}
	return st, events
}

// A fresh event's start is built from what its change's transaction wrote, without a
// read, and sends Temporal exactly what a start of the same event read from the database
// (the sweeper's) sends: the same options (search attributes, summary, details) and the
// same input, byte for byte.
func TestFreshStartSendsWhatTheDatabaseReadSends(t *testing.T) {
	st, events := fanoutChange(t)
	counting := &countingStore{Store: st}
	s := &Starter{Store: counting, RetryInterval: time.Minute}
	ctx := context.Background()
	endpointIDs := temporal.NewSearchAttributeKeyKeywordList(wire.AttrEndpointIDs)
	for i, want := range []int{5, 4} {
		fresh := events[i]
		t.Run(fresh.Type, func(t *testing.T) {
			memOpts, memIn := s.startRequest(ctx, fresh)
			if got := counting.reads(); got != [2]int32{0, 0} {
				t.Fatalf("fresh event's start read deliveries/endpoints %v times", got)
			}
			stored, _, err := st.EventByID(ctx, fresh.ID)
			if err != nil || stored.Fanout != nil {
				t.Fatalf("event read back: %+v %v", stored, err)
			}
			dbOpts, dbIn := s.startRequest(ctx, stored)
			if got := counting.reads(); got != [2]int32{1, 1} {
				t.Fatalf("start of the event read from the database read deliveries/endpoints %v times, want once each", got)
			}

			ids, _ := dbOpts.TypedSearchAttributes.GetKeywordList(endpointIDs)
			if len(ids) != want || len(dbIn.Deliveries) != want || strings.Contains(dbOpts.StaticSummary, "no endpoint") {
				t.Fatalf("read path: %d endpoint ids, %d deliveries, summary %q; want %d", len(ids), len(dbIn.Deliveries), dbOpts.StaticSummary, want)
			}
			if !reflect.DeepEqual(memOpts, dbOpts) {
				t.Errorf("options from the fanout\n%+v\nfrom the database\n%+v", memOpts, dbOpts)
			}
			memIDs, _ := memOpts.TypedSearchAttributes.GetKeywordList(endpointIDs)
			if !slices.Equal(memIDs, ids) {
				t.Errorf("endpoint ids from the fanout %v, from the database %v", memIDs, ids)
			}
			memPayload, err := converter.GetDefaultDataConverter().ToPayload(memIn)
			if err != nil {
				t.Fatal(err)
			}
			dbPayload, _ := converter.GetDefaultDataConverter().ToPayload(dbIn)
			if string(memPayload.GetData()) != string(dbPayload.GetData()) {
				t.Errorf("input from the fanout %s\nfrom the database %s", memPayload.GetData(), dbPayload.GetData())
			}
		})
	}
}

// Start itself reads nothing for a fresh event, and reads as before for an event read
// from the database. The client is a real one whose server is absent (nothing listens on
// port 1): every start fails after the reads it would make, and nothing is marked.
func TestFreshStartMakesNoRead(t *testing.T) {
	st, events := fanoutChange(t)
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: discardLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	counting := &countingStore{Store: st}
	s := &Starter{Client: c, Store: counting, StartTimeout: 200 * time.Millisecond}
	ctx := context.Background()

	if err := s.Start(ctx, events[0]); err == nil {
		t.Fatal("start without a Temporal server succeeded")
	}
	if got := counting.reads(); got != [2]int32{0, 0} {
		t.Fatalf("Start of a fresh event read deliveries/endpoints %v times, want none", got)
	}
	stored, _, err := st.EventByID(ctx, events[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, stored); err == nil {
		t.Fatal("start without a Temporal server succeeded")
	}
	if got := counting.reads(); got != [2]int32{1, 1} {
		t.Fatalf("Start of an event read from the database read deliveries/endpoints %v times, want once each", got)
	}
}

// discardLogger keeps the SDK's connection errors out of the test output.
type discardLogger struct{}

func (discardLogger) Debug(string, ...any) {}
func (discardLogger) Info(string, ...any)  {}
func (discardLogger) Warn(string, ...any)  {}
func (discardLogger) Error(string, ...any) {}
