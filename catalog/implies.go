package catalog

import "strings"

// ImpliedBy reports whether a query whose predicate on the table is the
// AND of preds can only return rows inside the filter, which is when the
// optimizer may use the filtered index. preds are conjuncts on the same
// table (column op literal, IN lists, IS [NOT] NULL), in the Conjunct
// shape; operators may also be spelled !=, !< and !>. A filter conjunct is
// implied when the preds on its column, taken together, allow no value the
// conjunct rejects: x = 0 implies x = 0, x IN (0, 1), x <> 2, x >= 0 and
// x IS NOT NULL; x > 5 implies x > 3, x >= 4 and x <> 1; x >= 5 AND
// x <> 5 implies x > 5.
//
// The answer is conservative: literals are compared with the rules of
// CompareLiterals, so anything whose truth depends on the column's type or
// collation is not implied. Preds comparing with NULL and preds that
// contradict each other imply nothing. missing lists the filter conjuncts
// that are not implied. A nil or empty filter is implied by anything.
func (f *Filter) ImpliedBy(preds []Conjunct) (implied bool, missing []Conjunct) {
	if f == nil {
		return true, nil
	}
	// The preds are grouped by column and each column's domain is built
	// once: a filter of thousands of conjuncts must not rescan (and reparse)
	// every pred for each of them.
	byColumn := map[string][]Conjunct{}
	for _, p := range preds {
		k := columnKey(p.Column)
		byColumn[k] = append(byColumn[k], p)
	}
	domains := map[string]*domain{}
	for _, fc := range f.Conjuncts {
		k := columnKey(fc.Column)
		d, ok := domains[k]
		if !ok {
			d = domainOf(fc.Column, byColumn[k])
			domains[k] = d
		}
		if !d.implies(fc) {
			missing = append(missing, fc)
		}
	}
	return len(missing) == 0, missing
}

// columnKey groups names that sameName takes for one column.
func columnKey(name string) string {
	return strings.ToUpper(strings.ToLower(normName(name)))
}

// bound is one end of a range: value, and whether the value itself is
// excluded.
type bound struct {
	value  literal
	strict bool
}

// domain is what the preds allow for one column. It over-approximates:
// any value a row may hold is in it.
type domain struct {
	isNull, notNull bool
	hasSet          bool      // set holds every value allowed
	set             []literal // from = and IN
	lower, upper    []bound   // from > >= and < <=
	excluded        []literal // from <>
}

// domainOf collects the preds on column.
func domainOf(column string, preds []Conjunct) *domain {
	d := &domain{}
	for _, p := range preds {
		if !sameName(p.Column, column) {
			continue
		}
		op := normalizeOp(p.Op)
		switch op {
		case "IS NULL":
			d.isNull = true
			continue
		case "IS NOT NULL":
			d.notNull = true
			continue
		}
		vals := nonNull(p.Values)
		if len(vals) == 0 || (op != "IN" && len(p.Values) != 1) {
			continue // x = NULL is never true; ignoring it only weakens the domain
		}
		switch op {
		case "=", "IN":
			d.addSet(vals)
		case "<>":
			d.excluded = append(d.excluded, vals[0])
		case ">", ">=":
			d.lower = append(d.lower, bound{vals[0], op == ">"})
		case "<", "<=":
			d.upper = append(d.upper, bound{vals[0], op == "<"})
		default:
			continue
		}
		d.notNull = true
	}
	d.pinRange()
	d.pruneSet()
	return d
}

// addSet intersects the allowed set with vals, keeping any value that may
// equal one of vals.
func (d *domain) addSet(vals []literal) {
	if !d.hasSet {
		d.hasSet, d.set = true, vals
		return
	}
	var kept []literal
	for _, v := range d.set {
		for _, w := range vals {
			if !compareLiterals(v, w).distinct {
				kept = append(kept, v)
				break
			}
		}
	}
	d.set = kept
}

// pinRange turns x >= v AND x <= v into the set {v}.
func (d *domain) pinRange() {
	if d.hasSet {
		return
	}
	for _, lo := range d.lower {
		for _, hi := range d.upper {
			if !lo.strict && !hi.strict && compareLiterals(lo.value, hi.value).equal() {
				d.hasSet, d.set = true, []literal{lo.value}
				return
			}
		}
	}
}

// pruneSet drops set values the ranges or exclusions certainly reject.
func (d *domain) pruneSet() {
	if !d.hasSet {
		return
	}
	var kept []literal
	for _, v := range d.set {
		if d.rejects(v) {
			continue
		}
		kept = append(kept, v)
	}
	d.set = kept
}

func (d *domain) rejects(v literal) bool {
	for _, e := range d.excluded {
		if compareLiterals(v, e).equal() {
			return true
		}
	}
	for _, lo := range d.lower {
		if r := compareLiterals(v, lo.value); r.ordered && (r.cmp < 0 || r.cmp == 0 && lo.strict) {
			return true
		}
	}
	for _, hi := range d.upper {
		if r := compareLiterals(v, hi.value); r.ordered && (r.cmp > 0 || r.cmp == 0 && hi.strict) {
			return true
		}
	}
	return false
}

// contradictory reports whether no row can satisfy the preds. Such a
// query needs no index, so it is taken to imply nothing.
func (d *domain) contradictory() bool {
	return d.isNull && d.notNull || d.hasSet && len(d.set) == 0
}

// implies reports whether every value in the domain satisfies fc.
func (d *domain) implies(fc Conjunct) bool {
	if d.contradictory() {
		return false
	}
	op := normalizeOp(fc.Op)
	switch op {
	case "IS NULL":
		return d.isNull
	case "IS NOT NULL":
		return d.notNull
	}
	vals := nonNull(fc.Values)
	if len(vals) == 0 || (op != "IN" && len(fc.Values) != 1) {
		return false
	}
	switch op {
	case "=", "IN":
		return d.hasSet && d.allSatisfy(func(v literal) bool { return inSet(v, vals) })
	case "<>":
		u := vals[0]
		if d.hasSet && d.allSatisfy(func(v literal) bool { return compareLiterals(v, u).distinct }) {
			return true
		}
		for _, e := range d.excluded {
			if compareLiterals(e, u).equal() {
				return true
			}
		}
		return d.lowerAbove(u, true) || d.upperBelow(u, true)
	case ">", ">=":
		u, strict := vals[0], op == ">"
		return d.hasSet && d.allSatisfy(func(v literal) bool { return above(compareLiterals(v, u), strict) }) ||
			d.lowerAbove(u, strict)
	case "<", "<=":
		u, strict := vals[0], op == "<"
		return d.hasSet && d.allSatisfy(func(v literal) bool { return below(compareLiterals(v, u), strict) }) ||
			d.upperBelow(u, strict)
	}
	return false
}

func (d *domain) allSatisfy(ok func(literal) bool) bool {
	for _, v := range d.set {
		if !ok(v) {
			return false
		}
	}
	return true
}

// lowerAbove reports whether some lower bound keeps every value above u
// (strict) or at least u.
func (d *domain) lowerAbove(u literal, strict bool) bool {
	for _, lo := range d.lower {
		r := compareLiterals(lo.value, u)
		if above(r, false) && (r.cmp > 0 || !strict || lo.strict || d.excludes(u)) {
			return true
		}
	}
	return false
}

// upperBelow is lowerAbove for upper bounds.
func (d *domain) upperBelow(u literal, strict bool) bool {
	for _, hi := range d.upper {
		r := compareLiterals(hi.value, u)
		if below(r, false) && (r.cmp < 0 || !strict || hi.strict || d.excludes(u)) {
			return true
		}
	}
	return false
}

func (d *domain) excludes(u literal) bool {
	for _, e := range d.excluded {
		if compareLiterals(e, u).equal() {
			return true
		}
	}
	return false
}

// above reports whether r says certainly greater (strict) or greater or
// equal.
func above(r relation, strict bool) bool {
	return r.ordered && (r.cmp > 0 || !strict && r.cmp == 0)
}

func below(r relation, strict bool) bool {
	return r.ordered && (r.cmp < 0 || !strict && r.cmp == 0)
}

func inSet(v literal, vals []literal) bool {
	for _, w := range vals {
		if compareLiterals(v, w).equal() {
			return true
		}
	}
	return false
}

// nonNull parses values, dropping NULLs (which no comparison matches).
func nonNull(values []string) []literal {
	var out []literal
	for _, s := range values {
		if l := parseLiteral(s); l.kind != litNull {
			out = append(out, l)
		}
	}
	return out
}

// normalizeOp maps operator spellings to the Conjunct ones.
func normalizeOp(op string) string {
	op = strings.ToUpper(strings.Join(strings.Fields(op), " "))
	switch op {
	case "!=":
		return "<>"
	case "!<":
		return ">="
	case "!>":
		return "<="
	}
	return op
}
