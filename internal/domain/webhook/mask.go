package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Custom header values in what is kept of an answer (CONTRACT §25). A receiver may echo
// the request's headers in its body (debugging endpoints, request bins): the excerpt an
// attempt keeps, and a transport error's text, show "<redacted>" for each value instead.
//
// What a receiver sends is tenant input, so masking it costs time linear in what is kept,
// never in the matches found (CONTRACT §21, issue 41):
//   - Only what is kept is examined: the first maxExcerpt bytes of an answer (maxReason of
//     an error's text), and the longest form of a value after them, so that a value that
//     starts in the kept part is seen, and hidden, whole.
//   - A form is recognised by its mark, its first markLength bytes (all of it when
//     shorter): a run of the text that begins with a mark is hidden for the form's length.
//     So a value is hidden wherever it is whole, and also where a receiver echoed only
//     its start, once the mark is there (256 bytes of a secret are a leak of it).
//   - The examined bytes go once through an Aho–Corasick automaton of the marks. Each
//     byte moves it one state deeper at most, and each failure link it follows on the
//     way leads to a shallower state: the links followed are never more than the bytes
//     read, so the automaton takes at most two steps per byte examined, however many
//     partial matches the bytes hold. A mark is found where it ends; what it hides is
//     merged into the runs of hidden bytes on a stack, where each run is pushed and
//     popped once.
//   - Where the examined bytes stop before the answer does, their end is hidden while it
//     may begin a mark: the automaton's last state is the longest such end.
//
// The automaton is built only when there is something to keep, from the values' forms
// (ten values of 4 KiB, each in up to five forms), with markLength states per form at
// most, and is dropped with the masker. The context is checked as the bytes are examined.

// markLength is how much of a form recognises it (see above).
const markLength = 256

// stopped tells whether masking under ctx should stop: its caller has gone (a worker
// stopping, an API client away). The attempt's deadline does not stop it: masking runs
// once the exchange has ended, often because that deadline passed during the read, and
// what came is still kept, as an attempt cut by its deadline is still recorded.
func stopped(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// checkEvery is how many examined bytes go by between checks of the context.
const checkEvery = 4096

// masker hides an endpoint's custom header values; a masker without headers hides nothing.
type masker struct {
	headers map[string]string
	mark    int        // how much of a form recognises it: markLength (tests shorten it)
	ac      *automaton // of the marks of every form of every value, built at the first use
	// examined counts the automaton's steps over what was examined (tests: at most two
	// per byte, whatever the answer).
	examined int
}

func newMasker(headers map[string]string) *masker {
	return &masker{headers: headers, mark: markLength}
}

func (m *masker) active() bool { return len(m.headers) > 0 }

// valueForms are v as sent and as a receiver's JSON encoder may quote it (with and
// without HTML escapes: `<` as \u003c; with `/` as `\/` too, as PHP's json_encode
// writes it, which base64 keys hold).
func valueForms(v string) []string {
	forms := []string{v}
	if quoted, err := json.Marshal(v); err == nil {
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		quoted := bytes.TrimSpace(buf.Bytes())
		forms = append(forms, string(quoted[1:len(quoted)-1]))
	}
	for _, f := range forms[1:] {
		if strings.Contains(f, "/") {
			forms = append(forms, strings.ReplaceAll(f, "/", `\/`))
		}
	}
	return forms
}

// automaton is the automaton of the marks of m's values, built at the first use.
func (m *masker) automaton() *automaton {
	if m.ac == nil {
		marks := map[string]int{} // a mark → the length of the longest form it begins
		for _, v := range m.headers {
			for _, f := range valueForms(v) {
				mark := f[:min(len(f), m.mark)]
				marks[mark] = max(marks[mark], len(f))
			}
		}
		m.ac = newAutomaton(marks)
	}
	return m.ac
}

// excerpt is what an attempt keeps of body, its first KiB, masked. truncated: body is
// the start of a longer answer (the read stopped at its limit, or on an error). Masking
// stopped by ctx keeps nothing.
func (m *masker) excerpt(ctx context.Context, body []byte, truncated bool) string {
	if !m.active() {
		return excerpt(body)
	}
	kept, ok := m.keep(ctx, body, maxExcerpt, truncated)
	if !ok {
		return ""
	}
	return excerpt(kept)
}

// reason is a transport error's text as kept: one that quotes the error (which may quote
// what the receiver sent: a malformed status line echoing a header) is masked before it
// is cut.
func (m *masker) reason(ctx context.Context, err error, timeout time.Duration) string {
	text, quotes := transportReason(err, timeout)
	if !m.active() || !quotes {
		return clip(text, maxReason)
	}
	kept, ok := m.keep(ctx, []byte(text), maxReason, false)
	if !ok {
		return "request failed"
	}
	return clip(string(kept), maxReason)
}

// keep is text masked and cut to limit+utf8.UTFMax bytes at most (clip then cuts it to
// limit on a character): only its first limit bytes and the longest form after them are
// examined. open: the answer goes on past text. ok is false when masking stopped (ctx).
func (m *masker) keep(ctx context.Context, text []byte, limit int, open bool) (kept []byte, ok bool) {
	ac := m.automaton()
	examined := text[:min(len(text), limit+ac.longest)]
	runs, ok := m.hidden(ctx, examined, open || len(examined) < len(text))
	if !ok {
		return nil, false
	}
	return replaced(examined, runs, limit+utf8.UTFMax), true
}

// span is the bytes [from, to) of a text.
type span struct{ from, to int }

// hidden are the runs of text's bytes that a mark hides, in order; runs that overlap or
// touch make one. open: text stops before its answer does, so its end is hidden too
// while it may begin a mark. A run may end past text.
func (m *masker) hidden(ctx context.Context, text []byte, open bool) (runs []span, ok bool) {
	ac := m.automaton()
	steps := ac.steps
	defer func() { m.examined += ac.steps - steps }()
	state := int32(0)
	for i, c := range text {
		if i%checkEvery == 0 && stopped(ctx) {
			return nil, false
		}
		state = ac.step(state, c)
		if st := ac.states[state]; st.back > 0 {
			runs = hide(runs, span{i + 1 - int(st.back), i + 1 + int(st.ahead)})
		}
	}
	if d := int(ac.states[state].depth); open && d > 0 {
		runs = hide(runs, span{len(text) - d, len(text)})
	}
	return runs, true
}

// hide adds r to runs, merged with the runs it overlaps or touches. The runs are
// disjoint and in order; each starts at or before the byte where its mark ended, and r
// ends after the byte where its own did: so r reaches every run's start, and the runs
// it touches are those that reach its start, the last ones.
func hide(runs []span, r span) []span {
	for len(runs) > 0 && runs[len(runs)-1].to >= r.from {
		last := runs[len(runs)-1]
		r.from, r.to = min(r.from, last.from), max(r.to, last.to)
		runs = runs[:len(runs)-1]
	}
	return append(runs, r)
}

// replaced is text with each run replaced by Redacted, cut to limit bytes at most.
func replaced(text []byte, runs []span, limit int) []byte {
	var out []byte
	at := 0
	for _, r := range runs {
		out = append(append(out, text[at:r.from]...), Redacted...)
		at = min(r.to, len(text))
		if len(out) >= limit {
			return out[:limit]
		}
	}
	out = append(out, text[at:]...)
	return out[:min(len(out), limit)]
}

// automaton is the Aho–Corasick automaton of a set of marks. A state is a prefix of a
// mark (state 0, the root, the empty one). Most states have one child, kept inline; the
// root and the states where marks part ways (fewer than the marks) keep a table.
type automaton struct {
	states  []state
	tables  [][256]int32 // children by byte (0: none; the root is no one's child)
	longest int          // the longest form's length
	steps   int          // the states looked up by step
}

// state is one state. The marks that end it (it and its suffixes that are marks, found
// through the failure links) all end at the byte just read, so what they hide is one
// span: back bytes before it to ahead bytes past it.
type state struct {
	child int32 // the only child (0: none), or ^t: the children are tables[t]
	fail  int32 // the longest proper suffix of the state that is a state too
	depth int32 // the state's length
	back  int32 // the longest mark that ends the state (0: none)
	ahead int32 // the most a form goes on past its mark, of the marks that end the state
	label byte  // the byte that leads into the state
}

// newAutomaton is the automaton of marks, each mapped to the length of its form.
func newAutomaton(marks map[string]int) *automaton {
	n := 1
	for m := range marks {
		n += len(m)
	}
	a := &automaton{states: make([]state, 1, n), tables: make([][256]int32, 1)}
	a.states[0].child = ^0
	for m, length := range marks {
		a.add(m, length)
	}
	a.link()
	return a
}

// add adds the states of mark that are missing; length is its form's.
func (a *automaton) add(mark string, length int) {
	s := int32(0)
	for i := range len(mark) {
		t := a.next(s, mark[i])
		if t == 0 {
			t = a.newState(s, mark[i])
		}
		s = t
	}
	st := &a.states[s]
	st.back, st.ahead = st.depth, max(st.ahead, int32(length-len(mark)))
	a.longest = max(a.longest, length)
}

func (a *automaton) newState(parent int32, c byte) int32 {
	t := int32(len(a.states))
	a.states = append(a.states, state{label: c, depth: a.states[parent].depth + 1})
	switch only := a.states[parent].child; {
	case only == 0:
		a.states[parent].child = t
	case only > 0: // a second child: the parent's children move to a table
		var table [256]int32
		table[a.states[only].label], table[c] = only, t
		a.tables = append(a.tables, table)
		a.states[parent].child = ^int32(len(a.tables) - 1)
	default:
		a.tables[^only][c] = t
	}
	return t
}

// next is the child of s by c (0: none).
func (a *automaton) next(s int32, c byte) int32 {
	switch only := a.states[s].child; {
	case only < 0:
		return a.tables[^only][c]
	case only > 0 && a.states[only].label == c:
		return only
	}
	return 0
}

// step is the state after s reads c: the child by c of s or, failing that, of the
// longest suffix of s that has one; the root if none has.
func (a *automaton) step(s int32, c byte) int32 {
	for {
		a.steps++
		if t := a.next(s, c); t != 0 || s == 0 {
			return t
		}
		s = a.states[s].fail
	}
}

// link sets every state's failure link, and what the marks that end it hide, breadth
// first: a state's link leads to a shorter state, set before it.
func (a *automaton) link() {
	queue := make([]int32, 1, len(a.states))
	for i := 0; i < len(queue); i++ {
		s := queue[i]
		from := len(queue)
		queue = a.appendChildren(queue, s)
		for _, t := range queue[from:] {
			st := &a.states[t]
			if s != 0 {
				st.fail = a.step(a.states[s].fail, st.label)
			}
			st.back, st.ahead = max(st.back, a.states[st.fail].back), max(st.ahead, a.states[st.fail].ahead)
		}
	}
}

func (a *automaton) appendChildren(queue []int32, s int32) []int32 {
	switch only := a.states[s].child; {
	case only > 0:
		return append(queue, only)
	case only < 0:
		for _, t := range a.tables[^only] {
			if t != 0 {
				queue = append(queue, t)
			}
		}
	}
	return queue
}
