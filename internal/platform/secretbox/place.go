package secretbox

import (
	"errors"
	"strconv"
	"strings"
)

// Place is where a sealed value is kept: its table, its column and its row's id. The
// bound form seals it into the additional data, so that a value copied to another row or
// column (by whoever can write the table but holds no key) does not open there: it cannot
// make one tenant's endpoint sign with, or send the headers of, another's (CONTRACT §25).
//
// Rolling upgrades (expand, then contract): this release opens both forms, and writes
// the unbound one, which the release before reads, until the operator says every process
// runs this one (REVOPS_SEAL_BOUND, docs/production.md); `revops migrate` then re-seals
// the unbound values. A later release may refuse the unbound form.
//
// The bound form keeps the "enc:v1:<key id>:" envelope and marks its body ("bound:"):
// the release before reads any value without "enc:v1:" as clear, and would sign with a
// value of a new prefix or, in `revops migrate`, seal it again as if it were a secret; a
// marked body it refuses as malformed instead (base64 holds no ':').
type Place struct {
	Table, Column, Row string
}

// BoundMark starts the body of a value in the bound form, after its key id.
const BoundMark = "bound:"

// String names the place, as errors show it (never the value kept there).
func (p Place) String() string {
	return p.Table + "." + p.Column + " of row " + strconv.Quote(p.Row)
}

// aad is the additional data of the bound form: each part after its length, so that no
// two places share it.
func (p Place) aad() []byte {
	var b strings.Builder
	b.WriteString("revops secret v2")
	for _, part := range []string{p.Table, p.Column, p.Row} {
		b.WriteString("|" + strconv.Itoa(len(part)) + ":" + part)
	}
	return []byte(b.String())
}

// check refuses a place that names no row: a bound value is sealed and opened only where
// its row's id is known.
func (p Place) check() error {
	if p.Table == "" || p.Column == "" || p.Row == "" {
		return errors.New("a value bound to its row is sealed and opened only with its table, column and row id (" + p.String() + ")")
	}
	return nil
}

// IsBound tells a value sealed in the bound form from an unbound or clear one.
func IsBound(v string) bool {
	if !IsSealed(v) {
		return false
	}
	_, body, _ := strings.Cut(v[len(Prefix):], ":")
	return strings.HasPrefix(body, BoundMark)
}
