package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture/trace"
)

// traceFlags are --trace and --trace-data.
type traceFlags struct {
	file string
	data bool
	rec  *trace.Recorder
	out  *pendingOutput
}

func (t *traceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.file, "trace", "", "write every request sent to the server and the shape of every response (JSON, no passwords or connection strings) to this file")
	cmd.Flags().BoolVar(&t.data, "trace-data", false, "with --trace: also record row values and plan XML")
}

// recorder starts the recording, or returns nil without --trace. The file
// is opened now, as --output files are, so that a path that cannot be
// written stops the command before it connects, and never through a
// symbolic link.
func (t *traceFlags) recorder(env *Env, command string) (*trace.Recorder, error) {
	if t.file == "" {
		if t.data {
			return nil, usageError("--trace-data needs --trace FILE")
		}
		return nil, nil
	}
	out, err := openPending(env.resolve(t.file))
	if err != nil {
		return nil, &exitError{code: ExitError, err: fmt.Errorf("--trace %s: %w", t.file, err)}
	}
	t.out = out
	t.rec = trace.NewRecorder(command, t.data)
	return t.rec, nil
}

// write saves the recording; it runs whether the command succeeded or not.
func (t *traceFlags) write(env *Env) {
	if t.rec == nil || t.out == nil {
		return
	}
	out := t.out
	t.out = nil
	if err := out.write(t.rec.Write); err != nil {
		diagf(env.Stderr, "", "--trace %s: %v", t.file, err)
	}
}
