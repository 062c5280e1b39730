//go:build linux

package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair, skipping the test when the system
// has none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("cannot unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("cannot name the pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("cannot open the pseudo-terminal: %v", err)
	}
	return m, s
}

// TestPullProgressOnTerminal: a pull prints one progress line per
// statement on stderr when it is a terminal, and none otherwise.
func TestPullProgressOnTerminal(t *testing.T) {
	inRoot(t)
	ft := &fakeTriage{plans: triagePlans(t), storeState: "READ_WRITE"}
	srv := ft.start(t)
	for _, cmd := range []string{"cache", "querystore"} {
		t.Run(cmd, func(t *testing.T) {
			master, slave := openPTY(t)
			defer master.Close()
			var screen bytes.Buffer
			done := make(chan struct{})
			go func() {
				io.Copy(&screen, master) // ends with EIO once the slave is closed
				close(done)
			}()
			vars := dsnVars(srv)
			var out bytes.Buffer
			code := Main([]string{cmd, "--format", "json"}, Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: slave,
				Getenv: func(k string) string { return vars[k] }})
			slave.Close()
			<-done
			if code != ExitFindings {
				t.Fatalf("exit %d\n%s", code, screen.String())
			}
			got := strings.ReplaceAll(screen.String(), "\r\n", "\n")
			for i := 1; i <= 5; i++ {
				if line := fmt.Sprintf("planlint: pulling plans: %d of 5\n", i); !strings.Contains(got, line) {
					t.Errorf("terminal lacks %q:\n%s", line, got)
				}
			}
			if !strings.Contains(got, "planlint: connected to ") {
				t.Errorf("terminal lacks the connection line:\n%s", got)
			}
			_, errOut, _ := runWith(t, vars, "", cmd, "--format", "json")
			if strings.Contains(errOut, "pulling plans") {
				t.Errorf("progress printed to a stderr that is not a terminal: %q", errOut)
			}
		})
	}
}
