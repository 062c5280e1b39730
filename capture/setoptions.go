package capture

import (
	"fmt"
	"sort"
	"strings"
)

// SetOptionNames are the seven SET options that decide whether the
// optimizer may use a filtered index, in the order SQL Server lists them in
// StatementSetOptions.
var SetOptionNames = []string{
	"ANSI_NULLS", "ANSI_PADDING", "ANSI_WARNINGS", "ARITHABORT",
	"CONCAT_NULL_YIELDS_NULL", "NUMERIC_ROUNDABORT", "QUOTED_IDENTIFIER",
}

// SetOptions holds a value for each of SetOptionNames. The session sets all
// seven explicitly, so a plan never depends on server or login defaults.
type SetOptions map[string]bool

// DriverSetOptions are the options of a typical application driver
// (ODBC, OLE DB, SqlClient, JDBC, go-mssqldb): ARITHABORT and
// NUMERIC_ROUNDABORT off, the other five on.
func DriverSetOptions() SetOptions {
	return SetOptions{
		"ANSI_NULLS": true, "ANSI_PADDING": true, "ANSI_WARNINGS": true, "ARITHABORT": false,
		"CONCAT_NULL_YIELDS_NULL": true, "NUMERIC_ROUNDABORT": false, "QUOTED_IDENTIFIER": true,
	}
}

// SSMSSetOptions are SQL Server Management Studio's options: the driver
// defaults with ARITHABORT on.
func SSMSSetOptions() SetOptions {
	o := DriverSetOptions()
	o["ARITHABORT"] = true
	return o
}

// PresetSetOptions returns a named preset: "driver" (also "app" and
// "default") or "ssms".
func PresetSetOptions(name string) (SetOptions, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "driver", "app", "default", "":
		return DriverSetOptions(), nil
	case "ssms":
		return SSMSSetOptions(), nil
	}
	return nil, fmt.Errorf("unknown SET option preset %q (want driver or ssms)", name)
}

// Apply sets one option from "NAME=ON" or "NAME=OFF" (case-insensitive).
func (o SetOptions) Apply(assignment string) error {
	name, value, ok := strings.Cut(assignment, "=")
	if !ok {
		return fmt.Errorf("--set %q: expected NAME=ON or NAME=OFF", assignment)
	}
	name = strings.ToUpper(strings.TrimSpace(name))
	if !isSetOption(name) {
		return fmt.Errorf("--set %q: unknown option %s (want one of %s)", assignment, name, strings.Join(SetOptionNames, ", "))
	}
	switch strings.ToUpper(strings.TrimSpace(value)) {
	case "ON":
		o[name] = true
	case "OFF":
		o[name] = false
	default:
		return fmt.Errorf("--set %q: value must be ON or OFF, not %q", assignment, strings.TrimSpace(value))
	}
	return nil
}

func isSetOption(name string) bool {
	for _, n := range SetOptionNames {
		if n == name {
			return true
		}
	}
	return false
}

// Validate checks that exactly the seven options are present.
func (o SetOptions) Validate() error {
	var missing, unknown []string
	for _, n := range SetOptionNames {
		if _, ok := o[n]; !ok {
			missing = append(missing, n)
		}
	}
	for n := range o {
		if !isSetOption(n) {
			unknown = append(unknown, n)
		}
	}
	sort.Strings(unknown)
	switch {
	case len(unknown) > 0:
		return fmt.Errorf("unknown SET option %s", strings.Join(unknown, ", "))
	case len(missing) > 0:
		return fmt.Errorf("SET option %s not given", strings.Join(missing, ", "))
	}
	return nil
}

// SQL renders the options as one SET statement per option, in
// SetOptionNames order.
func (o SetOptions) SQL() string {
	var b strings.Builder
	for _, n := range SetOptionNames {
		v := "OFF"
		if o[n] {
			v = "ON"
		}
		fmt.Fprintf(&b, "SET %s %s;\n", n, v)
	}
	return b.String()
}

// Clone returns a copy.
func (o SetOptions) Clone() SetOptions {
	c := make(SetOptions, len(o))
	for k, v := range o {
		c[k] = v
	}
	return c
}
