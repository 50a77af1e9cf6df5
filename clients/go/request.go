package revops

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// maxResponse bounds what one answer may bring into memory.
const maxResponse = 32 << 20

// RequestOption configures one call, e.g. WithIdempotencyKey.
type RequestOption func(*requestConfig)

type requestConfig struct {
	idempotencyKey string
}

// WithIdempotencyKey makes a POST, PATCH, PUT or DELETE send this Idempotency-Key
// instead of a fresh random one: use it to retry a call yourself (after a crash, say)
// without doing the change twice.
func WithIdempotencyKey(key string) RequestOption {
	return func(c *requestConfig) { c.idempotencyKey = key }
}

type idempotencyKeyContext struct{}

// ContextWithIdempotencyKey makes the calls made with ctx send this Idempotency-Key, for
// code that passes a context through layers that do not take request options.
// WithIdempotencyKey wins over it.
func ContextWithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyContext{}, key)
}

// Do sends a request to any path of the API (e.g. "/v1/accounts?limit=5") through the
// same retries, idempotency key and error decoding as the generated methods, and decodes
// a 2xx answer into out (nil to ignore; a *json.RawMessage keeps it as it came). It is
// the way to reach a route the client's version does not know yet.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, opts ...RequestOption) error {
	return c.call(ctx, method, path, nil, body, out, opts)
}

// call is what every method does: encode the body once, pick the idempotency key once,
// then send, retrying as retryWait allows with the same key and the same bytes.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any, opts []RequestOption) error {
	if c == nil {
		return errors.New("revops: nil *Client: use NewClient")
	}
	if ctx == nil {
		return fmt.Errorf("revops: %s %s: nil context", method, path)
	}
	var cfg requestConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("revops: %s %s: encode the request body: %w", method, path, err)
		}
		payload = b
	}
	target := c.baseURL + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	key, err := idempotencyKey(ctx, method, cfg)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		res, err := c.send(ctx, method, target, payload, key)
		wait, retry := c.retryWait(ctx, attempt, res, err)
		if !retry {
			if err != nil {
				return fmt.Errorf("revops: %s %s: %w", method, path, err)
			}
			return decode(res, out, method, path)
		}
		if waitErr := sleep(ctx, wait); waitErr != nil {
			// Give the caller what the last attempt said as well as why we stopped.
			last := err
			if res != nil {
				last = decode(res, nil, method, path)
			}
			return errors.Join(fmt.Errorf("revops: %s %s: %w", method, path, waitErr), last)
		}
	}
}

// idempotencyKey is the key every attempt of one call sends: the caller's, else a new
// random UUID. GET needs none.
func idempotencyKey(ctx context.Context, method string, cfg requestConfig) (string, error) {
	if method == http.MethodGet || method == http.MethodHead {
		return "", nil
	}
	if cfg.idempotencyKey != "" {
		return cfg.idempotencyKey, nil
	}
	if k, ok := ctx.Value(idempotencyKeyContext{}).(string); ok && k != "" {
		return k, nil
	}
	return newUUID()
}

// newUUID returns a random (version 4) UUID.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("revops: make an idempotency key: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// response is one answer, read whole so that the connection is reused and the body can
// be decoded after the retry decision.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (c *Client) send(ctx context.Context, method, target string, payload []byte, key string) (*response, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("read the response: %w", err)
	}
	return &response{status: res.StatusCode, header: res.Header, body: b}, nil
}

// decode turns a 2xx answer into out, anything else into *Error.
func decode(res *response, out any, method, path string) error {
	if res.status < 200 || res.status > 299 {
		return newError(res)
	}
	if out == nil || len(res.body) == 0 {
		return nil
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("revops: %s %s: decode the response: %w", method, path, err)
	}
	return nil
}
