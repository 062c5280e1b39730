// Package config reads planlint's configuration file, .planlint.yaml.
//
// The file is found by walking up from the working directory; the --config
// flag and the PLANLINT_CONFIG environment variable name one explicitly. The
// package never reads flags or the environment itself: the CLI passes them in
// through Options, and applies its own flags over the file with Resolve.
package config

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/planlint/planlint/rules"
)

// File names looked for during discovery, in order.
const (
	FileName    = ".planlint.yaml"
	AltFileName = ".planlint.yml"
)

// EnvVar names a config file explicitly, like --config (which beats it).
const EnvVar = "PLANLINT_CONFIG"

// Defaults for settings the file leaves out.
const (
	DefaultFailOn = "error"
	DefaultRedact = true
)

// Config is the content of one configuration file.
type Config struct {
	// Path is the file the settings came from; "" when no file was found.
	Path string
	// Dir is the directory exclude globs are relative to: the file's
	// directory, or WorkDir when there is no file.
	Dir string
	// WorkDir resolves relative paths given to Excluded.
	WorkDir string
	// FailOn is "error", "warning", "info" or "none"; nil when not set.
	FailOn *string
	// Redact masks literals and parameter values in shared outputs; nil
	// when not set.
	Redact *bool
	// Exclude holds globs relative to Dir (see Excluded), as cleaned at
	// load: forward slashes, no leading "./" or trailing "/".
	Exclude []string
	// Rules holds per-rule settings keyed by rule name (codes are resolved
	// at load).
	Rules rules.Config
	// Suppress are the suppress entries, in file order.
	Suppress []Suppression

	failOnLine int
	redactLine int
}

// Default returns the configuration used when no file exists, with
// relative paths resolved against workDir.
func Default(workDir string) *Config {
	return &Config{Dir: workDir, WorkDir: workDir}
}

// Flags are command-line values that beat the file; nil means the flag was
// not given.
type Flags struct {
	FailOn *string
	Redact *bool
}

// Settings are the effective run-wide settings and where each came from.
type Settings struct {
	// FailOn is "error", "warning", "info" or "none".
	FailOn string
	// Threshold is the lowest severity that fails the run; 0 for "none".
	Threshold rules.Severity
	// FailOnSource is "default", "--fail-on" or "FILE:LINE".
	FailOnSource string
	Redact       bool
	// RedactSource is "default", "--redact" or "FILE:LINE".
	RedactSource string
}

// Resolve applies flags over the file over the defaults.
func (c *Config) Resolve(f Flags) (Settings, error) {
	s := Settings{FailOn: DefaultFailOn, FailOnSource: "default", Redact: DefaultRedact, RedactSource: "default"}
	if c.FailOn != nil {
		s.FailOn, s.FailOnSource = *c.FailOn, c.source(c.failOnLine)
	}
	if f.FailOn != nil {
		v, ok := normalizeFailOn(*f.FailOn)
		if !ok {
			return Settings{}, fmt.Errorf("--fail-on: expected %s; got %q", failOnChoices, *f.FailOn)
		}
		s.FailOn, s.FailOnSource = v, "--fail-on"
	}
	if c.Redact != nil {
		s.Redact, s.RedactSource = *c.Redact, c.source(c.redactLine)
	}
	if f.Redact != nil {
		s.Redact, s.RedactSource = *f.Redact, "--redact"
	}
	s.Threshold, _ = ParseFailOn(s.FailOn)
	return s, nil
}

func (c *Config) source(line int) string {
	return c.Path + ":" + strconv.Itoa(line)
}

const failOnChoices = "error, warning, info or none"

// ParseFailOn parses a fail_on value (case-insensitive) into the lowest
// failing severity; "none" gives 0, which no finding reaches.
func ParseFailOn(s string) (rules.Severity, error) {
	v, ok := normalizeFailOn(s)
	if !ok {
		return 0, fmt.Errorf("expected %s; got %q", failOnChoices, s)
	}
	if v == "none" {
		return 0, nil
	}
	return rules.ParseSeverity(v)
}

// normalizeFailOn returns the canonical spelling of a fail_on value.
func normalizeFailOn(s string) (string, bool) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "error", "warning", "info", "none":
		return v, true
	}
	return "", false
}
