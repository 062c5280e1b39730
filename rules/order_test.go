package rules

import (
	"strings"
	"testing"
)

func TestRunOrderHonoursAfter(t *testing.T) {
	a := &Rule{Code: "PL9", Name: "a", After: []string{"b"}}
	b := &Rule{Code: "PL8", Name: "b", After: []string{"c"}}
	c := &Rule{Code: "PL7", Name: "c"}
	star := &Rule{Code: "PL1", Name: "star", After: []string{"*"}}
	var names []string
	for _, r := range mustOrder([]*Rule{star, c, a, b}) {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "c b a star" {
		t.Fatalf("order %q, want %q", got, "c b a star")
	}
}

func TestRunOrderRefusesCyclesAndUnknownRules(t *testing.T) {
	for name, rs := range map[string][]*Rule{
		"cycle":   {{Name: "x", After: []string{"y"}}, {Name: "y", After: []string{"x"}}},
		"unknown": {{Name: "x", After: []string{"nope"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			mustOrder(rs)
		}()
	}
}

// TestRealRulesHaveAnOrder: the registered rules' After lists are valid.
func TestRealRulesHaveAnOrder(t *testing.T) {
	if got, want := len(mustOrder(All())), len(All()); got != want {
		t.Fatalf("%d rules ordered, %d registered", got, want)
	}
}
