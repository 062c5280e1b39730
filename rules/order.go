package rules

import (
	"fmt"
	"sync"
)

var (
	orderOnce sync.Once
	order     []*Rule
)

// runOrder returns every rule in an order where each rule runs after the
// rules it names in After: code order, each rule moved behind its
// dependencies, rules with After "*" last. A cycle or an unknown name is a
// programming error and panics (TestRuleMetadata catches it).
func runOrder() []*Rule {
	orderOnce.Do(func() { order = mustOrder(All()) })
	return order
}

func mustOrder(all []*Rule) []*Rule {
	byName := map[string]*Rule{}
	for _, r := range all {
		byName[r.Name] = r
	}
	var out, last []*Rule
	state := map[*Rule]int{} // 1 visiting, 2 done
	var visit func(r *Rule)
	visit = func(r *Rule) {
		switch state[r] {
		case 1:
			panic(fmt.Sprintf("rules: dependency cycle through %s", r.Name))
		case 2:
			return
		}
		state[r] = 1
		for _, name := range r.After {
			if name == "*" {
				continue
			}
			d := byName[name]
			if d == nil {
				panic(fmt.Sprintf("rules: %s runs after unknown rule %q", r.Name, name))
			}
			visit(d)
		}
		state[r] = 2
		out = append(out, r)
	}
	for _, r := range all {
		if runsLast(r) {
			last = append(last, r)
			continue
		}
		visit(r)
	}
	for _, r := range last {
		for _, name := range r.After {
			if name != "*" && byName[name] == nil {
				panic(fmt.Sprintf("rules: %s runs after unknown rule %q", r.Name, name))
			}
		}
		out = append(out, r)
	}
	return out
}

func runsLast(r *Rule) bool {
	for _, n := range r.After {
		if n == "*" {
			return true
		}
	}
	return false
}
