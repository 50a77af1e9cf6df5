package store_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/events"
	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/domain/replay"
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

// nameBody answers with an account's name, as the API renders an object.
func nameBody(a models.Account) ([]byte, error) { return []byte(strconv.Quote(a.Name)), nil }

// createAccount writes an account as accounts.Create does, keeping reply's answer last
// in its transaction.
func createAccount(ctx context.Context, db seeded, name string, reply store.Keeper[models.Account]) error {
	_, err := db.st.InTx(ctx, db.env, func(tx *store.Tx) error {
		a := models.Account{ID: uuid.NewString(), Name: name, Status: "draft", Properties: "{}"}
		if err := tx.InsertAccount(&a); err != nil {
			return err
		}
		return reply.Keep(tx, a)
	})
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
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {

		// A claim lost before commit (here released; in production taken over after
		// 60 s): the account must not be created.
		c := claimKey(t, db, "lost", "fp")
		if err := db.st.ReleaseIdempotencyKey(ctx, c.Answer); err != nil {
			t.Fatal(err)
		}
		err := createAccount(ctx, db, "Lost", newReply(c.Answer, 201, nameBody))
		if !errors.Is(err, store.ErrIdempotencyClaimLost) {
			t.Fatalf("err = %v, want the claim lost", err)
		}
		// A render that fails rolls the change back too.
		c = claimKey(t, db, "broken", "fp")
		broken := func(models.Account) ([]byte, error) { return nil, errors.New("boom") }
		if err := createAccount(ctx, db, "Broken", newReply(c.Answer, 201, broken)); err == nil {
			t.Fatal("a failed render did not fail the change")
		}
		if n := countAccounts(t, db); n != 0 {
			t.Fatalf("%d accounts written without their answer", n)
		}

		c = claimKey(t, db, "ok", "fp")
		if err := createAccount(ctx, db, "Kept", newReply(c.Answer, 201, nameBody)); err != nil {
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

func TestClaimOutcomes(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
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

// Many requests claiming one key at once: exactly one owns it.
func TestClaimIsAtomic(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
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

// Every write that answers an API request keeps the answer in its own transaction: with
// the claim lost, each one rolls back whole; with it, the answer is rendered from the
// write's own result.
func TestEveryWriteKeepsItsAnswer(t *testing.T) {
	forBoth(t, "sandbox", func(t *testing.T, ctx context.Context, db seeded) {
		st, env := db.st, db.env
		if err := createAccount(ctx, db, "Customer", idempotency.Reply[models.Account]{}); err != nil {
			t.Fatal(err)
		}
		rows, _, err := st.Accounts(ctx, env, store.AccountFilter{}, store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		customer := rows[0]
		now := time.Now().UTC().Truncate(time.Microsecond)
		// Each write takes the owned claim the way its API handler passes it: as a
		// store.Reply.
		var jobID string // the replay job the last write recorded, or tried to
		writes := []struct {
			name    string
			write   func(ctx context.Context, a *store.Answer) error
			changed func() bool
		}{
			{"account update", func(ctx context.Context, claim *store.Answer) error {
				_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
					cur, err := renameAccount(tx, customer.ID, "Renamed")
					if err != nil {
						return err
					}
					return newReply(claim, 200, nameBody).Keep(tx, cur)
				})
				return err
			}, func() bool {
				a, err := st.Account(ctx, env, customer.ID)
				return err != nil || a.Name == "Renamed"
			}},
			{"deal create", func(ctx context.Context, claim *store.Answer) error {
				_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
					c, err := tx.LockAccount(customer.ID)
					if err != nil {
						return err
					}
					d := models.Deal{ID: "deal-1", AccountID: c.ID, Status: "draft", Skus: "[]", Terms: "[]"}
					if err := tx.InsertDeal(&d); err != nil {
						return err
					}
					return newReply(claim, 201, func(d models.Deal) ([]byte, error) {
						return []byte(strconv.Quote(d.ID + "/" + c.Name)), nil
					}).Keep(tx, d)
				})
				return err
			}, func() bool {
				_, err := st.Deal(ctx, env, "deal-1")
				return err == nil
			}},
			{"usage ingest", func(ctx context.Context, claim *store.Answer) error {
				reply := newReply(claim, 201, func(b models.UsageBatch) ([]byte, error) {
					return []byte(strconv.Quote(b.TransactionID)), nil
				})
				_, err := st.InTx(ctx, env, func(tx *store.Tx) error {
					b, err := tx.WriteUsage(usageWrite("tx-1", "increment", "h", "1", now))
					if err != nil {
						return err
					}
					return reply.Keep(tx, b)
				})
				return err
			}, func() bool {
				b, _, _, err := st.UsageCounts(ctx, env)
				return err != nil || b > 0
			}},
			{"replay job", func(ctx context.Context, claim *store.Answer) error {
				reply := newReply(claim, 202, func(j replay.JobObject) ([]byte, error) {
					return []byte(strconv.Quote(j.ID)), nil
				})
				j, err := replay.CreateJob(ctx, st, env, events.Filter{Status: models.EventFailed}, now, reply)
				jobID = j.ID
				return err
			}, func() bool {
				_, err := st.ReplayJob(ctx, env, jobID)
				return err == nil
			}},
		}
		for _, w := range writes {
			lost := claimKey(t, db, "lost "+w.name, "fp")
			if err := st.ReleaseIdempotencyKey(ctx, lost.Answer); err != nil {
				t.Fatal(err)
			}
			if err := w.write(ctx, lost.Answer); !errors.Is(err, store.ErrIdempotencyClaimLost) {
				t.Fatalf("%s with its claim lost: %v", w.name, err)
			}
			if w.changed() {
				t.Fatalf("%s committed without its answer", w.name)
			}
			c := claimKey(t, db, w.name, "fp")
			if err := w.write(ctx, c.Answer); err != nil {
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
