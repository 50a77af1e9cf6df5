package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/revops/revops/internal/domain/idempotency"
	"github.com/revops/revops/internal/store"
	"github.com/revops/revops/models"
)

// markedHeaders are ten headers of 4 KiB in which every form of every value holds Z and
// Q every few bytes (letters the placeholder lacks): any part of a value left in what is
// kept shows. Their escapes make their JSON forms long (10.5 KiB with `\/`).
func markedHeaders() map[string]string {
	h := map[string]string{}
	for i := range MaxHeaders {
		h[fmt.Sprintf("X-Marked-%d", i)] = strings.Repeat(`<<ZQ"/\`+string(rune('0'+i)), MaxHeaderValueLength/8)
	}
	return h
}

// markedAnswer is what the stored suite's receiver sends for one kind: body, whether it
// is cut (the read stops at the limit or on an error), and how it is sent.
type markedAnswer struct {
	body  []byte
	cut   bool
	serve func(w http.ResponseWriter, body []byte) // nil: written whole
}

// markedAnswers place the values of h whole, and cut at every boundary of what is kept:
// back to back in every form (and cut by the read limit), straddling the kept KiB,
// straddling the end of what is examined (after a long value that shrinks to the
// placeholder, so that the bytes there reach the excerpt), cut by the connection's end,
// streamed forever, and strewn with invalid UTF-8 and NUL.
func markedAnswers(h map[string]string) map[string]markedAnswer {
	v := func(i int) []string { return valueForms(h[fmt.Sprintf("X-Marked-%d", i)]) } // raw, json, json-no-html, `\/` ones
	var all strings.Builder
	for i := range MaxHeaders {
		for _, f := range v(i) {
			all.WriteString(f + ".")
		}
	}
	longest := v(1)[3] // the HTML-escaped form with `\/`
	examinedEnd := longest + strings.Repeat(".", 1000) + v(2)[0] + strings.Repeat(".", 500)
	var strewn strings.Builder
	for i, bad := range []string{"\xff\x00", "\xc3(", "\xed\xa0\x80", "\x00\x00"} {
		strewn.WriteString(bad + v(i)[i%4] + bad)
	}
	return map[string]markedAnswer{
		"back_to_back":     {body: partials(all.String()), cut: true},
		"straddling_kept":  {body: []byte(strings.Repeat(".", maxExcerpt-50) + v(0)[1] + strings.Repeat(".", 100))},
		"straddling_end":   {body: []byte(examinedEnd)},
		"cut_by_close":     {body: []byte(strings.Repeat(".", 300) + v(3)[0][:2000]), cut: true, serve: serveThenClose},
		"endless":          {body: partials(all.String()), cut: true, serve: serveForever},
		"invalid_utf8":     {body: []byte(strewn.String())},
		"status_line_echo": {body: []byte("2" + strings.Join([]string{v(4)[0], v(5)[0], v(6)[0]}, "")), serve: serveStatusLine},
	}
}

// serveThenClose promises more than body and closes the connection after it.
func serveThenClose(w http.ResponseWriter, body []byte) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body)+1000, body)
	_ = buf.Flush()
}

// serveForever sends body again and again until the client goes away.
func serveForever(w http.ResponseWriter, body []byte) {
	for {
		if _, err := w.Write(body); err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

// serveStatusLine answers with a malformed status line that echoes body: the client's
// error quotes it, and the attempt's error text keeps it.
func serveStatusLine(w http.ResponseWriter, body []byte) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = fmt.Fprintf(buf, "HTTP/1.1 %s nope\r\n\r\n", body)
	_ = buf.Flush()
}

// markedReceiver answers each request with the answer its deal's id names (the event's
// body), and a manual test (whose body is a sample) with back_to_back.
func markedReceiver(t *testing.T, answers map[string]markedAnswer) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sent struct {
			Deal struct{ ID string } `json:"deal"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &sent)
		a, ok := answers[sent.Deal.ID]
		if !ok {
			a = answers["back_to_back"]
		}
		if a.serve != nil {
			a.serve(w, a.body)
			return
		}
		_, _ = w.Write(a.body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// storedAttempt makes one attempt of a new event's delivery to the environment's only
// endpoint, as the delivery activity does (the endpoint and its headers read from the
// database, the attempt recorded with its delivery's status), and reads it back.
func storedAttempt(t *testing.T, db SeededForTest, s *Sender, kind string) (Result, models.DeliveryAttempt) {
	t.Helper()
	ctx := t.Context()
	evs, err := db.Store.InTx(ctx, db.Env, func(tx *store.Tx) error {
		tx.Emit(store.Emit{Type: "deal-signed", ObjectType: "deal", ObjectID: kind, Object: map[string]string{"id": kind}})
		return nil
	})
	if err != nil || len(evs) != 1 {
		t.Fatalf("emit: %v (%d events)", err, len(evs))
	}
	ds, err := db.Store.EventDeliveries(ctx, db.Env, evs[0].ID)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries %v (%v)", ds, err)
	}
	target, err := db.Store.DeliveryForAttempt(ctx, ds[0].ID)
	if err != nil || target.Endpoint == nil {
		t.Fatalf("delivery for attempt: %+v (%v)", target, err)
	}
	ep, now := *target.Endpoint, time.Now().UTC()
	res := s.Send(ctx, Message{URL: ep.URL, Method: ep.Method, ID: evs[0].ID, Body: []byte(target.Event.Payload),
		Secrets: SigningSecrets(ep, now), At: now, Headers: ep.Headers})
	att := models.DeliveryAttempt{ID: uuid.NewString(), EventID: evs[0].ID, DeliveryID: ds[0].ID, EndpointID: ep.ID,
		Number: 1, Trigger: models.TriggerScheduled, URL: ep.URL, Method: ep.Method, StartedAt: now,
		DurationMS: res.Duration.Milliseconds(), StatusCode: res.StatusCode, ResponseExcerpt: res.Excerpt,
		Error: res.Reason, Outcome: models.AttemptSucceeded}
	status := models.EventDelivered
	if !res.OK() {
		att.Outcome, status = models.AttemptFailed, models.EventRetrying
	}
	if err := (Recorder{Store: db.Store}).RecordAttempt(ctx, db.Env, &att, status); err != nil {
		t.Fatalf("record: %v", err)
	}
	as, err := db.Store.DeliveryAttempts(ctx, db.Env, evs[0].ID)
	if err != nil || len(as) != 1 {
		t.Fatalf("attempts %v (%v)", as, err)
	}
	return res, as[0]
}

// checkKept fails unless text is storable, at most n bytes, and holds no byte of a
// marked value (no Z, no Q).
func checkKept(t *testing.T, what, text string, n int) {
	t.Helper()
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) || len(text) > n {
		t.Fatalf("%s of %d bytes, valid %v: %q", what, len(text), utf8.ValidString(text), text)
	}
	if strings.ContainsAny(text, "ZQ") {
		t.Fatalf("%s holds part of a header value: %q", what, text)
	}
}

// Issue 41, CONTRACT §25: every header value, whole or cut at any boundary of what is
// kept, is masked in what is stored — the excerpt and the error text of the attempt, on
// both databases — and in the manual test's answer, with headers at their limits; the
// excerpt is what masking by its definition keeps, and the masker's work stays within
// two steps a byte of what may be examined.
func TestHeaderValuesAreMaskedWhereverCut(t *testing.T) {
	headers := markedHeaders()
	answers := markedAnswers(headers)
	srv := markedReceiver(t, answers)
	s := &Sender{Client: srv.Client(), AckSentence: ackSentence, Timeout: 30 * time.Second, publicPeers: true}
	var kinds []string
	for kind := range answers {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	forms := formsOf(headers)
	for name, db := range BothDatabasesForTest(t, models.EnvSandbox) {
		t.Run(name, func(t *testing.T) {
			ep, err := CreateEndpoint(t.Context(), db.Store, db.Env, models.WebhookEndpoint{URL: srv.URL + "/hooks",
				Method: http.MethodPost, Enabled: true, Secret: "whsec_AAAA", Headers: headers},
				time.Now().UTC(), idempotency.Reply[EndpointObject]{})
			if err != nil {
				t.Fatal(err)
			}
			for _, kind := range kinds {
				t.Run(kind, func(t *testing.T) {
					res, stored := storedAttempt(t, db, s, kind)
					if stored.ResponseExcerpt != res.Excerpt || stored.Error != res.Reason {
						t.Fatalf("stored %q / %q, sent %q / %q", stored.ResponseExcerpt, stored.Error, res.Excerpt, res.Reason)
					}
					checkKept(t, "the excerpt", stored.ResponseExcerpt, maxExcerpt)
					checkKept(t, "the error", stored.Error, maxReason)
					a := answers[kind]
					if kind == "status_line_echo" {
						if !strings.Contains(stored.Error, "malformed HTTP status code") || !strings.Contains(stored.Error, Redacted) {
							t.Fatalf("error %q, want the status line masked", stored.Error)
						}
					} else if want := excerpt(naiveKeep(forms, markLength, a.body[:min(len(a.body), maxResponse)], maxExcerpt, a.cut)); res.Excerpt != want {
						t.Fatalf("excerpt\n%q\nwant\n%q", res.Excerpt, want)
					}
					_, mk := sendCounted(t, s, srv.URL, []byte(`{"deal":{"id":"`+kind+`"}}`), headers)
					kept := maxExcerpt
					if kind == "status_line_echo" {
						kept = maxReason
					}
					if limit := kept + mk.automaton().longest; mk.examined == 0 || mk.examined > 2*limit {
						t.Fatalf("%d steps for an answer of which %d bytes may be examined", mk.examined, limit)
					}
				})
			}
			e := &Endpoints{Store: db.Store, Sender: s}
			got, err := e.Test(t.Context(), db.Env, ep.ID, "deal-signed")
			if err != nil || !strings.Contains(got.ResponseExcerpt, Redacted) {
				t.Fatalf("manual test: %+v (%v)", got, err)
			}
			checkKept(t, "the manual test's excerpt", got.ResponseExcerpt, maxExcerpt)
		})
	}
}
