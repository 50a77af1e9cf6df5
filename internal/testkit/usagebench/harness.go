package usagebench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/revops/revops/internal/domain/keys"
	"github.com/revops/revops/internal/domain/orgs"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/internal/testkit/apitest"
	"github.com/revops/revops/internal/testkit/testdb"
)

// The harness the usage benchmarks share with the other end-to-end benchmarks
// (internal/testkit/meterbench): the real API over real PostgreSQL behind an httptest
// server, a keep-alive client, and the bulk loader's tricks. It is not a test file so
// that other benchmark packages can import it; nothing outside benchmarks does.

// Server is one benchmark database with the API in front of it.
type Server struct {
	DBURL  string
	HTTP   *httptest.Server
	Key    string // a secret key of the environment EnvID
	Client *http.Client
	Pool   *pgxpool.Pool // direct connections, for loading and checking
	Store  *store.Store
	OrgID  string
	EnvID  string
	keys   *keys.Manager
}

// Setup creates a fresh database (dropped at cleanup) with one organization and serves
// the API on it with a secret key of the organization's sandbox.
func Setup(b testing.TB) *Server {
	b.Helper()
	ctx := context.Background()
	url := testdb.URL(b)
	st := testdb.Open(b, url)
	org, _, err := orgs.Create(ctx, st, "Bench", "bench@example.com")
	if err != nil {
		b.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return Serve(b, st, org.ID, url, pool)
}

// Serve puts the API in front of st, the rate limits off, and gives a new secret
// sandbox key of org to the benchmark's client.
func Serve(b testing.TB, st *store.Store, orgID, url string, pool *pgxpool.Pool) *Server {
	b.Helper()
	deps := apitest.Deps(apitest.Config(b), st)
	km := deps.Keys
	srv := apitest.Serve(b, deps)
	tr := &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}
	b.Cleanup(tr.CloseIdleConnections)
	s := &Server{DBURL: url, HTTP: srv, Client: &http.Client{Transport: tr}, Pool: pool, Store: st, OrgID: orgID, keys: km}
	return s.WithKey(b, "sandbox")
}

// WithKey is s (same server, database and client) with a new secret key of the
// organization's environment envName ("sandbox" or "live"), and that environment's id.
func (s *Server) WithKey(b testing.TB, envName string) *Server {
	b.Helper()
	k, err := s.keys.Create(context.Background(), s.OrgID, envName, "secret")
	if err != nil {
		b.Fatal(err)
	}
	c := *s
	c.Key = k.Plain
	if err := s.Pool.QueryRow(context.Background(), `SELECT id FROM environments WHERE organization_id = $1 AND name = $2`,
		s.OrgID, envName).Scan(&c.EnvID); err != nil {
		b.Fatal(err)
	}
	return &c
}

// Send makes one request with the server's key and returns the answer's body; any
// status but want is an error.
func (s *Server) Send(method, path string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.HTTP.URL+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.Key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := s.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	msg, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != want {
		return nil, fmt.Errorf("%s %s: status %d: %.300s", method, path, res.StatusCode, msg)
	}
	return msg, nil
}

// Post sends one usage batch; anything but 201 is an error.
func (s *Server) Post(body []byte) error {
	_, err := s.Send("POST", "/v1/usage/events", body, http.StatusCreated)
	return err
}

// Get reads path (200 expected) and says how long the whole answer took.
func (s *Server) Get(path string) ([]byte, time.Duration, error) {
	t0 := time.Now()
	msg, err := s.Send("GET", path, nil, http.StatusOK)
	return msg, time.Since(t0), err
}

// Spread runs do for i from 0 to n-1 over clients goroutines (c is the goroutine's
// number, which picks its accounts) and returns the wall time. A goroutine stops at its
// first error; one of them is returned after all have stopped.
func Spread(n, clients int, do func(c int, i int64) error) (time.Duration, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				if err := do(c, i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	return time.Since(start), nil
}

// Millis is the q quantile of lat in milliseconds (0 for none).
func Millis(lat []time.Duration, q float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), lat...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
}

// AtoiEnv is the positive integer in the environment variable name, or def.
func AtoiEnv(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// LoadAvg is the machine's 1, 5 and 15 minute load average, printed beside every figure:
// the benchmarks run on shared cores.
func LoadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// OpenDatabase opens the database name of the test PostgreSQL server, creating it when
// missing and migrating it, so that a loaded database is kept for the next run; it
// returns its URL, a store and a pool on it.
func OpenDatabase(b testing.TB, name string) (string, *store.Store, *pgxpool.Pool) {
	b.Helper()
	ctx := context.Background()
	admin := os.Getenv(testdb.EnvVar)
	if admin == "" {
		b.Fatalf("%s is not set", testdb.EnvVar)
	}
	u, err := url.Parse(admin)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	dbURL := u.String()
	ac, err := pgx.Connect(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	var exists bool
	if err := ac.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		if _, err := ac.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			b.Fatal(err)
		}
	}
	_ = ac.Close(ctx)
	st, err := store.Open(ctx, dbURL, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	t0 := time.Now()
	applied, err := st.Migrate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("migrate: %v in %.1f s\n", applied, time.Since(t0).Seconds())
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	return dbURL, st, pool
}
