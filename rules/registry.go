package rules

import "sort"

// registered holds every rule; each rule's file adds it with register.
var registered []*Rule

// register adds a rule to the registry; rule files call it from init.
func register(r *Rule) { registered = append(registered, r) }

// All returns every rule in code order. Codes are stable and never reused.
func All() []*Rule {
	out := append([]*Rule(nil), registered...)
	sort.Slice(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
