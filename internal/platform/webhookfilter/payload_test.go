package webhookfilter_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/revops/revops/internal/platform/webhookfilter"
)

// TestReaderSemantics: a payload decoded for its filters answers as a whole one would,
// where the Reader built only what they read (members by name, arrays of an operand's
// length, counts for object operands), with several filters at once as the fan-out reads.
func TestReaderSemantics(t *testing.T) {
	const p = `{"a":{"x":2,"y":[1,2,3]},"a2":{"x":1,"x":2},"b":[[1,2],[3]],"c":{"k":{"m":1},"n":[]},"s":"19999.00","big":[` +
		`0,0,0,0,0,0,0,0,0,0,0,0],"o":{"z":1,"k":{"m":1},"e":{}},"d":{"q.r":5}}`
	cases := []struct {
		filter string
		want   bool
	}{
		{`{"a.x":2}`, true},
		{`{"a2":{"$exists":true}}`, true}, // a name given twice where no filter reads it
		{`{"a2":{"y":1}}`, false},         // an object compared whole: its members count as sent
		{`{"a":{"x":2,"y":[1,2,3]}}`, true},
		{`{"a":{"y":[1,2,3]}}`, false}, // a member more is not equal: skipped members count
		{`{"a":{"x":2,"y":[1,2,3],"w":null}}`, false},
		{`{"a.y":[1,2]}`, false},
		{`{"a.y":{"$in":[[1,2],[1,2,3]]}}`, true},
		{`{"b":[[1,2],[3]]}`, true},
		{`{"b":[[1,2],[4]]}`, false},
		{`{"b":{"$in":[[[1,2]],[[1,2],[3],[]],[[1,2],[3]]]}}`, true},
		{`{"c":{"k":{"m":1},"n":[]}}`, true},
		{`{"c.k":{"m":1}}`, true},
		{`{"c.k.m":{"$gte":"1.0"}}`, true},
		{`{"s":{"$gt":19998.99,"$lt":"20000"}}`, true},
		{`{"s":"19999.00"}`, true},
		{`{"big":0}`, false},
		{`{"big":{"$exists":true},"big.0":{"$exists":false}}`, true},
		{`{"o":{"z":1,"k":{"m":1},"e":{}}}`, true},
		{`{"o":{"z":1,"k":{"m":1},"e":{"f":1}}}`, false},
		{`{"d.q.r":5}`, false}, // paths are dotted keys: "q.r" is not reachable
		{`{"missing.path":{"$exists":false},"a":{"$neq":[]}}`, true},
	}
	var fs []*webhookfilter.Filter
	for _, c := range cases {
		f, err := webhookfilter.Parse([]byte(c.filter))
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		fs = append(fs, f)
		if got, err := f.Match([]byte(p)); err != nil || got != c.want {
			t.Errorf("%s alone: %v, %v; want %v", c.filter, got, err, c.want)
		}
	}
	doc, err := webhookfilter.NewReader(fs...).Decode([]byte(p))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got, err := fs[i].MatchDoc(doc); err != nil || got != c.want {
			t.Errorf("%s among all: %v, %v; want %v", c.filter, got, err, c.want)
		}
	}
	if _, err := fs[0].MatchDoc(mustDecode(t, webhookfilter.NewReader(fs[1]), p)); err == nil {
		t.Error("a filter evaluated a payload decoded for another one")
	}
}

func mustDecode(t *testing.T, rd *webhookfilter.Reader, p string) webhookfilter.Doc {
	t.Helper()
	doc, err := rd.Decode([]byte(p))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestReaderRefusesNamesTwice: a member name given twice is refused where a filter reads
// it: on a path, or named in an object operand.
func TestReaderRefusesNamesTwice(t *testing.T) {
	for filter, payload := range map[string]string{
		`{"a.x":1}`:        `{"a":{"x":1,"x":2}}`,
		`{"a":{"x":1}}`:    `{"a":{"x":1,"x":1}}`,
		`{"a.x":null}`:     `{"a":{"x":null,"x":null}}`,
		`{"a.x.y":true}`:   `{"a":{"x":{"y":true},"x":{"y":true}}}`,
		`{"a":[{"b":1}]}`:  `{"a":[{"b":1,"b":1}]}`,
		`{"$not":{"a":1}}`: `{"a":1,"b":2,"a":1}`,
		`{"a":{"$in":[{"x":1},{"y":[{"z":0}]}]}}`: `{"a":{"y":[{"z":0,"z":0}]}}`,
	} {
		f, err := webhookfilter.Parse([]byte(filter))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Match([]byte(payload)); err == nil || !strings.Contains(err.Error(), "twice") {
			t.Errorf("%s on %s: %v, want refused", filter, payload, err)
		}
	}
}

// TestReaderChecksWhatItSkips: a payload is refused when it is not JSON, in the parts no
// filter reads as well.
func TestReaderChecksWhatItSkips(t *testing.T) {
	f, err := webhookfilter.Parse([]byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat("[", webhookfilter.MaxDocDepth) + strings.Repeat("]", webhookfilter.MaxDocDepth)
	for _, p := range []string{`{"a":1,"b":[1,}`, `{"a":1,"b":01}`, `{"a":1,"b":1.}`, `{"a":1,"b":-}`,
		`{"a":1,"b":"\x"}`, `{"a":1,"b":tru}`, `{"a":1,"b":{"c"}}`, `{"a":1,"b":{"c":1,}}`, `{"a":1,"b":[}`,
		`{"a":1,"b":"` + "\x01" + `"}`, `{"a":1,"b":[1]]}`, `{"a":1} {}`, "{\"a\":1}\x00", "\x00", `{"a":1,"b":` + deep + `}`, `{"a":1,"b":{"c":1]}`} {
		if _, err := f.Match([]byte(p)); err == nil {
			t.Errorf("Match(%.60q) succeeded", p)
		}
	}
	ok := `{"a":1,"b":` + deep[1:len(deep)-1] + `,"c":[{"d":[-0.5e+3,"\u00e9\"",true,false,null,{}]}]}`
	if got, err := f.Match([]byte(ok)); err != nil || !got {
		t.Errorf("Match(%.60q) = %v, %v", ok, got, err)
	}
}

// TestReaderBuildsWhatFiltersRead: decoding a payload of 150,000 values allocates for what
// the filter reads, not per value of the payload: skipped members, arrays of another
// length than any operand, and containers compared with scalars are passed over (an
// object compared whole has its names counted: a map that grows, not a value per member).
func TestReaderBuildsWhatFiltersRead(t *testing.T) {
	zeros := "[" + strings.Repeat("0,", 100_000) + "0]"
	var b strings.Builder
	b.WriteString("{")
	for i := range 50_000 {
		fmt.Fprintf(&b, `"k%d":{},`, i)
	}
	b.WriteString(`"k":{}}`)
	members := b.String()
	for _, c := range []struct{ filter, payload string }{
		{`{"a":1}`, `{"a":1,"b":` + zeros + `,"c":` + members + `}`},
		{`{"b":0,"c":{"$gt":0}}`, `{"a":1,"b":` + zeros + `,"c":` + members + `}`},
		{`{"b":[0,0,0],"c.k":{}}`, `{"b":` + zeros + `,"c":` + members + `}`},
		{`{"b":{"$in":[[0],[0,0,0]]},"c":{"k":{}}}`, `{"b":` + zeros + `,"c":` + members + `}`},
	} {
		f, err := webhookfilter.Parse([]byte(c.filter))
		if err != nil {
			t.Fatal(err)
		}
		rd, payload := webhookfilter.NewReader(f), []byte(c.payload)
		allocs := testing.AllocsPerRun(3, func() {
			if _, err := rd.Decode(payload); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 512 {
			t.Errorf("%s on %d bytes: %.0f allocations, want a few (what the filter reads)", c.filter, len(payload), allocs)
		}
	}
}
