package cli

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestSilentServerCommands: explain, cache and querystore against a server
// that accepts TCP and never answers give up at --connect-timeout.
func TestSilentServerCommands(t *testing.T) {
	inRoot(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, args := range [][]string{
		{"explain", "fixtures/queue/literal.sql"},
		{"cache"},
		{"querystore"},
	} {
		start := time.Now()
		_, errOut, code := run(t, "", append([]string{args[0], "-S", host + "," + port, "--connect-timeout", "1s"}, args[1:]...)...)
		if took := time.Since(start); took > 8*time.Second { // a hang guard: loaded CI machines stretch the 1 s
			t.Errorf("%s took %s", args[0], took.Round(time.Millisecond))
		}
		if code != ExitError || !strings.Contains(errOut, "no answer within 1s") {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, errOut)
		}
	}
}
