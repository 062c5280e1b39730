package cli

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture/capturetest"
	"github.com/planlint/planlint/capture/tdstest"
)

// resolveFlags parses connection flags as explain would and returns what
// go-mssqldb would read from the resulting connection string.
func resolveFlags(t *testing.T, vars map[string]string, stdin string, args ...string) (msdsn.Config, string, error) {
	t.Helper()
	c := &connFlags{}
	cmd := &cobra.Command{Use: "x"}
	c.register(cmd)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	env := &Env{Stdin: strings.NewReader(stdin), Stderr: &errb, Stdout: &strings.Builder{}, Getenv: func(k string) string { return vars[k] }}
	o, err := c.options(cmd, env, false)
	if err != nil {
		return msdsn.Config{}, errb.String(), err
	}
	conn, err := o.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p, err := msdsn.Parse(conn.DSN)
	if err != nil {
		t.Fatal(err)
	}
	return p, errb.String(), nil
}

func TestConnFlagsAndEnvironment(t *testing.T) {
	sqlcmdEnv := map[string]string{"SQLCMDSERVER": "envhost,1500", "SQLCMDDBNAME": "EnvDb", "SQLCMDUSER": "envuser", "SQLCMDPASSWORD": "envpass"}
	tests := []struct {
		name  string
		vars  map[string]string
		stdin string
		args  []string
		host  string
		port  uint64
		db    string
		user  string
		pass  string
		warn  string
	}{
		{"sqlcmd environment", sqlcmdEnv, "", nil, "envhost", 1500, "EnvDb", "envuser", "envpass", ""},
		{"flags beat environment", sqlcmdEnv, "", []string{"-S", "flaghost", "-d", "FlagDb", "-U", "flaguser"}, "flaghost", 0, "FlagDb", "flaguser", "envpass", ""},
		{"-P warns", nil, "", []string{"-S", "h", "-P", "argvpass"}, "h", 0, "", "", "argvpass", "other users can read it"},
		{"password from stdin", sqlcmdEnv, "stdinpass\r\nignored", []string{"--password-stdin"}, "envhost", 1500, "EnvDb", "envuser", "stdinpass", ""},
		{"connection string ignores SQLCMD server, db and user", map[string]string{"PLANLINT_CONNECTION": "sqlserver://cs@cshost/inst?database=CsDb", "SQLCMDSERVER": "x", "SQLCMDDBNAME": "y", "SQLCMDUSER": "z", "SQLCMDPASSWORD": "envpass"},
			"", nil, "cshost", 0, "CsDb", "cs", "envpass", ""},
		{"connection string password beats SQLCMDPASSWORD", map[string]string{"SQLCMDPASSWORD": "envpass"}, "",
			[]string{"--connection-string", "server=cshost;user id=cs;password=cspass"}, "cshost", 0, "", "cs", "cspass", "holds a secret on the command line"},
		{"-S flag beats PLANLINT_CONNECTION", map[string]string{"PLANLINT_CONNECTION": "server=cshost"}, "", []string{"-S", "flaghost"}, "flaghost", 0, "", "", "", ""},
		{"flags override the connection string", nil, "", []string{"--connection-string", "odbc:server=cshost;database=A", "-d", "B", "-U", "u"}, "cshost", 0, "B", "u", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, stderr, err := resolveFlags(t, tt.vars, tt.stdin, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if p.Host != tt.host || p.Port != tt.port || p.Database != tt.db || p.User != tt.user || p.Password != tt.pass {
				t.Errorf("host %q port %d db %q user %q password %q", p.Host, p.Port, p.Database, p.User, p.Password)
			}
			if !strings.HasPrefix(p.AppName, "planlint/") {
				t.Errorf("app name = %q", p.AppName)
			}
			if (tt.warn == "") != (stderr == "") || !strings.Contains(stderr, tt.warn) {
				t.Errorf("stderr = %q, want %q", stderr, tt.warn)
			}
		})
	}
}

func TestConnFlagErrors(t *testing.T) {
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"no server", "", nil, "no server given"},
		{"server and connection string", "", []string{"-S", "h", "--connection-string", "server=h"}, "not both"},
		{"two password sources", "x", []string{"-S", "h", "-P", "x", "--password-stdin"}, "-P/--password or --password-stdin"},
		{"empty stdin", "\n", []string{"-S", "h", "--password-stdin"}, "no password on standard input"},
		{"bad timeout", "", []string{"-S", "h", "--query-timeout", "0s"}, "must be positive"},
		{"device code to a pipe", "", []string{"-S", "h", "--authentication-method", "ActiveDirectoryDeviceCode"}, "prints its prompt on standard output"},
		{"interactive in the connection string", "", []string{"--connection-string", "sqlserver://h?fedauth=ActiveDirectoryInteractive&applicationclientid=x"}, "prints its prompt on standard output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := resolveFlags(t, nil, tt.stdin, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestPasswordNeverPrinted runs failing connections with a known password,
// given every way planlint accepts one, and checks that it appears on
// neither stdout nor stderr.
func TestPasswordNeverPrinted(t *testing.T) {
	inRoot(t)
	const secret = "Pl@nl1nt-S3cret;Pw"
	enc := url.QueryEscape(secret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	host, port, _ := net.SplitHostPort(refused)
	srv := capturetest.Start(t, capturetest.Config{Password: "the right one"})
	live := srv.Addr()
	liveHost, livePort, _ := net.SplitHostPort(live)
	cases := []struct {
		name  string
		vars  map[string]string
		stdin string
		args  []string
		want  string // what stderr must say
	}{
		{"-P, refused", nil, "", []string{"-S", host + "," + port, "-U", "sa", "-P", secret}, "connection refused"},
		{"-P, login failed", nil, "", []string{"-S", liveHost + "," + livePort, "-U", "sa", "-P", secret}, "Login failed"},
		{"SQLCMDPASSWORD, login failed", map[string]string{"SQLCMDSERVER": liveHost + "," + livePort, "SQLCMDUSER": "sa", "SQLCMDPASSWORD": secret}, "", nil, "Login failed"},
		{"stdin, login failed", nil, secret + "\n", []string{"-S", liveHost + "," + livePort, "-U", "sa", "--password-stdin", "--encrypt=disable"}, "Login failed"},
		{"URL, refused", nil, "", []string{"--connection-string", "sqlserver://sa:" + enc + "@" + refused}, "connection refused"},
		{"URL, login failed", map[string]string{"PLANLINT_CONNECTION": "sqlserver://sa:" + enc + "@" + live + "?encrypt=disable"}, "", nil, "Login failed"},
		{"ADO, login failed", nil, "", []string{"--connection-string", "server=" + liveHost + "," + livePort + `;user id=sa;password="` + secret + `";encrypt=disable`}, "Login failed"},
		{"ODBC, login failed", nil, "", []string{"--connection-string", "odbc:server=" + liveHost + ";port=" + livePort + ";user id=sa;password={" + secret + "};encrypt=disable"}, "Login failed"},
		{"ADO, invalid parameter", nil, "", []string{"--connection-string", `server=h;password="` + secret + `";packet size=huge`}, "invalid packet size"},
		{"URL, malformed", nil, "", []string{"--connection-string", "sqlserver://sa:" + secret + "@h:notaport"}, "invalid URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, format := range []string{"text", "json"} {
				args := append(append([]string{"explain", "--format", format, "--connect-timeout", "5s"}, tc.args...), "fixtures/queue/literal.sql")
				out, errOut, code := runWith(t, tc.vars, tc.stdin, args...)
				if code != ExitError {
					t.Errorf("exit %d, want %d", code, ExitError)
				}
				if !strings.Contains(errOut, tc.want) {
					t.Errorf("stderr does not say %q: %s", tc.want, errOut)
				}
				for _, s := range []string{secret, enc, "S3cret"} {
					if strings.Contains(out, s) || strings.Contains(errOut, s) {
						t.Errorf("%q printed:\nstdout: %s\nstderr: %s", s, out, errOut)
					}
				}
			}
		})
	}
	// the fake server saw the password, so it was really sent
	var logins int
	for _, r := range srv.Requests() {
		if r.Kind == tdstest.KindLogin && r.Login.Password == secret {
			logins++
		}
	}
	if want := 2 * 6; logins != want {
		t.Errorf("%d logins carried the password, want %d: the test did not exercise every way", logins, want)
	}
}
