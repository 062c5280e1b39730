package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/planlint/planlint/rules"
)

func TestStarterLoadsAsDefaults(t *testing.T) {
	c, err := Parse("/repo/"+FileName, []byte(Starter()))
	if err != nil {
		t.Fatalf("Starter() does not load: %v", err)
	}
	if c.FailOn != nil || c.Redact != nil || c.Exclude != nil {
		t.Errorf("FailOn, Redact, Exclude = %v, %v, %q; want all unset", deref(c.FailOn), deref(c.Redact), c.Exclude)
	}
	if !reflect.DeepEqual(c.Rules, rules.Config{}) {
		t.Errorf("Rules = %+v; want none", c.Rules)
	}
	got, err := c.Resolve(Flags{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Default("/repo").Resolve(Flags{})
	if got.FailOn != want.FailOn || got.Redact != want.Redact {
		t.Errorf("starter settings %+v; defaults %+v", got, want)
	}
}

// TestStarterSettingsAreDefaults uncomments every setting of the starter
// file and checks it loads and states each default.
func TestStarterSettingsAreDefaults(t *testing.T) {
	c, err := Parse("/repo/"+FileName, []byte(starter(true)))
	if err != nil {
		t.Fatalf("starter with settings uncommented does not load: %v", err)
	}
	if deref(c.FailOn) != DefaultFailOn || deref(c.Redact) != DefaultRedact {
		t.Errorf("FailOn, Redact = %v, %v; want %v, %v", deref(c.FailOn), deref(c.Redact), DefaultFailOn, DefaultRedact)
	}
	if !reflect.DeepEqual(c.Exclude, []string{"legacy/**"}) {
		t.Errorf("Exclude = %q; want the legacy/** example", c.Exclude)
	}
	if c.Rules.Off != nil {
		t.Errorf("Off = %v; want none", c.Rules.Off)
	}
	for _, r := range rules.All() {
		if len(r.Params) == 0 {
			if got := c.Rules.Severity[r.Name]; got != r.Severity {
				t.Errorf("%s: severity %v; want its default %v", r.Name, got, r.Severity)
			}
			continue
		}
		if _, set := c.Rules.Severity[r.Name]; set {
			t.Errorf("%s: severity set in the starter; a rule with parameters grades its own findings", r.Name)
		}
		for _, p := range r.Params {
			got, ok := c.Rules.Params[r.Name][p.Name]
			if !ok || got != p.Default {
				t.Errorf("%s.%s = %v (set %v); want default %v", r.Name, p.Name, got, ok, p.Default)
			}
		}
		if len(c.Rules.Params[r.Name]) != len(r.Params) {
			t.Errorf("%s: %d parameters in the starter; the rule has %d", r.Name, len(c.Rules.Params[r.Name]), len(r.Params))
		}
	}
}

// TestStarterCommentsOutSettings checks that Starter() differs from the
// uncommented version only by "# " in front of settings, so that removing
// it is all a user has to do.
func TestStarterCommentsOutSettings(t *testing.T) {
	commented := strings.Split(Starter(), "\n")
	active := strings.Split(starter(true), "\n")
	if len(commented) != len(active) {
		t.Fatalf("%d lines commented, %d uncommented", len(commented), len(active))
	}
	settings := 0
	for i := range active {
		c, a := commented[i], active[i]
		if c == a {
			if strings.TrimSpace(a) != "" && !strings.HasPrefix(strings.TrimSpace(a), "#") && a != "rules:" {
				t.Errorf("line %d is an active setting: %q", i+1, a)
			}
			continue
		}
		// The "# " goes at the block's indentation: the top level or rules.
		if c != "# "+a && (!strings.HasPrefix(a, "  ") || c != "  # "+a[2:]) {
			t.Errorf("line %d: %q is not %q commented out", i+1, c, a)
		}
		settings++
	}
	if settings == 0 {
		t.Error("no commented-out settings")
	}
}

func TestStarterListsEveryRule(t *testing.T) {
	s := Starter()
	for _, r := range rules.All() {
		for _, want := range []string{
			"# " + r.Code + " " + r.Name + ": " + r.Summary,
			"# Severity by default: up to " + r.Severity.String() + ".",
		} {
			if !strings.Contains(s, want) {
				t.Errorf("starter lacks %q", want)
			}
		}
		for _, p := range r.Params {
			if !strings.Contains(s, p.Name+": ") || !strings.Contains(s, "# "+p.Help) {
				t.Errorf("starter lacks %s parameter %s with its help", r.Name, p.Name)
			}
		}
	}
	for _, key := range topKeys {
		if !strings.Contains(s, key+":") {
			t.Errorf("starter lacks %s", key)
		}
	}
}
