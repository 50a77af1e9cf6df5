package webhook

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sort"
	"testing"
	"time"
	"unicode/utf8"
)

// formsOf are the distinct forms of the values of headers, as the masker matches them.
func formsOf(headers map[string]string) []string {
	set := map[string]bool{}
	for _, v := range headers {
		for _, f := range valueForms(v) {
			set[f] = true
		}
	}
	var forms []string
	for f := range set {
		forms = append(forms, f)
	}
	sort.Strings(forms)
	return forms
}

// naiveKeep is masker.keep by its definition, in quadratic time: of text's first limit
// bytes and the longest form after them, every run that begins with a form's mark (its
// first mark bytes) is hidden for the form's length; when the answer goes on past them
// (open, or text is longer), so is an end that is the start of a mark; each run of
// hidden bytes becomes Redacted.
func naiveKeep(forms []string, mark int, text []byte, limit int, open bool) []byte {
	longest := 0
	for _, f := range forms {
		longest = max(longest, len(f))
	}
	n := min(len(text), limit+longest)
	open = open || n < len(text)
	text = text[:n]
	hidden := make([]bool, n)
	for s := range n {
		for _, f := range forms {
			m, end := f[:min(len(f), mark)], s
			switch rest := text[s:]; {
			case m != "" && len(rest) >= len(m) && string(rest[:len(m)]) == m:
				end = min(n, s+len(f))
			case open && len(rest) < len(m) && string(rest) == m[:len(rest)]:
				end = n
			}
			for i := s; i < end; i++ {
				hidden[i] = true
			}
		}
	}
	var out []byte
	for i := 0; i < n; i++ {
		if !hidden[i] {
			out = append(out, text[i])
			continue
		}
		out = append(out, Redacted...)
		for i+1 < n && hidden[i+1] {
			i++
		}
	}
	return out[:min(len(out), limit+utf8.UTFMax)]
}

// The masker's rules, one by one.
func TestMaskerHidesEveryOccurrence(t *testing.T) {
	headers := map[string]string{"a": "abcdef", "b": "efQ", "c": "zz", "d": `k<"/`, "e": "0123456789ABCDEFGHIJ"}
	tests := []struct {
		name, text string
		limit      int
		open       bool
		want       string
	}{
		{"whole value", "xx abcdef yy", 64, false, "xx <redacted> yy"},
		{"overlapping values make one run", "xx abcdefQ yy", 64, false, "xx <redacted> yy"},
		{"touching values make one run", "xx zzzzabcdef yy", 64, false, "xx <redacted> yy"},
		{"a part of a value stays", "xx abcde yy", 64, false, "xx abcde yy"},
		{"the start of a value at the end of a whole answer stays", "xx abc", 64, false, "xx abc"},
		{"the start of a value at the end of a cut answer goes", "xx abc", 64, true, "xx <redacted>"},
		{"whole at the end of a cut answer", "xx abcdef", 64, true, "xx <redacted>"},
		{"json with html escapes", `x k\u003c\"\/ y`, 64, false, "x <redacted> y"},
		{"json without html escapes", `x k<\"/ y`, 64, false, "x <redacted> y"},
		{"json with escaped slashes", `x k<\"\/ y`, 64, false, "x <redacted> y"},
		{"a value straddling the kept part is hidden whole", "123456abcdef.....", 8, false, "123456<redac"}, // cut at 8 bytes and a character,
		{"what follows a value that straddles it is kept while the value shrinks", "0123456789ABCDEFGHIJ.xyz", 16, false, "<redacted>.xyz"},
		{"a kept part that is the start of a value", "0123456789", 4, true, "<redacte"},
		{"invalid UTF-8 around a value", "\xff\x00abcdef\xc3", 64, false, "\xff\x00<redacted>\xc3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMasker(headers)
			got, ok := m.keep(context.Background(), []byte(tt.text), tt.limit, tt.open)
			if !ok || string(got) != tt.want {
				t.Fatalf("keep(%q, %d, %v) = %q, %v; want %q", tt.text, tt.limit, tt.open, got, ok, tt.want)
			}
			if ref := naiveKeep(formsOf(headers), markLength, []byte(tt.text), tt.limit, tt.open); !bytes.Equal(ref, got) {
				t.Fatalf("the definition keeps %q", ref)
			}
		})
	}
	// A long value echoed in part is hidden for its length once its mark is there (here
	// its first 8 bytes).
	m := newMasker(headers)
	m.mark = 8
	if got, _ := m.keep(context.Background(), []byte("xx 0123456789AB yy and more"), 64, false); string(got) != "xx <redacted>more" {
		t.Fatalf("a value echoed in part: %q", got)
	}
	// Only the kept part and the longest form after it are examined, at two steps a
	// byte at most, however long the text.
	m = newMasker(headers)
	if _, ok := m.keep(context.Background(), bytes.Repeat([]byte("zabcdez"), 10000), 64, true); !ok || m.examined > 2*(64+20) {
		t.Fatalf("%d steps for a kept part of 64 bytes and a longest form of 20", m.examined)
	}
}

// On random values, marks and texts over a small alphabet (so that partial matches,
// overlaps and escapes abound), the automaton keeps exactly what the definition keeps.
func TestMaskerKeepsWhatItsDefinitionKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 1))
	const alphabet = `ab<"/\`
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for round := range 20000 {
		headers := map[string]string{}
		for i := range 1 + rng.IntN(4) {
			headers[string(rune('a'+i))] = word(1 + rng.IntN(10))
		}
		text := []byte(word(rng.IntN(80)))
		limit, open := 1+rng.IntN(30), rng.IntN(2) == 0
		m := newMasker(headers)
		m.mark = 1 + rng.IntN(8)
		got, ok := m.keep(context.Background(), text, limit, open)
		if want := naiveKeep(formsOf(headers), m.mark, text, limit, open); !ok || !bytes.Equal(got, want) {
			t.Fatalf("round %d: headers %q, mark %d, keep(%q, %d, %v) = %q, want %q", round, headers, m.mark, text, limit, open, got, want)
		}
		if examined := min(len(text), limit+m.automaton().longest); m.examined > 2*examined {
			t.Fatalf("round %d: %d steps for %d bytes examined", round, m.examined, examined)
		}
	}
}

// Masking checks its context: once its caller has gone, nothing is kept (never an
// unmasked text), and a transport error's text says only that the request failed. A
// context past its deadline (the read used up the attempt's time) still masks: what came
// is kept.
func TestMaskingStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := newMasker(map[string]string{"a": "abcdef"})
	if got := m.excerpt(ctx, []byte("xx abcdef yy"), false); got != "" {
		t.Fatalf("excerpt under a cancelled context: %q", got)
	}
	if got := m.reason(ctx, errorString("bad abcdef"), 0); got != "request failed" {
		t.Fatalf("reason under a cancelled context: %q", got)
	}
	if got := newMasker(nil).excerpt(ctx, []byte("xx abcdef yy"), false); got != "xx abcdef yy" {
		t.Fatalf("excerpt without headers: %q", got)
	}
	past, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if got := m.excerpt(past, []byte("xx abcdef yy"), true); got != "xx <redacted> yy" {
		t.Fatalf("excerpt past the deadline: %q", got)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
