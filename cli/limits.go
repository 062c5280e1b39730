package cli

import "github.com/planlint/planlint/plan"

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
