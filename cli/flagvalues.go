package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// byteSize is a size flag that takes a byte count with an optional unit:
// 1048576, 1MiB, 1 GiB, 500KB, 2g.
type byteSize int64

var byteUnits = []struct {
	suffix string
	factor int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1000}, {"mb", 1000 * 1000}, {"gb", 1000 * 1000 * 1000}, {"tb", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"b", 1},
}

// String writes the size in the largest binary unit that holds it
// exactly (1GiB, 64MiB, 1500), so help shows the defaults as the README
// writes them; Set reads it back to the same value.
func (s *byteSize) String() string {
	n := int64(*s)
	for _, u := range []struct {
		name   string
		factor int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.factor && n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
func (s *byteSize) Type() string { return "size" }

func (s *byteSize) Set(v string) error {
	text := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(v), " ", ""))
	factor := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(text, u.suffix) {
			text, factor = strings.TrimSuffix(text, u.suffix), u.factor
			break
		}
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || !(n*float64(factor) >= 1) || n*float64(factor) > 1<<62 { // under one byte, and NaN, are refused
		return fmt.Errorf("want a positive size such as 1048576, 500KB, 10MiB or 1GiB, not %q", v)
	}
	*s = byteSize(n * float64(factor))
	return nil
}

// completeValues offers fixed values for a flag in shell completion.
func completeValues(cmd *cobra.Command, flag string, values ...string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	})
}

// fixCompletionCmd makes 'completion SHELL' with an unknown shell an error
// instead of help with exit status 0.
func fixCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unknown shell %q for completion (want %s)", args[0], strings.Join(shells, ", "))
			}
			return cmd.Help()
		}
	}
}
