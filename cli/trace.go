package cli

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture/trace"
)

// traceFlags are --trace and --trace-data.
type traceFlags struct {
	file string
	data bool
	rec  *trace.Recorder
}

func (t *traceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.file, "trace", "", "write every request sent to the server and the shape of every response (JSON, no passwords or connection strings) to this file")
	cmd.Flags().BoolVar(&t.data, "trace-data", false, "with --trace: also record row values and plan XML")
}

// recorder starts the recording, or returns nil without --trace.
func (t *traceFlags) recorder(command string) (*trace.Recorder, error) {
	if t.file == "" {
		if t.data {
			return nil, usageError("--trace-data needs --trace FILE")
		}
		return nil, nil
	}
	t.rec = trace.NewRecorder(command, t.data)
	return t.rec, nil
}

// write saves the recording; it runs whether the command succeeded or not.
func (t *traceFlags) write(env *Env) {
	if t.rec == nil {
		return
	}
	f, err := os.Create(env.resolve(t.file))
	if err == nil {
		err = t.rec.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		diagf(env.Stderr, "", "writing the trace: %v", err)
	}
}
