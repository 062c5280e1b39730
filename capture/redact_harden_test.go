package capture

import (
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// TestRedactEveryDriverSecret: every key go-mssqldb takes as a secret is
// redacted in every form, and a URL written with one slash (which the
// driver reads as ADO) is redacted as a URL too.
func TestRedactEveryDriverSecret(t *testing.T) {
	for _, tt := range []struct{ name, in, want, secret string }{
		{"url change password", "sqlserver://sa:pw12@h?change+password=N3wSecret", "sqlserver://sa:xxxxx@h?change+password=xxxxx", "N3wSecret"},
		{"url change password escaped", "sqlserver://sa@h?change%20password=N3wSecret", "sqlserver://sa@h?change%20password=xxxxx", "N3wSecret"},
		{"ado change password", "server=h;Change Password=N3wSecret;database=d", "server=h;Change Password=xxxxx;database=d", "N3wSecret"},
		{"odbc change password", "odbc:server=h;change password={N3w;Secret}", "odbc:server=h;change password=xxxxx", "Secret"},
		{"one slash", "sqlserver:/sa:S3cretPw@host", "sqlserver:/sa:xxxxx@host", "S3cretPw"},
		{"no slash", "sqlserver:sa:S3cretPw@host?database=d", "sqlserver:sa:xxxxx@host?database=d", "S3cretPw"},
		{"scheme-like ADO start", "tcp:h,1433;password=S3cretPw", "tcp:h,1433;password=xxxxx", "S3cretPw"},
	} {
		got := Redact(tt.in)
		if got != tt.want || strings.Contains(got, tt.secret) {
			t.Errorf("%s: Redact(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestScrubDriverValues: a secret the server echoes back is scrubbed as
// the driver sent it: ADO quotes undone ("" is "), ODBC braces undone.
func TestScrubDriverValues(t *testing.T) {
	for _, tt := range []struct{ dsn, echoed string }{
		{`server=h;user id=sa;password="Pa""ss;word"`, `Pa"ss;word`},
		{`odbc:server=h;uid=sa;pwd={Pa}}ss;word}`, `Pa}ss;word`},
		{`server=h;change password="N3w""Pw"`, `N3w"Pw`},
	} {
		sc := newScrubber(tt.dsn)
		if got := sc.scrub("Login failed: " + tt.echoed + "."); strings.Contains(got, tt.echoed) {
			t.Errorf("%s: %q survives in %q", tt.dsn, tt.echoed, got)
		}
	}
}

// TestODBCUidPwd: the ODBC keys uid and pwd reach the login; go-mssqldb's
// ODBC parser alone keeps them under their own names.
func TestODBCUidPwd(t *testing.T) {
	c, err := Options{ConnectionString: "odbc:server=h;UID=sa;PWD={Se;cret1}"}.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p, err := msdsn.Parse(c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	if p.User != "sa" || p.Password != "Se;cret1" || c.User != "sa" {
		t.Errorf("user %q password %q (connection user %q)", p.User, p.Password, c.User)
	}
	if strings.Contains(c.Redacted, "cret1") {
		t.Errorf("Redacted %q", c.Redacted)
	}
	// an explicit user id wins over uid, and -U over both
	c, err = Options{ConnectionString: "odbc:server=h;uid=a;user id=b", User: "c"}.Resolve()
	if err != nil || c.User != "c" {
		t.Errorf("user %q, %v", c.User, err)
	}
}

// TestOneSlashURLRefused: "sqlserver:/…" is refused as a malformed URL
// without echoing it, rather than read as an ADO string.
func TestOneSlashURLRefused(t *testing.T) {
	for _, s := range []string{"sqlserver:/sa:S3cretPw@host", "sqlserver:sa:S3cretPw@host", "SQLServer:/sa:S3cretPw@host"} {
		_, err := Options{ConnectionString: s}.Resolve()
		if err == nil || !strings.Contains(err.Error(), "sqlserver://") || strings.Contains(err.Error(), "S3cretPw") {
			t.Errorf("%q: %v", s, err)
		}
	}
}
