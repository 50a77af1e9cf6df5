package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/revops/revops/internal/platform/signing"
	"github.com/revops/revops/models"
)

// Secrets at rest (CONTRACT §17): a kept answer never holds a signing secret. An ed25519
// endpoint's answers show its public key only (CONTRACT §25) and are kept as they are;
// its private key is refused anywhere in them, as a secret is. An answer
// that shows one (an endpoint's create, a secret's rotation, the first PUT of the
// singular endpoint) is kept with a placeholder in its "secret" member and the id of its
// endpoint; a replay fills in the endpoint's current secret.

func init() {
	// The column that names the endpoint, and the answers of the endpoint routes kept
	// before it: those whose secret is still the endpoint's (current or previous) point to
	// it instead; any other one (its secret rotated away twice, its endpoint deleted) is
	// dropped, so that the table holds no secret (a retry with such a key runs again).
	// Other routes' answers may show a client's own "secret" member (account properties)
	// and are left alone.
	register(migration{version: 83, name: "idempotency_keys_no_secrets", sql: `
ALTER TABLE idempotency_keys ADD COLUMN secret_endpoint_id TEXT;
UPDATE idempotency_keys SET secret_endpoint_id = (
	SELECT w.id FROM webhook_endpoints w
	WHERE w.environment_id = idempotency_keys.environment_id
	AND (idempotency_keys.response LIKE '%"secret":"' || w.secret || '"%'
		OR (w.previous_secret <> '' AND idempotency_keys.response LIKE '%"secret":"' || w.previous_secret || '"%'))
	ORDER BY w.id LIMIT 1)
WHERE path LIKE '/v1/webhook_endpoint%' AND response LIKE '%"secret":"whsec%';
UPDATE idempotency_keys SET response = (
	SELECT replace(replace(idempotency_keys.response,
		'"secret":"' || w.secret || '"', '"secret":"<redacted>"'),
		'"secret":"' || w.previous_secret || '"', '"secret":"<redacted>"')
	FROM webhook_endpoints w WHERE w.id = idempotency_keys.secret_endpoint_id)
WHERE secret_endpoint_id IS NOT NULL;
DELETE FROM idempotency_keys WHERE path LIKE '/v1/webhook_endpoint%' AND response LIKE '%"secret":"whsec%'`})
}

// secretMember is the member an answer shows a signing secret in; in a JSON text, `"`
// inside a string is always escaped, so these bytes can only be the member itself.
const secretMember = `"secret":`

// secretPlaceholder stands in a kept answer for the secret its replays show.
const secretPlaceholder = `"<redacted>"`

// errKeptSecret refuses to keep an answer that would hold its endpoint's signing secret
// outside the secret member.
var errKeptSecret = errors.New("an idempotent answer would keep a signing secret")

// kept is an answer as the idempotency table keeps it.
type kept struct {
	body             []byte
	secretEndpointID *string // the endpoint whose current secret a replay shows
}

// withoutSecret is body as kept: when it shows secret (the signing secret of endpoint
// endpointID) in its secret member, with the placeholder there instead and the endpoint
// named. A secret anywhere else is refused.
func withoutSecret(body []byte, endpointID, secret string) (kept, error) {
	if secret == "" {
		return kept{body: body}, nil
	}
	if !strings.HasPrefix(secret, signing.SecretPrefix) {
		// An ed25519 private key is never shown, so never replayed either: no
		// placeholder stands for it, and an answer holding it is refused.
		if bytes.Contains(body, []byte(secret)) || bytes.Contains(body, []byte(keyMaterial(secret))) {
			return kept{}, errKeptSecret
		}
		return kept{body: body}, nil
	}
	value, err := json.Marshal(secret)
	if err != nil {
		return kept{}, fmt.Errorf("encode secret: %w", err)
	}
	k := kept{body: body}
	if member := append([]byte(secretMember), value...); bytes.Contains(body, member) {
		k = kept{body: bytes.ReplaceAll(body, member, []byte(secretMember+secretPlaceholder)), secretEndpointID: &endpointID}
	}
	if bytes.Contains(k.body, []byte(secret)) || bytes.Contains(k.body, []byte(keyMaterial(secret))) {
		return kept{}, errKeptSecret
	}
	return k, nil
}

// keyMaterial is a key without its prefix ("whsec_", "whsk_"): the base64 of the secret
// or of an ed25519 seed (CONTRACT §25), which must not be kept either.
func keyMaterial(key string) string {
	if _, rest, ok := strings.Cut(key, "_"); ok && rest != "" {
		return rest
	}
	return key
}

// withCurrentSecret is a kept answer as replayed: the placeholder replaced by the
// current secret of the endpoint it names (none: body as kept). An endpoint deleted
// since, or signing with ed25519 since, has no secret any more: the replay shows "".
func (s *Store) withCurrentSecret(ctx context.Context, env Env, body []byte, endpointID *string) ([]byte, error) {
	if endpointID == nil {
		return body, nil
	}
	// Read into the model, not plucked: the column is sealed (sealed.go), and opens with
	// its row's id, selected before it.
	var eps []models.WebhookEndpoint
	if err := s.in(ctx, env).Select("id", "secret").Where("id = ?", *endpointID).Limit(1).Find(&eps).Error; err != nil {
		return nil, fmt.Errorf("current secret of webhook endpoint %s: %w", *endpointID, err)
	}
	// Only an HMAC secret is ever shown: an endpoint that has switched to ed25519 since
	// has no secret to show (its private key never leaves Revops, CONTRACT §25), as a
	// deleted one has none.
	current := ""
	if len(eps) == 1 && strings.HasPrefix(eps[0].Secret, signing.SecretPrefix) {
		current = eps[0].Secret
	}
	value, err := json.Marshal(current)
	if err != nil {
		return nil, fmt.Errorf("encode secret: %w", err)
	}
	return bytes.ReplaceAll(body, []byte(secretMember+secretPlaceholder), append([]byte(secretMember), value...)), nil
}
