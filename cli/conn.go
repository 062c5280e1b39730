package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/microsoft/go-mssqldb/msdsn"
	"github.com/spf13/cobra"

	"github.com/planlint/planlint/capture"
)

// connFlags are the connection flags, compatible with sqlcmd's.
type connFlags struct {
	server           string
	database         string
	user             string
	password         string
	passwordStdin    bool
	connectionString string
	authMethod       string
	trustCert        bool
	encrypt          string
	connectTimeout   time.Duration
	queryTimeout     time.Duration
}

func (c *connFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&c.server, "server", "S", "", `server as sqlcmd writes it: [tcp:]host[\instance][,port] (default $SQLCMDSERVER)`)
	fl.StringVarP(&c.database, "database", "d", "", "database to connect to (default $SQLCMDDBNAME, else the login's default)")
	fl.StringVarP(&c.user, "user", "U", "", "SQL login, or the user or client id for Entra ID (default $SQLCMDUSER)")
	fl.StringVarP(&c.password, "password", "P", "", "password; other users can read it from the process list, so prefer $SQLCMDPASSWORD or --password-stdin")
	fl.BoolVar(&c.passwordStdin, "password-stdin", false, "read the password from standard input")
	fl.StringVar(&c.connectionString, "connection-string", "", "go-mssqldb connection string: sqlserver://…, ADO (server=…;…) or ODBC (odbc:…) (default $PLANLINT_CONNECTION)")
	fl.StringVar(&c.authMethod, "authentication-method", "", "SqlPassword, or a Microsoft Entra ID method such as ActiveDirectoryDefault, ActiveDirectoryServicePrincipal, ActiveDirectoryManagedIdentity or ActiveDirectoryAzCli")
	fl.BoolVarP(&c.trustCert, "trust-server-certificate", "C", false, "trust the server's certificate without validating it")
	fl.StringVarP(&c.encrypt, "encrypt", "N", "", "encryption: mandatory, optional, strict or disable (-N alone: mandatory)")
	fl.Lookup("encrypt").NoOptDefVal = "mandatory"
	fl.DurationVar(&c.connectTimeout, "connect-timeout", capture.DefaultConnectTimeout, "how long to wait for the login")
	fl.DurationVar(&c.queryTimeout, "query-timeout", capture.DefaultQueryTimeout, "how long to wait for each request; the request is then cancelled")
}

// options turns flags and environment into capture options. Explicit
// flags win over the environment; SQLCMDSERVER, SQLCMDDBNAME and
// SQLCMDUSER apply only without a connection string, and SQLCMDPASSWORD
// only when nothing else gives a password. machineOutput says that stdout
// carries a machine-readable report, which an authentication method that
// prints to stdout would corrupt.
func (c *connFlags) options(cmd *cobra.Command, env *Env, machineOutput bool) (capture.Options, error) {
	fl := cmd.Flags()
	var o capture.Options
	if c.connectTimeout <= 0 || c.queryTimeout <= 0 {
		return o, usageError("--connect-timeout and --query-timeout must be positive")
	}
	if fl.Changed("server") && fl.Changed("connection-string") {
		return o, usageError("give either -S/--server or --connection-string, not both")
	}
	o.ConnectionString = c.connectionString
	o.Server = c.server
	if fl.Changed("connection-string") && capture.Redact(c.connectionString) != c.connectionString {
		diag(env.Stderr, "", "warning: --connection-string holds a secret on the command line, where other users can read it; use PLANLINT_CONNECTION, SQLCMDPASSWORD or --password-stdin")
	}
	switch {
	case fl.Changed("connection-string"), fl.Changed("server"):
	case env.Getenv("PLANLINT_CONNECTION") != "":
		o.ConnectionString = env.Getenv("PLANLINT_CONNECTION")
	default:
		o.Server = env.Getenv("SQLCMDSERVER")
	}
	o.Database, o.User = c.database, c.user
	if o.ConnectionString == "" {
		if o.Database == "" {
			o.Database = env.Getenv("SQLCMDDBNAME")
		}
		if o.User == "" {
			o.User = env.Getenv("SQLCMDUSER")
		}
	}
	if fl.Changed("password") && c.passwordStdin {
		return o, usageError("give either -P/--password or --password-stdin, not both")
	}
	switch {
	case c.passwordStdin:
		pw, err := readPassword(env.Stdin)
		if err != nil {
			return o, usageError("--password-stdin: %v", err)
		}
		o.Password = pw
	case fl.Changed("password"):
		diag(env.Stderr, "", "warning: -P puts the password on the command line, where other users can read it; use SQLCMDPASSWORD or --password-stdin")
		o.Password = c.password
	case env.Getenv("SQLCMDPASSWORD") != "" && !hasPassword(o.ConnectionString):
		o.Password = env.Getenv("SQLCMDPASSWORD")
	}
	o.AuthMethod = c.authMethod
	o.TrustServerCertificate = c.trustCert
	o.Encrypt = c.encrypt
	o.AppName = "planlint/" + Version()
	o.ConnectTimeout = c.connectTimeout
	conn, err := o.Resolve()
	if err != nil {
		return o, usageError("%v", err)
	}
	if capture.PromptsOnStdout(conn.Entra) && (machineOutput || !isTerminal(env.Stdout)) {
		return o, usageError("authentication method %s prints its prompt on standard output, which must carry only the report here (stdout is not a terminal or the format is machine-readable); use ActiveDirectoryDefault, ActiveDirectoryAzCli or a service principal instead", conn.Entra)
	}
	return o, nil
}

// hasPassword reports whether a connection string carries a password.
func hasPassword(dsn string) bool {
	if dsn == "" {
		return false
	}
	p, err := msdsn.Parse(dsn)
	return err == nil && p.Password != ""
}

// readPassword reads a password from r: everything up to the first line
// break (or the end), which must not be empty.
func readPassword(r io.Reader) (string, error) {
	if r == nil {
		return "", fmt.Errorf("standard input is not available")
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return "", fmt.Errorf("reading standard input: %v", err)
	}
	pw, _, _ := strings.Cut(string(b), "\n")
	pw = strings.TrimSuffix(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("no password on standard input")
	}
	return pw, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}
