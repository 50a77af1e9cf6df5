package webhookfilter

import "slices"

// need is what filters can read of a payload value, so that decoding builds that and only
// skips over the rest (CONTRACT §21: what a payload costs is a pass over its bytes plus
// at most what the filters themselves hold, whatever the payload is made of). Scalars
// where a need is are always read; a nil need reads only them (a container there is kept
// as its kind: it equals no scalar and no range compares it).
type need struct {
	members map[string]*need // object members read: by a path, or by an object operand
	count   bool             // an object operand is compared here: count the object's members
	lengths []int            // the lengths of the array operands compared here
	items   []*need          // what those operands read of each item, all lengths together
}

// needOf is what a compiled filter reads: its paths, and at the end of each the shape of
// the operands compared there.
func needOf(root *node) *need {
	n := &need{}
	var walk func(*node)
	walk = func(nd *node) {
		for i := range nd.kids {
			walk(&nd.kids[i])
		}
		if nd.kind != nodePath {
			return
		}
		at := n
		for _, seg := range nd.path {
			at = at.member(seg)
		}
		for i := range nd.ops {
			for j := range nd.ops[i].vals {
				at.operand(&nd.ops[i].vals[j])
			}
		}
	}
	walk(root)
	return n
}

func (n *need) member(key string) *need {
	if n.members == nil {
		n.members = map[string]*need{}
	}
	m := n.members[key]
	if m == nil {
		m = &need{}
		n.members[key] = m
	}
	return m
}

// item is what index i of an array read here needs, made on first use.
func (n *need) item(i int) *need {
	for len(n.items) <= i {
		n.items = append(n.items, nil)
	}
	if n.items[i] == nil {
		n.items[i] = &need{}
	}
	return n.items[i]
}

// operand adds what comparing an operand here reads: an object's members by name and
// their count, an array's length and items by index. Scalars add nothing.
func (n *need) operand(o *operand) {
	switch o.kind {
	case 'o':
		n.count = true
		for i := range o.kids {
			n.member(o.kids[i].key).operand(&o.kids[i].val)
		}
	case 'a':
		if !slices.Contains(n.lengths, len(o.kids)) {
			n.lengths = append(n.lengths, len(o.kids))
		}
		for len(n.items) < len(o.kids) {
			n.items = append(n.items, nil)
		}
		for i := range o.kids {
			if k := &o.kids[i].val; k.kind == 'o' || k.kind == 'a' {
				n.item(i).operand(k)
			}
		}
	}
}

// merge adds what m reads to n (a Reader of several filters reads what any of them does).
func (n *need) merge(m *need) {
	for k, mk := range m.members {
		n.member(k).merge(mk)
	}
	n.count = n.count || m.count
	for _, l := range m.lengths {
		if !slices.Contains(n.lengths, l) {
			n.lengths = append(n.lengths, l)
		}
	}
	for len(n.items) < len(m.items) {
		n.items = append(n.items, nil)
	}
	for i, mi := range m.items {
		if mi != nil {
			n.item(i).merge(mi)
		}
	}
}
