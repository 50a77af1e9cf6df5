package webhookfilter_test

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
)

// The reference evaluator: CONTRACT §25 read as naively as possible, on generic values
// from encoding/json, with big.Rat for decimals and runes for code points. It shares no
// code with the package.

func refMatch(filter map[string]any, doc any) bool {
	for key, cond := range filter {
		var ok bool
		switch key {
		case "$and":
			ok = true
			for _, f := range cond.([]any) {
				ok = ok && refMatch(f.(map[string]any), doc)
			}
		case "$or":
			for _, f := range cond.([]any) {
				ok = ok || refMatch(f.(map[string]any), doc)
			}
		case "$not":
			ok = !refMatch(cond.(map[string]any), doc)
		default:
			ok = refCond(refLookup(doc, key), cond)
		}
		if !ok {
			return false
		}
	}
	return true
}

// refFound is a looked-up value; missing when the path is not there.
type refFound struct {
	v       any
	missing bool
}

func refLookup(doc any, path string) refFound {
	cur := doc
	for _, seg := range strings.Split(path, ".") {
		obj, isObj := cur.(map[string]any)
		if !isObj {
			return refFound{missing: true}
		}
		next, has := obj[seg]
		if !has {
			return refFound{missing: true}
		}
		cur = next
	}
	return refFound{v: cur}
}

func isOperatorObject(cond any) bool {
	obj, ok := cond.(map[string]any)
	if !ok || len(obj) == 0 {
		return false
	}
	for k := range obj {
		if !strings.HasPrefix(k, "$") {
			return false
		}
	}
	return true
}

func refCond(x refFound, cond any) bool {
	if !isOperatorObject(cond) {
		return !x.missing && refEqual(cond, x.v)
	}
	for name, operand := range cond.(map[string]any) {
		if !refOp(x, name, operand) {
			return false
		}
	}
	return true
}

func refOp(x refFound, name string, operand any) bool {
	switch name {
	case "$exists":
		return operand.(bool) == !x.missing
	case "$eq":
		return !x.missing && refEqual(operand, x.v)
	case "$neq":
		return x.missing || !refEqual(operand, x.v)
	case "$in", "$nin":
		in := false
		for _, item := range operand.([]any) {
			if !x.missing && refEqual(item, x.v) {
				in = true
			}
		}
		if name == "$in" {
			return in
		}
		return !in
	}
	if x.missing {
		return false
	}
	c, comparable := refOrder(x.v, operand)
	if !comparable {
		return false
	}
	switch name {
	case "$gt":
		return c > 0
	case "$gte":
		return c >= 0
	case "$lt":
		return c < 0
	case "$lte":
		return c <= 0
	}
	panic("unknown operator " + name)
}

func refRat(lit string) *big.Rat {
	r, ok := new(big.Rat).SetString(lit)
	if !ok {
		panic("not a number: " + lit)
	}
	return r
}

func refEqual(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		return ok && refRat(string(a)).Cmp(refRat(string(bn))) == 0
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !refEqual(a[i], ba[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, has := bm[k]
			if !has || !refEqual(av, bv) {
				return false
			}
		}
		return true
	}
	panic("unexpected JSON value")
}

var refDecimalString = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// refAsDecimal: a number, or a string spelling a decimal.
func refAsDecimal(v any) (*big.Rat, bool) {
	switch v := v.(type) {
	case json.Number:
		return refRat(string(v)), true
	case string:
		if refDecimalString.MatchString(v) {
			return refRat(v), true
		}
	}
	return nil, false
}

func refOrder(v, operand any) (int, bool) {
	if x, ok := refAsDecimal(v); ok {
		if y, ok := refAsDecimal(operand); ok {
			return x.Cmp(y), true
		}
	}
	vs, ok1 := v.(string)
	os, ok2 := operand.(string)
	if !ok1 || !ok2 {
		return 0, false
	}
	a, b := []rune(vs), []rune(os)
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1, true
			}
			return 1, true
		}
	}
	switch {
	case len(a) < len(b):
		return -1, true
	case len(a) > len(b):
		return 1, true
	}
	return 0, true
}
