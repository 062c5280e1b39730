// Package cli implements planlint's commands.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK       = 0 // nothing at or above --fail-on
	ExitFindings = 1 // findings at or above --fail-on
	ExitError    = 2 // usage, input, connection or internal error
)

// version is set at build time with -ldflags "-X ...cli.version=v1.2.3".
var version = ""

// Version returns planlint's version: the linker-set one, else the module
// version recorded in the binary, else "dev".
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// Env is what a command sees of its process: streams and environment.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Dir is the working directory (for config discovery); "" means the
	// process's.
	Dir string
}

// resolve makes a relative path relative to Dir (when set), as the
// process's working directory would.
func (env *Env) resolve(path string) string {
	if env.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(env.Dir, path)
}

// exitError carries an exit code through cobra. A nil err means the
// message was already printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: ExitError, err: fmt.Errorf(format, args...)}
}

// Main runs planlint with args and returns the exit code.
func Main(args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	root := newRoot(&env)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			diag(env.Stderr, "", ee.err.Error())
		}
		return ee.code
	}
	// cobra's own errors: unknown command, wrong argument count.
	if cmd == nil {
		cmd = root
	}
	diagf(env.Stderr, "", "%v (see '%s --help')", err, cmd.CommandPath())
	return ExitError
}

// needArgs is cobra.MinimumNArgs(1) with an error that names the
// arguments wanted.
func needArgs(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("%s needs at least one argument: %s", cmd.Name(), what)
		}
		return nil
	}
}

// noArgs is cobra.NoArgs with an error that says what is wrong, not
// "unknown command" for a command that has none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, not %q", cmd.Name(), args[0])
	}
	return nil
}

type globalFlags struct {
	color  string
	config string
}

func newRoot(env *Env) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "planlint",
		Short: "Find what is wrong with a SQL Server query plan before it hurts production",
		Long: "planlint analyses SQL Server showplan XML — saved plans, plans captured live exactly as the application\n" +
			"sends the statement, plans from the plan cache and Query Store — and reports unmatched filtered indexes,\n" +
			"parameterization traps, lookups, sorts, SET options and estimate skew, with the fix.",
		Version:           Version(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{},
	}
	root.PersistentFlags().StringVar(&g.color, "color", "auto", "colour output: auto, always or never (NO_COLOR is honoured)")
	root.PersistentFlags().StringVar(&g.config, "config", "", "configuration file (default: $PLANLINT_CONFIG, else .planlint.yaml found by walking up from the working directory)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v (see '%s --help')", err, c.CommandPath())
	})
	root.AddCommand(newCheckCmd(env, g), newCompareCmd(env, g), newInitCmd(env), newExplainCmd(env, g), newRulesCmd(env, g), newVersionCmd(env),
		newCacheCmd(env, g), newQuerystoreCmd(env, g), newDoctorCmd(env))
	root.SetVersionTemplate("planlint {{.Version}}\n") // as 'planlint version' prints it
	// Streams before the completion command, which keeps the writer it
	// finds when it is made.
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	completeValues(root, "color", "auto", "always", "never")
	fixCompletionCmd(root)
	return root
}

// useColor decides whether output to w gets ANSI colours.
func (g *globalFlags) useColor(env *Env, w io.Writer) (bool, error) {
	switch strings.ToLower(g.color) {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
	default:
		return false, usageError("--color must be auto, always or never, not %q", g.color)
	}
	if env.Getenv("NO_COLOR") != "" {
		return false, nil
	}
	if v := env.Getenv("CLICOLOR_FORCE"); v != "" && v != "0" {
		return true, nil
	}
	if v := env.Getenv("FORCE_COLOR"); v != "" && v != "0" {
		return true, nil
	}
	if env.Getenv("TERM") == "dumb" {
		return false, nil
	}
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())), nil
}

func newVersionCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print planlint's version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "planlint %s\n", Version())
			return err
		},
	}
}
