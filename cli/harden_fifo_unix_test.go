//go:build unix

package cli

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOInputsRefused: a named pipe with no writer, given as a plan, a
// schema, a baseline or a .sql file, is refused at once rather than
// blocking the run, and the other plans are still analysed.
func TestFIFOInputsRefused(t *testing.T) {
	inRoot(t)
	fifo := filepath.Join(t.TempDir(), "plan.sqlplan")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	plan := "fixtures/queue/literal.sqlplan"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", fifo, plan}, "named pipe"},
		{[]string{"check", "--schema", fifo, plan}, "named pipe"},
		{[]string{"check", "--baseline", fifo, plan}, "named pipe"},
		{[]string{"explain", "-S", "127.0.0.1", fifo}, "named pipe"},
		{[]string{"check", "/dev/zero"}, "character device"},
		{[]string{"compare", plan, fifo}, "named pipe"},
		{[]string{"compare", "/dev/zero", plan}, "character device"},
	} {
		type result struct {
			out, errOut string
			code        int
		}
		done := make(chan result, 1)
		go func() {
			out, errOut, code := run(t, "", c.args...)
			done <- result{out, errOut, code}
		}()
		select {
		case r := <-done:
			if r.code != ExitError || !strings.Contains(r.errOut, c.want) {
				t.Errorf("%v: exit %d, stderr %q; want %q", c.args, r.code, r.errOut, c.want)
			}
			if c.args[1] == fifo && !strings.Contains(r.out, "in 1 file; 1 of 2 files could not be analysed") {
				t.Errorf("%v: the other plan was not analysed:\n%s", c.args, r.out)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: still blocked after 10 s", c.args)
		}
	}
}
