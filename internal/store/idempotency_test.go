package store_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// claimKey claims key for a POST /v1/accounts with the given fingerprint.
func claimKey(t *testing.T, db seeded, key, fp string) store.Claim {
	t.Helper()
	c, err := db.st.ClaimIdempotencyKey(context.Background(), db.env,
		store.IdempotentRequest{Key: key, Method: "POST", Path: "/v1/accounts", Fingerprint: fp})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// renderName answers with the created account's name, as the API renders an object.
func renderName(result any) (int, []byte, error) {
	a, ok := result.(models.Account)
	if !ok {
		return 0, nil, errors.New("not an account")
	}
	return 201, []byte(strconv.Quote(a.Name)), nil
}

func createAccount(ctx context.Context, db seeded, name string) error {
	_, _, err := db.st.CreateAccount(ctx, db.env, models.Account{ID: uuid.NewString(), Name: name, Status: "draft", Properties: "{}"},
		func(models.Account) []store.Emit { return nil })
	return err
}

func countAccounts(t *testing.T, db seeded) int {
	t.Helper()
	rows, _, err := db.st.Accounts(context.Background(), db.env, store.AccountFilter{}, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// The answer is written by the change's own transaction: when keeping it fails, the
// change rolls back; when the change commits, the answer is there to replay.
func TestIdempotentAnswerCommitsWithTheChange(t *testing.T) {
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()

			// A claim lost before commit (here released; in production taken over after
			// 60 s): the account must not be created.
			c := claimKey(t, db, "lost", "fp")
			c.Answer.Render(renderName)
			if err := db.st.ReleaseIdempotencyKey(ctx, c.Answer); err != nil {
				t.Fatal(err)
			}
			err := createAccount(store.WithAnswer(ctx, c.Answer), db, "Lost")
			if !errors.Is(err, store.ErrIdempotencyClaimLost) {
				t.Fatalf("err = %v, want the claim lost", err)
			}
			// A render that fails rolls the change back too.
			c = claimKey(t, db, "broken", "fp")
			c.Answer.Render(func(any) (int, []byte, error) { return 0, nil, errors.New("boom") })
			if err := createAccount(store.WithAnswer(ctx, c.Answer), db, "Broken"); err == nil {
				t.Fatal("a failed render did not fail the change")
			}
			if n := countAccounts(t, db); n != 0 {
				t.Fatalf("%d accounts written without their answer", n)
			}

			c = claimKey(t, db, "ok", "fp")
			c.Answer.Render(renderName)
			if err := createAccount(store.WithAnswer(ctx, c.Answer), db, "Kept"); err != nil {
				t.Fatal(err)
			}
			if status, body, ok := c.Answer.Kept(); !ok || status != 201 || string(body) != `"Kept"` {
				t.Fatalf("kept %v %d %s", ok, status, body)
			}
			again := claimKey(t, db, "ok", "fp")
			if again.Outcome != store.ClaimReplay || again.Status != 201 || string(again.Body) != `"Kept"` {
				t.Fatalf("second claim = %+v", again)
			}
		})
	}
}

func TestClaimOutcomes(t *testing.T) {
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			first := claimKey(t, db, "k", "fp1")
			if first.Outcome != store.ClaimOwned {
				t.Fatalf("first claim = %v", first.Outcome)
			}
			for _, tc := range []struct {
				name string
				req  store.IdempotentRequest
				want store.ClaimOutcome
			}{
				{"same request while running", store.IdempotentRequest{Key: "k", Method: "POST", Path: "/v1/accounts", Fingerprint: "fp1"}, store.ClaimInUse},
				{"other body", store.IdempotentRequest{Key: "k", Method: "POST", Path: "/v1/accounts", Fingerprint: "fp2"}, store.ClaimReused},
				{"other path", store.IdempotentRequest{Key: "k", Method: "POST", Path: "/v1/deals", Fingerprint: "fp1"}, store.ClaimReused},
				{"other method", store.IdempotentRequest{Key: "k", Method: "PATCH", Path: "/v1/accounts", Fingerprint: "fp1"}, store.ClaimReused},
				{"other key", store.IdempotentRequest{Key: "k2", Method: "POST", Path: "/v1/accounts", Fingerprint: "fp1"}, store.ClaimOwned},
			} {
				got, err := db.st.ClaimIdempotencyKey(ctx, db.env, tc.req)
				if err != nil {
					t.Fatal(err)
				}
				if got.Outcome != tc.want {
					t.Errorf("%s: outcome %v, want %v", tc.name, got.Outcome, tc.want)
				}
			}
			// A released claim (a non-2xx answer) frees the key for a retry.
			if err := db.st.ReleaseIdempotencyKey(ctx, first.Answer); err != nil {
				t.Fatal(err)
			}
			if again := claimKey(t, db, "k", "fp2"); again.Outcome != store.ClaimOwned {
				t.Fatalf("after release: %v", again.Outcome)
			}
		})
	}
}

// Many requests claiming one key at once: exactly one owns it.
func TestClaimIsAtomic(t *testing.T) {
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			var (
				wg    sync.WaitGroup
				mu    sync.Mutex
				owned int
			)
			for range 30 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := db.st.ClaimIdempotencyKey(context.Background(), db.env,
						store.IdempotentRequest{Key: "race", Method: "POST", Path: "/v1/accounts", Fingerprint: "fp"})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if c.Outcome == store.ClaimOwned {
						owned++
					}
				}()
			}
			wg.Wait()
			if owned != 1 {
				t.Fatalf("%d requests own the key", owned)
			}
		})
	}
}

// Every write that answers an API request keeps the answer in its own transaction: with
// the claim lost, each one rolls back whole; with it, the answer is rendered from the
// write's own result.
func TestEveryWriteKeepsItsAnswer(t *testing.T) {
	for name, db := range bothDatabases(t, "sandbox") {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st, env := db.st, db.env
			if err := createAccount(ctx, db, "Customer"); err != nil {
				t.Fatal(err)
			}
			rows, _, err := st.Accounts(ctx, env, store.AccountFilter{}, store.Page{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			customer := rows[0]
			now := time.Now().UTC().Truncate(time.Microsecond)
			writes := []struct {
				name    string
				write   func(ctx context.Context) error
				changed func() bool
				render  func(any) (int, []byte, error)
			}{
				{"account update", func(ctx context.Context) error {
					_, _, err := st.UpdateAccount(ctx, env, customer.ID, func(cur models.Account, _ time.Time) (*models.Account, []store.Emit, error) {
						cur.Name = "Renamed"
						return &cur, nil, nil
					})
					return err
				}, func() bool {
					a, err := st.Account(ctx, env, customer.ID)
					return err != nil || a.Name == "Renamed"
				}, func(r any) (int, []byte, error) {
					a, ok := r.(models.Account)
					return 200, []byte(strconv.Quote(a.Name)), okErr(ok)
				}},
				{"deal create", func(ctx context.Context) error {
					_, _, _, err := st.CreateDeal(ctx, env, customer.ID, func(c models.Account, at time.Time) (store.DealChange, error) {
						return store.DealChange{Deal: &models.Deal{ID: "deal-1", AccountID: c.ID, Status: "draft", Skus: "[]", Terms: "[]"}}, nil
					})
					return err
				}, func() bool {
					_, err := st.Deal(ctx, env, "deal-1")
					return err == nil
				}, func(r any) (int, []byte, error) {
					d, ok := r.(store.DealResult)
					return 201, []byte(strconv.Quote(d.Deal.ID + "/" + d.Account.Name)), okErr(ok)
				}},
				{"usage ingest", func(ctx context.Context) error {
					_, err := st.IngestUsage(ctx, env, usageWrite("tx-1", "increment", "h", "1", now))
					return err
				}, func() bool {
					b, _, _, err := st.UsageCounts(ctx, env)
					return err != nil || b > 0
				}, func(r any) (int, []byte, error) {
					u, ok := r.(store.UsageResult)
					return 201, []byte(strconv.Quote(u.Batch.TransactionID)), okErr(ok)
				}},
			}
			for _, w := range writes {
				lost := claimKey(t, db, "lost "+w.name, "fp")
				lost.Answer.Render(w.render)
				if err := st.ReleaseIdempotencyKey(ctx, lost.Answer); err != nil {
					t.Fatal(err)
				}
				if err := w.write(store.WithAnswer(ctx, lost.Answer)); !errors.Is(err, store.ErrIdempotencyClaimLost) {
					t.Fatalf("%s with its claim lost: %v", w.name, err)
				}
				if w.changed() {
					t.Fatalf("%s committed without its answer", w.name)
				}
				c := claimKey(t, db, w.name, "fp")
				c.Answer.Render(w.render)
				if err := w.write(store.WithAnswer(ctx, c.Answer)); err != nil {
					t.Fatalf("%s: %v", w.name, err)
				}
				replay := claimKey(t, db, w.name, "fp")
				if !w.changed() || replay.Outcome != store.ClaimReplay {
					t.Fatalf("%s: changed %v, second claim %+v", w.name, w.changed(), replay)
				}
				t.Logf("%s kept %d %s", w.name, replay.Status, replay.Body)
			}
		})
	}
}

func okErr(ok bool) error {
	if !ok {
		return errors.New("unexpected result type")
	}
	return nil
}
