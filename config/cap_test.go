package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestManyUnknownKeysCapped: a file with 50,000 unknown keys reports the
// first MaxShown and counts the rest, instead of 50,000 lines.
func TestManyUnknownKeysCapped(t *testing.T) {
	var b strings.Builder
	const n = 50000
	for i := range n {
		fmt.Fprintf(&b, "key%d: x\n", i)
	}
	_, err := Parse(".planlint.yaml", []byte(b.String()))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 21 { // MaxShown (20) problems and the count of the rest
		t.Fatalf("%d lines, want 21", len(lines))
	}
	if want := fmt.Sprintf(".planlint.yaml: %d more problems not shown", n-MaxShown); lines[MaxShown] != want {
		t.Errorf("last line %q, want %q", lines[MaxShown], want)
	}
	if !strings.Contains(lines[0], `unknown key "key0"`) {
		t.Errorf("first line %q", lines[0])
	}
	if es, ok := err.(Errors); !ok || len(es) != n {
		t.Errorf("Errors holds %d problems, want all %d", len(es), n)
	}
}
