package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Receivers built against the masker (issue 41): custom headers at §25's limits whose
// forms are as long and as self-similar as values can be, and answers of 64 KiB made of
// partial matches of those forms.

// hostileHeaders are ten headers of 4 KiB: runs of '<' (24 KiB once JSON-escaped with
// HTML escapes, the issue's case), of "</" (the `\/` forms too), of '"' and '\' (JSON's
// two-byte escapes), of all four, and a plain key. Each ends in its own letter, so that
// the values differ only there: the masker's automaton branches 4 KiB deep.
func hostileHeaders() map[string]string {
	h := map[string]string{}
	for i, run := range []string{"<", "<", "<", "<", "</", "</", `"`, `\`, `<"/\`, "k3y-"} {
		v := strings.Repeat(run, MaxHeaderValueLength/len(run))
		h[fmt.Sprintf("X-Hostile-%d", i)] = v[:MaxHeaderValueLength-1] + string(rune('a'+i))
	}
	return h
}

// hostileForm is the named form of header i of hostileHeaders.
func hostileForm(h map[string]string, i int, form string) string {
	v := h[fmt.Sprintf("X-Hostile-%d", i)]
	forms := valueForms(v) // as sent, JSON with HTML escapes, JSON without, then the `\/` ones
	switch form {
	case "raw":
		return forms[0]
	case "json":
		return forms[1]
	case "json-slash":
		return forms[len(forms)-2] // the HTML-escaped one with `\/`
	}
	panic("unknown form " + form)
}

// partials is maxResponse bytes of block repeated: a partial match of a form that the
// next block does not continue.
func partials(block string) []byte {
	return []byte(strings.Repeat(block, maxResponse/len(block)+1)[:maxResponse])
}

// hostileBodies are the answers of the hostile suite and benchmark, each exactly what
// a send reads (maxResponse, so each read is cut by the limit): a plain text; partial
// matches of each form, a prefix that the next copy does not continue, repeated (short
// ones: each is a partial end once the one after it is cut off; long ones: each is
// compared far before it fails); every form whole, back to back; and partial matches
// strewn with invalid UTF-8 and NUL. "endless" (hostileReceiver) streams partial
// matches until the client goes away.
func hostileBodies(h map[string]string) map[string][]byte {
	jsonLt := hostileForm(h, 0, "json") // \u003c × 4095, then a
	var whole strings.Builder
	for i := range len(h) {
		for _, f := range valueForms(h[fmt.Sprintf("X-Hostile-%d", i)]) {
			whole.WriteString(f + " ")
		}
	}
	return map[string][]byte{
		"plain":         partials("Lorem ipsum dolor sit amet, consectetur adipiscing elit. "),
		"partial_raw":   partials(hostileForm(h, 8, "raw")[:6]),        // <"/\<" then <
		"partial_json":  partials(jsonLt[:4]),                          // \u00 then \u00 (issue 41's case)
		"partial_long":  partials(jsonLt[:6*2000+4]),                   // \u003c × 2000, \u00
		"partial_slash": partials(hostileForm(h, 4, "json-slash")[:7]), // \u003c\ then \u003c
		"partial_quote": partials(hostileForm(h, 6, "json")[:1]),       // \ then \: cut one byte at a time
		"whole_forms":   partials(whole.String()),
		"invalid_utf8":  partials(jsonLt[:6*100+4] + "\xff\x00\xc3"),
	}
}

// hostileReceiver answers /<kind> with that body of bodies, and /endless with partial
// matches until the client goes away.
func hostileReceiver(tb testing.TB, bodies map[string][]byte) *httptest.Server {
	tb.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := strings.TrimPrefix(r.URL.Path, "/")
		if kind != "endless" {
			_, _ = w.Write(bodies[kind])
			return
		}
		block := endlessBlock(bodies)
		for {
			if _, err := w.Write(block); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// endlessBlock is what /endless repeats: partial matches, each a partial end once the
// next is cut off.
func endlessBlock(bodies map[string][]byte) []byte { return bodies["partial_json"][:16<<10] }

// hostileKinds are the answers' names, plain first.
func hostileKinds(bodies map[string][]byte) []string {
	kinds := []string{"endless"}
	for k := range bodies {
		if k != "plain" {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return append([]string{"plain"}, kinds...)
}

// hostileRig is hostileHeaders, hostileBodies, their receiver and a sender to it that
// keeps the excerpts of loopback answers.
type hostileRig struct {
	headers map[string]string
	bodies  map[string][]byte
	srv     *httptest.Server
	s       *Sender
}

func newHostileRig(tb testing.TB, timeout time.Duration) hostileRig {
	headers := hostileHeaders()
	bodies := hostileBodies(headers)
	srv := hostileReceiver(tb, bodies)
	return hostileRig{headers: headers, bodies: bodies, srv: srv,
		s: &Sender{Client: srv.Client(), AckSentence: ackSentence, Timeout: timeout, publicPeers: true}}
}

// send sends to the answer kind with headers.
func (r hostileRig) send(ctx context.Context, kind string, headers map[string]string) Result {
	return r.s.Send(ctx, Message{URL: r.srv.URL + "/" + kind, Method: http.MethodPost, ID: "ev", Body: []byte("{}"),
		Secrets: []string{"whsec_AAAA"}, Headers: headers})
}

// sendCounted is Send's exchange of body with a masker of the test's own, whose work it
// returns.
func sendCounted(t *testing.T, s *Sender, url string, body []byte, headers map[string]string) (Result, *masker) {
	t.Helper()
	req, perm := s.request(Message{URL: url, Method: http.MethodPost, ID: "ev", Body: body,
		Secrets: []string{"whsec_AAAA"}, Headers: headers})
	if perm != "" {
		t.Fatal(perm)
	}
	ctx, cancel := context.WithTimeout(t.Context(), s.timeout())
	defer cancel()
	mk := newMasker(headers)
	return s.exchange(req.WithContext(ctx), s.timeout(), mk, &peer{}), mk
}

// Issue 41: whatever a receiver answers, the masker examines only the kept KiB and the
// longest form after it, at two steps a byte at most, so its work does not grow with the
// partial matches the answer holds; and it keeps exactly what masking by its definition
// keeps (naiveKeep, in quadratic time).
func TestHostileAnswersAreMaskedInLinearWork(t *testing.T) {
	rig := newHostileRig(t, 30*time.Second)
	forms := formsOf(rig.headers)
	for _, kind := range hostileKinds(rig.bodies) {
		t.Run(kind, func(t *testing.T) {
			res, mk := sendCounted(t, rig.s, rig.srv.URL+"/"+kind, []byte("{}"), rig.headers)
			if res.StatusCode != http.StatusOK || res.Excerpt == "" {
				t.Fatalf("send: %+v", res)
			}
			examined := maxExcerpt + mk.automaton().longest
			if mk.examined == 0 || mk.examined > 2*examined {
				t.Fatalf("%d steps for an answer of which %d bytes may be examined", mk.examined, examined)
			}
			read := rig.bodies[kind]
			if kind == "endless" {
				read = partials(string(endlessBlock(rig.bodies)))
			}
			if want := excerpt(naiveKeep(forms, markLength, read, maxExcerpt, true)); res.Excerpt != want {
				t.Fatalf("excerpt\n%q\nwant\n%q", res.Excerpt, want)
			}
		})
	}
}

// processCPU is the CPU this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHostileAnswers is the CPU of one attempt (the send, the read of 64 KiB and
// what is kept of it, receiver included: it runs in this process) per answer, against an
// endpoint with ten headers of 4 KiB (hostileHeaders), beside a plain answer of the same
// length (target, issue 41: the worst within 2× of plain) and the plain answer to an
// endpoint without headers.
//
//	go test ./internal/domain/webhook -run '^$' -bench HostileAnswers -benchtime 5x
func BenchmarkHostileAnswers(b *testing.B) {
	rig := newHostileRig(b, 2*time.Minute)
	kinds := hostileKinds(rig.bodies)
	cpu := map[string]time.Duration{}
	var bare time.Duration
	rig.send(b.Context(), "plain", rig.headers) // the client's and the server's first connection
	for range b.N {
		c0 := processCPU()
		rig.send(b.Context(), "plain", nil)
		bare += processCPU() - c0
		for _, kind := range kinds {
			c0 := processCPU()
			rig.send(b.Context(), kind, rig.headers)
			cpu[kind] += processCPU() - c0
		}
	}
	perOp := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	worst := 0.0
	for _, kind := range kinds {
		b.ReportMetric(perOp(cpu[kind]), kind+"_cpu_ms")
		if kind != "plain" {
			worst = max(worst, perOp(cpu[kind])/perOp(cpu["plain"]))
		}
	}
	b.ReportMetric(perOp(bare), "plain_no_headers_cpu_ms")
	b.ReportMetric(worst, "worst/plain")
}

// BenchmarkHostileMasking is the masker alone on the same answers (built for each, as an
// attempt builds it), without the exchange and the receiver, whose CPU the figures above
// include (the endless answer's receiver goes on writing until the client hangs up).
//
//	go test ./internal/domain/webhook -run '^$' -bench HostileMasking
func BenchmarkHostileMasking(b *testing.B) {
	headers := hostileHeaders()
	bodies := hostileBodies(headers)
	var kinds []string // the endless answer reads as partial_json
	for _, kind := range hostileKinds(bodies) {
		if kind != "endless" {
			kinds = append(kinds, kind)
		}
	}
	cpu := map[string]time.Duration{}
	for range b.N {
		for _, kind := range kinds {
			c0 := processCPU()
			newMasker(headers).excerpt(b.Context(), bodies[kind], true)
			cpu[kind] += processCPU() - c0
		}
	}
	perOp := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(b.N) }
	worst := 0.0
	for _, kind := range kinds {
		b.ReportMetric(perOp(cpu[kind]), kind+"_cpu_µs")
		worst = max(worst, perOp(cpu[kind])/perOp(cpu["plain"]))
	}
	b.ReportMetric(worst, "worst/plain")
}
