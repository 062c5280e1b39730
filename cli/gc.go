package cli

import (
	"os"
	"runtime/debug"
)

// tuneGCForDecoding trades memory for speed in the commands that decode
// plan files (check, compare): decoding allocates many short-lived objects
// while the live heap stays small, so the collector may run less often;
// main's soft memory limit makes it work harder before memory grows large.
// The commands that talk to a server keep the default, since their time
// goes to the round trips and their garbage (the driver's UTF-16 copies of
// batches and plans) would only raise the peak. GOGC in the environment
// wins.
func tuneGCForDecoding() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
