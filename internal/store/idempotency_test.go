package store_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

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
