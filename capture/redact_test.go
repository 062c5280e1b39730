package capture

import (
	"strings"
	"testing"

	"github.com/microsoft/go-mssqldb/msdsn"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, want string
		secrets        []string // must not survive
	}{
		// URL form
		{"url userinfo", "sqlserver://sa:S3cret@db.example.com:1433?database=WorkDb",
			"sqlserver://sa:xxxxx@db.example.com:1433?database=WorkDb", []string{"S3cret"}},
		{"url no password", "sqlserver://sa@db.example.com/SQL2022?database=WorkDb", "sqlserver://sa@db.example.com/SQL2022?database=WorkDb", nil},
		{"url percent-encoded password", "sqlserver://sa:p%40ss%3Bw0rd@host", "sqlserver://sa:xxxxx@host", []string{"p%40ss%3Bw0rd", "p@ss;w0rd"}},
		{"url unescaped @ in password", "sqlserver://sa:p@ss@host?database=d", "sqlserver://sa:xxxxx@host?database=d", []string{"p@ss"}},
		{"url unescaped / in password", "sqlserver://sa:pa/ss@host/inst", "sqlserver://sa:xxxxx@host/inst", []string{"pa/ss"}},
		{"url unescaped ? in password", "sqlserver://sa:pa?ss@host?database=d", "sqlserver://sa:xxxxx@host?database=d", []string{"pa?ss"}},
		{"url query secrets", "sqlserver://host?user+id=app&password=hunter22&PWD=other1&clientassertion=eyJhbGciOi&systemtoken=tok123&userassertion=ua456&clientsecret=cs789&client+secret=cs000&client%20secret=cs111&database=d",
			"sqlserver://host?user+id=app&password=xxxxx&PWD=xxxxx&clientassertion=xxxxx&systemtoken=xxxxx&userassertion=xxxxx&clientsecret=xxxxx&client+secret=xxxxx&client%20secret=xxxxx&database=d",
			[]string{"hunter22", "other1", "eyJhbGciOi", "tok123", "ua456", "cs789", "cs000", "cs111"}},
		{"url both places", "sqlserver://sa:one1@h?password=two2", "sqlserver://sa:xxxxx@h?password=xxxxx", []string{"one1", "two2"}},
		{"url upper-case scheme", "SQLServer://sa:S3cret@h", "SQLServer://sa:xxxxx@h", []string{"S3cret"}},
		{"url fedauth", "sqlserver://app-id@tenant:clientS3cret@server.database.windows.net?fedauth=ActiveDirectoryServicePrincipal",
			"sqlserver://app-id@tenant:xxxxx@server.database.windows.net?fedauth=ActiveDirectoryServicePrincipal", []string{"clientS3cret"}},

		// ADO form
		{"ado", "server=db;user id=sa;password=S3cret;database=WorkDb", "server=db;user id=sa;password=xxxxx;database=WorkDb", []string{"S3cret"}},
		{"ado synonyms and case", "Data Source=db;UID=sa;PWD=S3cret;Initial Catalog=W", "Data Source=db;UID=sa;PWD=xxxxx;Initial Catalog=W", []string{"S3cret"}},
		{"ado spaces", "password = S3cret ;server=db", "password = xxxxx;server=db", []string{"S3cret"}},
		{"ado double quotes", `server=db;password="a;b""c";database=d`, "server=db;password=xxxxx;database=d", []string{`a;b""c`, `b""c`, `"c`}},
		{"ado quote in the middle", `password=ab"c;d"e;server=x`, "password=xxxxx;server=x", []string{`ab"c;d"e`, `d"e`}},
		{"ado single quotes", "password='se;cret';server=db", "password=xxxxx;server=db", []string{"'se", "cret'"}},
		{"ado unterminated single quote", "password='se;cret;server=db", "password=xxxxx", []string{"se;cret", "cret"}},
		{"ado other secrets", "server=db;ClientSecret=cs789;Client Secret=cs000;clientcertpassword=ccp1;accesstoken=at22",
			"server=db;ClientSecret=xxxxx;Client Secret=xxxxx;clientcertpassword=xxxxx;accesstoken=xxxxx", []string{"cs789", "cs000", "ccp1", "at22"}},
		{"ado repeated", "password=one1;password=two2;", "password=xxxxx;password=xxxxx;", []string{"one1", "two2"}},
		{"ado empty password", "server=db;password=;database=d", "server=db;password=;database=d", nil},
		{"ado no secrets", "server=db;database=d;encrypt=true", "server=db;database=d;encrypt=true", nil},

		// ODBC form
		{"odbc braces", "odbc:server=db;user id=sa;password={a;b}}c};database=d", "odbc:server=db;user id=sa;password=xxxxx;database=d", []string{"a;b}}c", "b}}c"}},
		{"odbc bare", "odbc:server=db;Pwd=S3cret", "odbc:server=db;Pwd=xxxxx", []string{"S3cret"}},
		{"odbc unterminated brace", "odbc:password={S3cret;database=d", "odbc:password=xxxxx", []string{"S3cret", "database=d"}},
		{"odbc junk after brace", "odbc:password={S3}cret;database=d", "odbc:password=xxxxx;database=d", []string{"S3", "cret"}},
		{"odbc prefix case", "ODBC:password=S3cret", "ODBC:password=xxxxx", []string{"S3cret"}},

		{"empty", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			for _, s := range tt.secrets {
				if strings.Contains(got, s) {
					t.Errorf("%q survives in %q", s, got)
				}
			}
			if again := Redact(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
		})
	}
}

func TestScrubber(t *testing.T) {
	sc := newScrubber("sqlserver://sa:p%40ssw0rd@h?clientsecret=abcd1234", "flag-pass")
	msg := "login failed: p@ssw0rd, p%40ssw0rd, abcd1234, flag-pass, ab"
	got := sc.scrub(msg)
	for _, s := range []string{"p@ssw0rd", "p%40ssw0rd", "abcd1234", "flag-pass"} {
		if strings.Contains(got, s) {
			t.Errorf("%q survives in %q", s, got)
		}
	}
	if !strings.HasSuffix(got, ", ab") {
		t.Errorf("short text scrubbed too: %q", got)
	}
	var nilScrubber *scrubber
	if nilScrubber.scrub("x") != "x" {
		t.Error("nil scrubber changed text")
	}
}

// FuzzRedact: Redact never panics, is idempotent, and go-mssqldb reading
// the redacted string finds no secret.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"sqlserver://sa:S3cret@host:1433/inst?database=d&password=x",
		"sqlserver://sa:p@ss@host?client+secret=1",
		"server=db;user id=sa;password=\"a;b\"\"c\";database=d",
		"password='se;cret';server=db",
		"odbc:server=db;password={a;b}}c};database=d",
		"odbc:password={unterminated",
		"Data Source=x;Pwd=y;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		if again := Redact(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", s, out, again)
		}
		p, err := msdsn.Parse(out)
		if err != nil {
			return
		}
		if p.Password != "" && p.Password != Redacted {
			t.Fatalf("Redact(%q) = %q still holds password %q", s, out, p.Password)
		}
		for k, v := range p.Parameters {
			if isSecretKey(k) && v != "" && v != Redacted {
				t.Fatalf("Redact(%q) = %q still holds %s=%q", s, out, k, v)
			}
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	dsns := []string{
		"sqlserver://sa:S3cret@db.example.com:1433?database=WorkDb&encrypt=true&app+name=planlint",
		"server=db;user id=sa;password=\"a;b\";database=WorkDb;encrypt=true",
		"odbc:server=db;user id=sa;password={a;b}}c};database=WorkDb",
	}
	for b.Loop() {
		for _, d := range dsns {
			Redact(d)
		}
	}
}
