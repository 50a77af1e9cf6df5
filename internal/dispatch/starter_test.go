package dispatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/revops/revops/models"
)

type away struct{}

func (away) Reachable() bool { return false }

// While the health monitor says Temporal is away, nothing waits on it: Dispatch leaves
// new and replayed events to the sweeper, without a call to Temporal or a read of their
// deliveries.
func TestStarterDoesNotWaitForAnAbsentTemporal(t *testing.T) {
	c, st := &recordingClient{}, &recordingStore{}
	s := &Starter{Health: away{}, Client: c, Store: st}
	replayed := time.Now()
	// One batch each, so that neither is passed over for the other.
	for _, e := range []models.Event{{ID: "e1", Fanout: &models.Fanout{}}, {ID: "e2", RedispatchAt: &replayed}} {
		s.Dispatch(context.Background(), []models.Event{e})
	}
	if len(c.calls) > 0 || len(st.calls) > 0 {
		t.Fatalf("with Temporal away, Dispatch called Temporal %v and read the store %v; want neither (the sweeper starts them)", c.calls, st.calls)
	}
}

// recordingClient is a Temporal that is away: it records the starts asked of it and
// refuses them. Any other call panics (its Client is nil).
type recordingClient struct {
	client.Client
	calls []string
}

func (c *recordingClient) ExecuteWorkflow(_ context.Context, o client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	c.calls = append(c.calls, "ExecuteWorkflow "+o.ID)
	return nil, errors.New("temporal away")
}

func (c *recordingClient) SignalWithStartWorkflow(_ context.Context, id, _ string, _ any, _ client.StartWorkflowOptions, _ any, _ ...any) (client.WorkflowRun, error) {
	c.calls = append(c.calls, "SignalWithStartWorkflow "+id)
	return nil, errors.New("temporal away")
}

// recordingStore records the reads a start makes before it calls Temporal.
type recordingStore struct {
	StarterStore
	calls []string
}

func (s *recordingStore) EventDeliveries(_ context.Context, _ models.Env, eventID string) ([]models.WebhookDelivery, error) {
	s.calls = append(s.calls, "EventDeliveries "+eventID)
	return nil, errors.New("not read in this test")
}

// A run's summary names its endpoints by host only (CONTRACT §10: no URL path, query or
// user information, which may hold tokens, enters Temporal).
func TestDestinations(t *testing.T) {
	ep := func(url, method string, enabled bool) models.Destination {
		return models.Destination{URL: url, Method: method, Enabled: enabled}
	}
	tests := []struct {
		name string
		eps  []models.Destination
		want string
	}{
		{"none", nil, "no endpoint"},
		{"one, host only", []models.Destination{ep("https://u:p@a.example/x?token=s", "POST", true)}, "a.example"},
		{"GET and disabled", []models.Destination{ep("https://a.example/x", "GET", true), ep("https://b.example:8443/", "POST", false)},
			"GET a.example, b.example:8443 (disabled)"},
		{"more than three", []models.Destination{ep("https://a.example", "POST", true), ep("https://b.example", "POST", true),
			ep("https://c.example", "POST", true), ep("https://d.example", "POST", true), ep("https://e.example", "POST", true)},
			"a.example, b.example, c.example, +2 more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := destinations(tt.eps); got != tt.want {
				t.Errorf("destinations = %q, want %q", got, tt.want)
			}
		})
	}
}

// The input carries the event's pending deliveries — ids and the policy copies, nothing
// of the endpoint — so that the run schedules them in its first workflow task; the ones
// a run already took (retrying, delivered, failed, skipped) stay out.
func TestInputCarriesPendingDeliveries(t *testing.T) {
	p := models.RetryPolicy{InitialIntervalMS: 1000, BackoffCoefficient: 1, MaximumIntervalMS: 1000, MaximumAttempts: 3}
	d := func(id, status string) models.WebhookDelivery {
		return models.WebhookDelivery{ID: id, EndpointID: "ep-" + id, Status: status, RetryPolicy: p}
	}
	tests := []struct {
		name string
		ds   []models.WebhookDelivery
		want []string
	}{
		{"unread: the run asks", nil, nil},
		{"all pending", []models.WebhookDelivery{d("a", models.EventPending), d("b", models.EventPending)}, []string{"a", "b"}},
		{"replayed one among finished ones", []models.WebhookDelivery{d("a", models.EventDelivered), d("b", models.EventPending),
			d("c", models.EventRetrying), d("d", models.EventFailed), d("e", models.EventSkipped)}, []string{"b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := (&Starter{}).input(models.Event{ID: "ev"}, tt.ds, nil)
			if len(in.Deliveries) != len(tt.want) {
				t.Fatalf("deliveries %+v, want ids %v", in.Deliveries, tt.want)
			}
			for i, got := range in.Deliveries {
				if got.ID != tt.want[i] || got.EndpointID != "ep-"+tt.want[i] || got.Policy != p {
					t.Errorf("delivery %d = %+v, want %s with its endpoint and policy", i, got, tt.want[i])
				}
			}
		})
	}
}
