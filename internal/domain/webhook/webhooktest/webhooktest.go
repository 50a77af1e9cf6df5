// Package webhooktest helps delivery tests: a fresh PostgreSQL store with one
// organization, events written as the outbox writes them, and HTTPS receivers that
// record what they get.
package webhooktest

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/platform/catalog"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/testdb"
	"github.com/revops/revops/models"
)

// AckSentence is the default service's acknowledgement.
const AckSentence = "Revops API Event Received."

// DB is a migrated test database with one organization; Env is its sandbox.
type DB struct {
	Store *store.Store
	Env   models.Env
	URL   string // the database's, for connections of the test's own (LISTEN)
	raw   *gorm.DB
}

// New opens a fresh database.
func New(t testing.TB) *DB {
	t.Helper()
	ctx := context.Background()
	url := testdb.URL(t)
	st := testdb.Open(t, url)
	raw, err := gorm.Open(postgres.Open(url), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("open raw handle: %v", err)
	}
	sqlDB, _ := raw.DB()
	t.Cleanup(func() { _ = sqlDB.Close() })
	org, err := orgs.CreateWithHash(ctx, st, "Acme", uuid.NewString()+"@acme.test", "x")
	if err != nil {
		t.Fatalf("create organization: %v", err)
	}
	env, err := st.Environment(ctx, org.ID, models.EnvSandbox)
	if err != nil {
		t.Fatal(err)
	}
	return &DB{Store: st, Env: env, URL: url, raw: raw}
}

// Event writes a pending, undispatched event whose body carries object under the key
// "deal", as the outbox does, created at `at` (zero: now), with one pending delivery per
// endpoint of the environment enabled and subscribed to its type (skipped without any).
func (d *DB) Event(t testing.TB, typ string, object map[string]any, at time.Time) models.Event {
	t.Helper()
	return d.event(t, typ, object, at, "")
}

// TracedEvent is Event written by a change made in a traced request: the row carries
// the request's traceparent, as the outbox writes it (CONTRACT §19).
func (d *DB) TracedEvent(t testing.TB, typ string, object map[string]any, traceparent string) models.Event {
	t.Helper()
	return d.event(t, typ, object, time.Time{}, traceparent)
}

func (d *DB) event(t testing.TB, typ string, object map[string]any, at time.Time, traceparent string) models.Event {
	t.Helper()
	if at.IsZero() {
		at = time.Now().UTC()
	}
	at = at.UTC().Truncate(time.Microsecond)
	ev := models.Event{
		ID: uuid.NewString(), OrganizationID: d.Env.OrganizationID, EnvironmentID: d.Env.ID,
		Environment: d.Env.Name, Type: typ, ObjectType: "deal", ObjectID: uuid.NewString(),
		Time: strconv.FormatInt(at.Unix(), 10), Status: models.EventPending, Seq: 1,
		TraceParent: traceparent, CreatedAt: at, UpdatedAt: at,
	}
	body, err := json.Marshal(map[string]any{
		"event": map[string]string{"id": ev.ID, "time": ev.Time, "type": ev.Type},
		"deal":  object,
	})
	if err != nil {
		t.Fatal(err)
	}
	ev.Payload = string(body)
	eps, err := d.Store.AllWebhookEndpoints(context.Background(), d.Env)
	if err != nil {
		t.Fatal(err)
	}
	var ds []models.WebhookDelivery
	for _, ep := range eps {
		if ep.Enabled && catalog.Matches(ep.EventTypes, typ) {
			ds = append(ds, models.WebhookDelivery{ID: uuid.NewString(), EventID: ev.ID, EnvironmentID: ev.EnvironmentID,
				EndpointID: ep.ID, Status: models.EventPending, RetryPolicy: ep.RetryPolicy, CreatedAt: at, UpdatedAt: at})
		}
	}
	if len(ds) == 0 {
		ev.Status = models.EventSkipped
	}
	err = d.raw.Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&ev).Error; err != nil {
			return err
		}
		if len(ds) > 0 {
			return tx.Create(&ds).Error
		}
		return nil
	})
	if err != nil {
		t.Fatalf("insert event: %v", err)
	}
	return ev
}

// Load reads an event back.
func (d *DB) Load(t testing.TB, id string) models.Event {
	t.Helper()
	ev, _, err := d.Store.EventByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// Received is one request a receiver got.
type Received struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	At     time.Time
}

// Receiver is an HTTPS server recording requests; Respond decides each answer
// (default: 200 with the acknowledgement sentence).
type Receiver struct {
	*httptest.Server
	mu       sync.Mutex
	received []Received
	Respond  func(w http.ResponseWriter, r *http.Request)
}

// NewReceiver starts a receiver; it is closed at cleanup.
func NewReceiver(t testing.TB) *Receiver {
	rc := &Receiver{}
	rc.Server = httptest.NewTLSServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.received = append(rc.received, Received{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body, At: time.Now()})
	respond := rc.Respond
	rc.mu.Unlock()
	if respond != nil {
		respond(w, r)
		return
	}
	_, _ = io.WriteString(w, "ok: "+AckSentence)
}

// SetRespond replaces the answer while the server runs.
func (rc *Receiver) SetRespond(f func(w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.Respond = f
}

// Received returns a copy of what arrived so far.
func (rc *Receiver) Received() []Received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Received(nil), rc.received...)
}

// Roots trusts this receiver's certificate only.
func (rc *Receiver) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(rc.Certificate())
	return pool
}

// UTF16LE is s (ASCII) in UTF-16 little-endian with a byte-order mark: the answer of a
// receiver on another platform, which must be recorded, never taken for the sentence.
func UTF16LE(s string) string {
	b := []byte("\xff\xfe")
	for i := 0; i < len(s); i++ {
		b = append(b, s[i], 0)
	}
	return string(b)
}
