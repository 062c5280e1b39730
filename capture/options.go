package capture

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// Driver names for database/sql.
const (
	DriverSQLServer = "sqlserver" // SQL authentication (and Windows on Windows)
	DriverAzureSQL  = "azuresql"  // Microsoft Entra ID (fedauth)
)

// Default timeouts.
const (
	DefaultConnectTimeout = 15 * time.Second
	DefaultQueryTimeout   = 60 * time.Second
)

// Options say how to reach the server. Either ConnectionString or Server
// names it; Database, User, Password, AuthMethod, TrustServerCertificate
// and Encrypt then override what the connection string says.
type Options struct {
	// ConnectionString is a go-mssqldb connection string in URL
	// (sqlserver://…), ADO (server=…;user id=…) or ODBC (odbc:server=…)
	// form.
	ConnectionString string
	// Server uses sqlcmd's -S syntax: [tcp:]host[\instance][,port].
	Server   string
	Database string
	User     string
	Password string
	// AuthMethod is sqlcmd's --authentication-method: SqlPassword, or a
	// Microsoft Entra ID method such as ActiveDirectoryDefault.
	AuthMethod string
	// TrustServerCertificate skips validation of the server's certificate
	// (sqlcmd -C).
	TrustServerCertificate bool
	// Encrypt is sqlcmd's -N value: mandatory (m, true, yes), optional (o,
	// false, no), strict (s) or disable; empty leaves the driver's default.
	Encrypt string
	// AppName identifies the session to the server (program_name).
	AppName string
	// ConnectTimeout bounds the login; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
}

// EntraMethods are the Microsoft Entra ID authentication methods accepted
// by AuthMethod, as go-mssqldb's azuresql driver spells them.
var EntraMethods = []string{
	"ActiveDirectoryDefault", "ActiveDirectoryPassword", "ActiveDirectoryServicePrincipal",
	"ActiveDirectoryApplication", "ActiveDirectoryManagedIdentity", "ActiveDirectoryMSI",
	"ActiveDirectoryAzCli", "ActiveDirectoryAzureDeveloperCli", "ActiveDirectoryInteractive",
	"ActiveDirectoryDeviceCode", "ActiveDirectoryEnvironment", "ActiveDirectoryWorkloadIdentity",
	"ActiveDirectoryAzurePipelines", "ActiveDirectoryClientAssertion", "ActiveDirectoryOnBehalfOf",
	"ActiveDirectoryServicePrincipalAccessToken", "ActiveDirectoryIntegrated",
}

// canonicalEntraMethod returns the method's canonical spelling, or "".
func canonicalEntraMethod(m string) string {
	for _, e := range EntraMethods {
		if strings.EqualFold(e, strings.TrimSpace(m)) {
			return e
		}
	}
	return ""
}

// PromptsOnStdout reports whether an authentication method prints
// instructions to standard output (device code) or opens an interactive
// prompt, which a machine-readable report on stdout cannot tolerate.
func PromptsOnStdout(method string) bool {
	switch canonicalEntraMethod(method) {
	case "ActiveDirectoryDeviceCode", "ActiveDirectoryInteractive":
		return true
	}
	return false
}

// dsn is a connection string being edited, in one of the three forms.
type dsn struct {
	form   string // "url", "ado" or "odbc"
	u      *url.URL
	parts  []string // ado/odbc: "key=value" parts appended after base
	base   string
	values map[string]string // every key set or removed (""), to check the result
}

// Connection is a resolved connection: the driver to use, the connection
// string to give it, and the same string with secrets redacted.
type Connection struct {
	Driver   string
	DSN      string
	Redacted string
	// Entra is the Microsoft Entra ID method in use, or "".
	Entra string
	// Database is the database asked for, "" for the login's default.
	Database string
	// User is the login name asked for, "" when none is given.
	User string

	scrub *scrubber
}

// Resolve builds the connection string. It fails when neither a server nor
// a connection string is given, when the connection string does not parse,
// or when an option is invalid. Errors never contain secrets.
func (o Options) Resolve() (*Connection, error) {
	if o.ConnectionString != "" && o.Server != "" {
		return nil, errors.New("give either a server (-S) or a connection string, not both")
	}
	if o.ConnectionString == "" && o.Server == "" {
		return nil, errors.New("no server given: use -S/--server (or SQLCMDSERVER), or --connection-string (or PLANLINT_CONNECTION)")
	}
	sc := newScrubber(o.ConnectionString, o.Password)
	fail := func(format string, args ...any) (*Connection, error) {
		return nil, errors.New(sc.scrub(fmt.Sprintf(format, args...)))
	}
	for _, f := range []struct{ name, value string }{{"the connection string", o.ConnectionString}, {"the server name", o.Server},
		{"the database name", o.Database}, {"the user name", o.User}, {"the password", o.Password}} {
		if !utf8.ValidString(f.value) {
			return nil, fmt.Errorf("%s is not valid UTF-8", f.name)
		}
	}
	var d *dsn
	if o.ConnectionString != "" {
		var err error
		if d, err = parseDSN(o.ConnectionString); err != nil {
			return fail("connection string %s: %v", Redact(o.ConnectionString), err)
		}
	} else {
		u, err := serverURL(o.Server)
		if err != nil {
			return fail("-S %q: %v", o.Server, err)
		}
		d = &dsn{form: "url", u: u}
	}
	if d.form == "odbc" {
		odbcSynonyms(d, o.ConnectionString)
	}
	if o.Database != "" {
		d.set(msdsn.Database, o.Database)
	}
	if o.User != "" {
		d.set(msdsn.UserID, o.User)
	}
	if o.Password != "" {
		d.set(msdsn.Password, o.Password)
	}
	if o.TrustServerCertificate {
		d.set(msdsn.TrustServerCertificate, "true")
	}
	if o.Encrypt != "" {
		v, err := encryptValue(o.Encrypt)
		if err != nil {
			return fail("%v", err)
		}
		d.set(msdsn.Encrypt, v)
	}
	c := &Connection{Driver: DriverSQLServer, scrub: sc}
	if m := strings.TrimSpace(o.AuthMethod); m != "" && !strings.EqualFold(m, "SqlPassword") {
		c.Entra = canonicalEntraMethod(m)
		if c.Entra == "" {
			return fail("unknown authentication method %q (want SqlPassword or one of %s)", m, strings.Join(EntraMethods, ", "))
		}
		d.set("fedauth", c.Entra)
	}
	if o.AppName != "" {
		d.set(msdsn.AppName, o.AppName)
	}
	// Parameter logging stays off whatever the connection string says.
	d.remove(msdsn.LogParam)
	timeout := o.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	secs := int((timeout + time.Second - 1) / time.Second)
	d.set(msdsn.DialTimeout, strconv.Itoa(secs))
	d.set(msdsn.ConnectionTimeout, strconv.Itoa(secs)) // the whole login, not only the dial

	c.DSN = d.String()
	params, err := msdsn.Parse(c.DSN)
	if err == nil {
		err = d.check(params)
	}
	if err != nil {
		return fail("connection string %s: %v", Redact(c.DSN), err)
	}
	if fa := params.Parameters["fedauth"]; fa != "" {
		c.Entra = canonicalEntraMethod(fa)
		if c.Entra == "" {
			return fail("connection string %s: unknown fedauth method %q", Redact(c.DSN), fa)
		}
		c.Driver = DriverAzureSQL
	}
	c.Database, c.User = params.Database, params.User
	c.Redacted = Redact(c.DSN)
	c.scrub = newScrubber(c.DSN, o.Password)
	return c, nil
}

// odbcSynonyms gives go-mssqldb the ODBC spellings uid and pwd, which its
// ODBC parser keeps under those names, so the login would go out with an
// empty user and password.
func odbcSynonyms(d *dsn, connStr string) {
	p, err := msdsn.Parse(connStr)
	if err != nil {
		return
	}
	for _, syn := range []struct{ odbc, key string }{{"uid", msdsn.UserID}, {"pwd", msdsn.Password}} {
		v, ok := p.Parameters[syn.odbc]
		if _, has := p.Parameters[syn.key]; ok && !has {
			d.set(syn.key, v)
		}
	}
}

// encryptValue maps sqlcmd's -N values to go-mssqldb's encrypt parameter.
func encryptValue(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "m", "mandatory", "true", "yes", "1":
		return "true", nil
	case "o", "optional", "false", "no", "0":
		return "false", nil
	case "s", "strict":
		return "strict", nil
	case "disable", "disabled":
		return "disable", nil
	}
	return "", fmt.Errorf("--encrypt %q: want mandatory, optional, strict or disable (m, o, s)", v)
}

// serverURL turns sqlcmd's -S syntax into a sqlserver:// URL.
func serverURL(server string) (*url.URL, error) {
	s := strings.TrimSpace(server)
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "tcp:"):
		s = s[4:]
	case strings.HasPrefix(lower, "np:"), strings.HasPrefix(lower, "lpc:"), strings.HasPrefix(lower, "admin:"):
		return nil, fmt.Errorf("protocol %s is not supported; connect over TCP (host[\\instance][,port])", s[:strings.IndexByte(s, ':')])
	}
	host, port := s, ""
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		host, port = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("port %q is not a number from 1 to 65535", port)
		}
	}
	instance := ""
	if i := strings.IndexByte(host, '\\'); i >= 0 {
		host, instance = host[:i], host[i+1:]
		if instance == "" {
			return nil, errors.New("empty instance name after \\")
		}
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	switch strings.ToLower(host) {
	case "", ".", "(local)":
		host = "localhost"
	}
	if strings.ContainsAny(host, "/?#@ ") {
		return nil, fmt.Errorf("host %q contains characters a host name cannot have", host)
	}
	u := &url.URL{Scheme: "sqlserver", Host: host}
	if port != "" {
		u.Host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		u.Host = "[" + host + "]" // IPv6 literal
	}
	if instance != "" {
		u.Path = "/" + instance
	}
	return u, nil
}

// parseDSN recognises the form of a connection string the way go-mssqldb
// does and checks that it parses.
func parseDSN(s string) (*dsn, error) {
	switch {
	case strings.HasPrefix(s, "sqlserver://"):
		u, err := url.Parse(s)
		if err != nil {
			return nil, errors.New("invalid URL (percent-encode special characters in the user name and password, e.g. %40 for @)")
		}
		if _, err := url.ParseQuery(u.RawQuery); err != nil {
			return nil, fmt.Errorf("invalid URL query: %v", errors.Unwrap(err))
		}
		return &dsn{form: "url", u: u}, nil
	case strings.HasPrefix(s, "odbc:"):
		return &dsn{form: "odbc", base: s}, nil
	case urlScheme(s) > 0:
		return nil, fmt.Errorf("unknown scheme %q (go-mssqldb URLs start with sqlserver://)", s[:urlScheme(s)-3])
	case looseScheme(s) > 0 && (s[looseScheme(s)-1] == '/' || strings.EqualFold(s[:strings.IndexByte(s, ':')], "sqlserver")):
		return nil, errors.New("malformed URL: go-mssqldb URLs start with sqlserver:// (two slashes)")
	}
	return &dsn{form: "ado", base: s}, nil
}

// set replaces a key's value (URL) or appends key=value (ADO and ODBC,
// where the last occurrence of a key wins).
func (d *dsn) set(key, value string) {
	d.record(key, value)
	switch d.form {
	case "url":
		switch key {
		case msdsn.UserID:
			_, hasPwd := d.u.User.Password()
			pwd, _ := d.u.User.Password()
			if hasPwd {
				d.u.User = url.UserPassword(value, pwd)
			} else {
				d.u.User = url.User(value)
			}
			d.removeQuery(key)
			return
		case msdsn.Password:
			d.u.User = url.UserPassword(d.u.User.Username(), value)
			d.removeQuery(key)
			return
		}
		d.removeQuery(key)
		q := d.u.RawQuery
		if q != "" {
			q += "&"
		}
		d.u.RawQuery = q + url.QueryEscape(key) + "=" + url.QueryEscape(value)
	case "odbc":
		d.parts = append(d.parts, key+"={"+strings.ReplaceAll(value, "}", "}}")+"}")
	default:
		if strings.ContainsAny(value, `;"'`) || strings.TrimSpace(value) != value {
			value = `"` + strings.ReplaceAll(value, `"`, `""`) + `"`
		}
		d.parts = append(d.parts, key+"="+value)
	}
}

// remove drops a key. ADO and ODBC strings get the key with an empty
// value, which go-mssqldb reads as unset for the keys planlint removes.
func (d *dsn) remove(key string) {
	d.record(key, "")
	switch d.form {
	case "url":
		d.removeQuery(key)
	case "odbc":
		d.parts = append(d.parts, key+"={0}")
	default:
		d.parts = append(d.parts, key+"=0")
	}
}

func (d *dsn) record(key, value string) {
	if d.values == nil {
		d.values = map[string]string{}
	}
	d.values[key] = value
}

// check verifies that go-mssqldb reads back every value set: a stray quote
// or brace in the original string could otherwise swallow them.
func (d *dsn) check(p msdsn.Config) error {
	for k, v := range d.values {
		got := p.Parameters[k]
		if v == "" && (got == "" || got == "0") || got == v {
			continue
		}
		return fmt.Errorf("cannot set %q in it (check its quotes and braces)", k)
	}
	return nil
}

func (d *dsn) removeQuery(key string) {
	if d.u.RawQuery == "" {
		return
	}
	var kept []string
	for _, pair := range strings.Split(d.u.RawQuery, "&") {
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil && strings.EqualFold(strings.TrimSpace(uk), key) {
			continue
		}
		kept = append(kept, pair)
	}
	d.u.RawQuery = strings.Join(kept, "&")
}

func (d *dsn) String() string {
	switch d.form {
	case "url":
		return d.u.String()
	}
	s := d.base
	for _, p := range d.parts {
		if s != "" && !strings.HasSuffix(s, ";") {
			s += ";"
		}
		s += p
	}
	return s
}
