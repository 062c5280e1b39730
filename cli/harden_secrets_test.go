package cli

import (
	"net"
	"strings"
	"testing"
)

// TestConnectionStringSecretsNeverPrinted: the driver's change password,
// a one-slash URL, and secrets in --compare-with connection= stay out of
// every message; a secret on the command line draws the -P warning.
func TestConnectionStringSecretsNeverPrinted(t *testing.T) {
	inRoot(t)
	const secret = "Ch4ngeMe-S3cret"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	host, port, _ := net.SplitHostPort(refused)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"URL change password", []string{"explain", "--connection-string", "sqlserver://sa:pw12@" + refused + "?change+password=" + secret, "fixtures/queue/literal.sql"}},
		{"ADO change password", []string{"explain", "--connection-string", "server=" + host + "," + port + ";user id=sa;change password=" + secret, "fixtures/queue/literal.sql"}},
		{"ODBC change password", []string{"explain", "--connection-string", "odbc:server=" + host + ";port=" + port + ";change password={" + secret + "}", "fixtures/queue/literal.sql"}},
		{"one slash", []string{"explain", "--connection-string", "sqlserver:/sa:" + secret + "@" + refused, "fixtures/queue/literal.sql"}},
		{"cache", []string{"cache", "--connection-string", "sqlserver://sa:pw12@" + refused + "?change+password=" + secret}},
		{"querystore", []string{"querystore", "--connection-string", "sqlserver://sa:pw12@" + refused + "?change+password=" + secret}},
		{"compare-with connection", []string{"explain", "-S", host + "," + port, "--compare-with", "connection=sqlserver://sa:pw12@" + refused + "?change+password=" + secret, "fixtures/queue/literal.sql"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{tc.args[0], "--connect-timeout", "3s"}, tc.args[1:]...)
			out, errOut, code := runWith(t, nil, "", args...)
			if code != ExitError {
				t.Errorf("exit %d", code)
			}
			if strings.Contains(out, secret) || strings.Contains(errOut, secret) {
				t.Errorf("secret printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
			if strings.Contains(strings.Join(tc.args, " "), "--connection-string") && !strings.Contains(errOut, "holds a secret on the command line") {
				t.Errorf("no warning: %s", errOut)
			}
		})
	}
}
