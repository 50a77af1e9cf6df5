package webhookfilter

import "github.com/revops/revops/internal/platform/decimal"

// itemSet is a long $in or $nin list's scalar items by value, so that its test is one
// lookup rather than a comparison per item; arrays and objects among the items are still
// compared one by one. A lookup first checks that some item has the value's length, so
// that hashing a long payload string costs no more than comparing it would.
type itemSet struct {
	strs     map[string]struct{}
	strLens  map[int]struct{}
	nums     map[string]struct{} // by decimal key
	numLens  map[int]struct{}    // digits
	null     bool
	bools    [2]bool // false, true
	others   []int   // indexes of the array and object items
	hasBools bool
}

// minSetItems is the length from which a list is looked up rather than walked.
const minSetItems = 8

func newItemSet(vals []operand) *itemSet {
	s := &itemSet{strs: map[string]struct{}{}, strLens: map[int]struct{}{}, nums: map[string]struct{}{}, numLens: map[int]struct{}{}}
	var buf [96]byte
	for i := range vals {
		switch v := &vals[i]; v.kind {
		case 's':
			s.strs[v.str], s.strLens[len(v.str)] = struct{}{}, struct{}{}
		case 'n':
			s.nums[string(v.dec.AppendKey(buf[:0]))], s.numLens[v.dec.Digits()] = struct{}{}, struct{}{}
		case 'z':
			s.null = true
		case 'b':
			s.bools[b2i(v.b)] = true
		default:
			s.others = append(s.others, i)
		}
	}
	return s
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inSet is anyEqual for a list with a set: a step for the lookup, and the bytes it hashes
// (within what Parse counted for the item it may find).
func (e *evaluation) inSet(o *op, v any) bool {
	s := o.set
	switch x := v.(type) {
	case nil:
		return e.spend(1) && s.null
	case bool:
		return e.spend(1) && s.bools[b2i(x)]
	case *decimal.Decimal:
		if _, ok := s.numLens[x.Digits()]; !ok {
			return e.spend(1) && false
		}
		var buf [96]byte
		_, ok := s.nums[string(x.AppendKey(buf[:0]))]
		return e.spend(1+byteSteps(x.Digits())) && ok
	case *array, *object:
		for _, i := range s.others {
			if e.equal(&o.vals[i], v) {
				return true
			}
		}
		return false
	}
	str, _ := stringOf(v)
	if _, ok := s.strLens[len(str)]; !ok {
		return e.spend(1) && false
	}
	_, ok := s.strs[str]
	return e.spend(1+byteSteps(len(str))) && ok
}
