package jsonnum

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestTextLen(t *testing.T) {
	cases := []struct {
		lit  string
		text string // written out; "" when err is set
		err  error
	}{
		{"0", "0", nil},
		{"-0", "0", nil},
		{"-0.0e-2", "0.000", nil},
		{"0e99999", "0", nil},
		{"12", "12", nil},
		{"-12.50", "-12.50", nil},
		{"1.5e-3", "0.0015", nil},
		{"15e1", "150", nil},
		{"-1.50e1", "-15.0", nil},
		{"0.0012", "0.0012", nil},
		{"1e0000000000000000001", "10", nil},
		{"1E+2", "100", nil},
		{"1e63", "1" + strings.Repeat("0", 63), nil},                       // 64: the limit
		{"-1e62", "-1" + strings.Repeat("0", 62), nil},                     // 64
		{"1e-62", "0." + strings.Repeat("0", 61) + "1", nil},               // 64
		{"1e64", "1" + strings.Repeat("0", 64), nil},                       // 65: one over
		{"1e-63", "0." + strings.Repeat("0", 62) + "1", nil},               // 65
		{"0e-63", "0." + strings.Repeat("0", 63), nil},                     // 65: zero keeps its scale
		{"1e131000", "", nil},                                              // computed, not compared
		{"1e999999", "", nil},                                              // six exponent digits
		{"1e1000000", "", ErrTooLong},                                      // seven
		{"0e-99999999999999999999", "", ErrTooLong},                        // does not overflow
		{"1e0000000000000000000000000000000000000000000000001", "10", nil}, // leading zeros are free
		{"", "", ErrNotNumber}, {"-", "", ErrNotNumber}, {"01", "", ErrNotNumber}, {"1.", "", ErrNotNumber},
		{".5", "", ErrNotNumber}, {"+1", "", ErrNotNumber}, {"1e", "", ErrNotNumber}, {"1e+", "", ErrNotNumber},
		{"NaN", "", ErrNotNumber}, {"Infinity", "", ErrNotNumber}, {"1 ", "", ErrNotNumber}, {"0x1", "", ErrNotNumber},
	}
	for _, c := range cases {
		n, err := TextLen(c.lit)
		if !errors.Is(err, c.err) {
			t.Errorf("TextLen(%q) error %v, want %v", c.lit, err, c.err)
			continue
		}
		if c.text != "" && n != len(c.text) {
			t.Errorf("TextLen(%q) = %d, want %d (%s)", c.lit, n, len(c.text), c.text)
		}
		if nb, errb := TextLen([]byte(c.lit)); nb != n || !errors.Is(errb, err) {
			t.Errorf("TextLen([]byte(%q)) = %d, %v; the string form gave %d, %v", c.lit, nb, errb, n, err)
		}
	}
	if n, _ := TextLen("1e131000"); n != 131001 {
		t.Errorf("TextLen(1e131000) = %d, want 131001", n)
	}
}

func TestCheckBoundary(t *testing.T) {
	for lit, want := range map[string]error{
		"1e63": nil, "1e64": ErrTooLong, "1e-62": nil, "1e-63": ErrTooLong, "0e-62": nil, "0e-63": ErrTooLong,
		strings.Repeat("9", 64): nil, strings.Repeat("9", 65): ErrTooLong, "-" + strings.Repeat("9", 63): nil,
		"-" + strings.Repeat("9", 64): ErrTooLong, "1e131000": ErrTooLong, "1e-99999": ErrTooLong, "x": ErrNotNumber,
	} {
		if err := Check(lit); !errors.Is(err, want) {
			t.Errorf("Check(%.20q) = %v, want %v", lit, err, want)
		}
	}
}

// TestTextLenMatchesPostgreSQL: TextLen is exactly the length PostgreSQL's jsonb prints for
// a number, so the limit bounds what a read of stored metadata returns.
func TestTextLenMatchesPostgreSQL(t *testing.T) {
	url := os.Getenv("REVOPS_TEST_DATABASE_URL")
	if url == "" {
		t.Fatal("REVOPS_TEST_DATABASE_URL is not set: run the tests with ./scripts/test, which starts PostgreSQL")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)

	lits := []string{"0", "-0", "-0.0e-2", "0e99999", "-12.50", "1.5e-3", "15e1", "-1.50e1", "0.0012", "1e0000000000000000001",
		"1E+2", "1e63", "-1e62", "1e-62", "1e64", "1e-63", "0e-63", "0.000e2", "100e-2", "-0.0", "1e-16383", "0e-16383", "1e2000"}
	r := rand.New(rand.NewPCG(13, 13))
	digits := func(n int, lead bool) string {
		var b strings.Builder
		for i := range n {
			d := r.IntN(10)
			if i == 0 && lead && n > 1 {
				d = 1 + r.IntN(9)
			}
			b.WriteByte(byte('0' + d))
		}
		return b.String()
	}
	for range 500 {
		lit := ""
		if r.IntN(2) == 0 {
			lit = "-"
		}
		if r.IntN(3) == 0 {
			lit += "0"
		} else {
			lit += digits(1+r.IntN(20), true)
		}
		if r.IntN(2) == 0 {
			lit += "." + digits(1+r.IntN(20), false)
		}
		if r.IntN(2) == 0 {
			lit += []string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)] + strings.Repeat("0", r.IntN(3)) + fmt.Sprint(r.IntN(90))
		}
		lits = append(lits, lit)
	}
	rows, err := conn.Query(ctx, `SELECT l, length((('{"a":' || l || '}')::jsonb -> 'a')::text) FROM unnest($1::text[]) AS l`, lits)
	if err != nil {
		t.Fatalf("query: %v", err)
	}
	defer rows.Close()
	seen := 0
	for rows.Next() {
		var lit string
		var pgLen int
		if err := rows.Scan(&lit, &pgLen); err != nil {
			t.Fatal(err)
		}
		seen++
		if n, err := TextLen(lit); err != nil || n != pgLen {
			t.Errorf("TextLen(%q) = %d, %v; PostgreSQL prints %d characters", lit, n, err, pgLen)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != len(lits) {
		t.Fatalf("compared %d of %d literals", seen, len(lits))
	}
}

// TestTextLenDoesNotAllocate: the length of 1e-99999 costs what reading eight bytes costs.
func TestTextLenDoesNotAllocate(t *testing.T) {
	lit := []byte("1e-99999")
	if a := testing.AllocsPerRun(100, func() { _ = Check(lit) }); a != 0 {
		t.Fatalf("Check allocates %v times per call", a)
	}
}
