package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/revops/revops/internal/platform/apperr"
	"github.com/revops/revops/models"
)

func init() {
	// One manual test at a time per endpoint, across replicas (CONTRACT §17): the claim of
	// the test under way, and until when it holds if its process dies mid-send.
	register(migration{version: 82, name: "webhook_endpoint_test_claim", sql: `
ALTER TABLE webhook_endpoints ADD COLUMN test_claim TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_endpoints ADD COLUMN test_claimed_until {{ts}}`})
}

// ErrTestInProgress refuses a manual test of an endpoint while another one is being
// sent to it, from any replica. It comes wrapped in an *apperr.ConflictError with
// CodeTestInProgress.
var ErrTestInProgress = errors.New("a test send to this endpoint is in progress")

// CodeTestInProgress is the error code of ErrTestInProgress.
const CodeTestInProgress = "test_in_progress"

// testClaim is an endpoint's test claim columns.
type testClaim struct {
	TestClaim        string
	TestClaimedUntil *time.Time
}

// ClaimEndpointTest claims the endpoint's manual test for one send, until now+lease (the
// attempt's timeout and a margin, so that a process that dies mid-send frees it soon
// after), and returns the endpoint and the claim's token for ReleaseEndpointTest. While
// another claim holds, the answer is ErrTestInProgress; ErrNotFound for an endpoint of
// another environment. The claim is a conditional update on the claim as read, so two
// requests on any replicas never both hold it; its age is judged here, in Go (SQLite
// compares times as text).
func (s *Store) ClaimEndpointTest(ctx context.Context, env Env, id string, now time.Time, lease time.Duration) (models.WebhookEndpoint, string, error) {
	var cur testClaim
	if err := s.in(ctx, env).Model(&models.WebhookEndpoint{}).Select("test_claim, test_claimed_until").
		Where("id = ?", id).Take(&cur).Error; err != nil {
		return models.WebhookEndpoint{}, "", notFound(err, "webhook endpoint "+id)
	}
	busy := apperr.ConflictOn(ErrTestInProgress, CodeTestInProgress,
		"A test is already being sent to webhook endpoint %s; send another once it has answered.", id)
	if cur.TestClaim != "" && cur.TestClaimedUntil != nil && now.Before(*cur.TestClaimedUntil) {
		return models.WebhookEndpoint{}, "", busy
	}
	token := rand.Text()
	res := s.in(ctx, env).Model(&models.WebhookEndpoint{}).Where("id = ? AND test_claim = ?", id, cur.TestClaim).
		UpdateColumns(map[string]any{"test_claim": token, "test_claimed_until": now.Add(lease).UTC()})
	if res.Error != nil {
		return models.WebhookEndpoint{}, "", fmt.Errorf("claim test of webhook endpoint %s: %w", id, res.Error)
	}
	if res.RowsAffected != 1 {
		return models.WebhookEndpoint{}, "", busy // another request claimed it since (or it was deleted)
	}
	ep, err := s.WebhookEndpointByID(ctx, env, id)
	if err != nil {
		return ep, "", errors.Join(err, s.ReleaseEndpointTest(context.WithoutCancel(ctx), env, id, token))
	}
	return ep, token, nil
}

// ReleaseEndpointTest ends the test claim token, once its send has answered; a claim
// taken over since (it had lapsed) is left alone.
func (s *Store) ReleaseEndpointTest(ctx context.Context, env Env, id, token string) error {
	err := s.in(ctx, env).Model(&models.WebhookEndpoint{}).Where("id = ? AND test_claim = ?", id, token).
		UpdateColumns(map[string]any{"test_claim": "", "test_claimed_until": nil}).Error
	if err != nil {
		return fmt.Errorf("release test of webhook endpoint %s: %w", id, err)
	}
	return nil
}
