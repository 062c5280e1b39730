package cli

import (
	"github.com/spf13/cobra"

	"github.com/planlint/planlint/plan"
)

// checkLimits validates --max-file-size and --max-depth.
func checkLimits(maxFileSize int64, maxDepth int) error {
	if maxFileSize <= 0 || maxDepth <= 0 {
		return usageError("--max-file-size and --max-depth must be positive")
	}
	if maxDepth > plan.MaxDepthCeiling {
		return usageError("--max-depth %d: at most %d (deeper trees would exhaust the stack)", maxDepth, plan.MaxDepthCeiling)
	}
	return nil
}

// limitFlags are the --max-file-size and --max-depth flags of the commands
// that read plan files (check, compare).
type limitFlags struct {
	maxFileSize byteSize
	maxDepth    int
}

func (l *limitFlags) register(cmd *cobra.Command) {
	l.maxFileSize = byteSize(plan.DefaultMaxBytes)
	cmd.Flags().Var(&l.maxFileSize, "max-file-size", "refuse plans larger than this size (bytes, or with a unit: 500KB, 10MiB, 1GiB)")
	cmd.Flags().IntVar(&l.maxDepth, "max-depth", plan.DefaultMaxDepth, "refuse plans nested deeper than this many XML elements")
}

// options validates the flags and returns them as parse options.
func (l *limitFlags) options() (plan.Options, error) {
	if err := checkLimits(int64(l.maxFileSize), l.maxDepth); err != nil {
		return plan.Options{}, err
	}
	return plan.Options{MaxBytes: int64(l.maxFileSize), MaxDepth: l.maxDepth}, nil
}
