package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/revops/revops/internal/apperr"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

type away struct{}

func (away) Reachable() bool { return false }

// While the health monitor says Temporal is away, nothing waits on it: Dispatch leaves
// the events to the sweeper and Replay answers 503 replay_unavailable at once. The
// starter has no client here: any call to Temporal would panic.
func TestStarterDoesNotWaitForAnAbsentTemporal(t *testing.T) {
	s := &Starter{Health: away{}}
	s.Dispatch(context.Background(), []models.Event{{ID: "e1"}, {ID: "e2"}})
	err := s.Replay(context.Background(), models.Event{ID: "e1"})
	var rerr *apperr.RequestError
	if !errors.As(err, &rerr) || rerr.Status != http.StatusServiceUnavailable || rerr.Code != "replay_unavailable" {
		t.Fatalf("replay while Temporal is away: %v, want 503 replay_unavailable", err)
	}
}

// noEndpoint is a StarterStore whose environment has no endpoint; nothing is marked.
type noEndpoint struct{ StarterStore }

func (noEndpoint) WebhookEndpoint(context.Context, store.Env) (models.WebhookEndpoint, error) {
	return models.WebhookEndpoint{}, apperr.ErrNotFound
}

// Before the monitor has noticed, a replay tries, and a Temporal that does not answer
// within the start timeout gives the same 503, not a 500.
func TestReplayWithoutAnswerIs503(t *testing.T) {
	c, err := client.NewLazyClient(client.Options{HostPort: "127.0.0.1:1", Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := &Starter{Client: c, Store: noEndpoint{}, StartTimeout: 300 * time.Millisecond}
	err = s.Replay(context.Background(), models.Event{ID: "e1"})
	var rerr *apperr.RequestError
	if !errors.As(err, &rerr) || rerr.Status != http.StatusServiceUnavailable {
		t.Fatalf("replay with Temporal not answering: %v, want 503", err)
	}
}

// A start that failed because Temporal did not answer is told from one Temporal refused.
func TestIsUnreachable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"unavailable", serviceerror.NewUnavailable("connection refused"), true},
		{"wrapped unavailable", fmt.Errorf("failed reaching server: %w", serviceerror.NewUnavailable("x")), true},
		{"grpc unavailable", status.Error(codes.Unavailable, "x"), true},
		{"deadline", fmt.Errorf("start: %w", context.DeadlineExceeded), true},
		{"grpc deadline", status.Error(codes.DeadlineExceeded, "x"), true},
		{"already started", serviceerror.NewWorkflowExecutionAlreadyStarted("x", "", ""), false},
		{"invalid argument", serviceerror.NewInvalidArgument("bad search attribute"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isUnreachable(tt.err); got != tt.want {
				t.Errorf("isUnreachable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
