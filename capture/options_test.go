package capture

import (
	"strings"
	"testing"
	"time"

	"github.com/microsoft/go-mssqldb/msdsn"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		// want holds parameters go-mssqldb must read from the result.
		want   map[string]string
		host   string
		port   uint64
		inst   string
		driver string
		entra  string
	}{
		{"sqlcmd flags", Options{Server: "tcp:db.example.com,1444", Database: "WorkDb", User: "app", Password: "p@ss;word", AppName: "planlint/v1", TrustServerCertificate: true, Encrypt: "m"},
			map[string]string{"database": "WorkDb", "user id": "app", "password": "p@ss;word", "app name": "planlint/v1", "trustservercertificate": "true", "encrypt": "true", "dial timeout": "15"},
			"db.example.com", 1444, "", DriverSQLServer, ""},
		{"named instance", Options{Server: `.\SQLEXPRESS`, ConnectTimeout: 2500 * time.Millisecond},
			map[string]string{"dial timeout": "3"}, "localhost", 0, "SQLEXPRESS", DriverSQLServer, ""},
		{"url overrides", Options{ConnectionString: "sqlserver://sa:old@h/inst?database=A&log=63&App+Name=x", Database: "B", Password: "new", AppName: "planlint/dev"},
			map[string]string{"database": "B", "password": "new", "user id": "sa", "app name": "planlint/dev"}, "h", 0, "inst", DriverSQLServer, ""},
		{"ado overrides", Options{ConnectionString: "Server=h,1500;Initial Catalog=A;Log=16;Application Name=x", Database: "B;C", User: "u"},
			map[string]string{"database": "B;C", "user id": "u", "log": "0", "app name": "planlint"}, "h", 1500, "", DriverSQLServer, ""},
		{"odbc overrides", Options{ConnectionString: "odbc:server=h;database={A}", Password: "a}b"},
			map[string]string{"database": "A", "password": "a}b", "app name": "planlint"}, "h", 0, "", DriverSQLServer, ""},
		{"entra flag", Options{Server: "srv.database.windows.net", AuthMethod: "activedirectorydefault"},
			map[string]string{"fedauth": "ActiveDirectoryDefault"}, "srv.database.windows.net", 0, "", DriverAzureSQL, "ActiveDirectoryDefault"},
		{"entra in connection string", Options{ConnectionString: "sqlserver://srv?fedauth=ActiveDirectoryManagedIdentity"},
			map[string]string{"fedauth": "ActiveDirectoryManagedIdentity"}, "srv", 0, "", DriverAzureSQL, "ActiveDirectoryManagedIdentity"},
		{"sql password method", Options{Server: "h", AuthMethod: "SqlPassword"}, map[string]string{}, "h", 0, "", DriverSQLServer, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.AppName == "" {
				tt.opts.AppName = "planlint"
			}
			c, err := tt.opts.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			p, err := msdsn.Parse(c.DSN)
			if err != nil {
				t.Fatalf("go-mssqldb cannot parse %q: %v", c.Redacted, err)
			}
			for k, v := range tt.want {
				got := p.Parameters[k]
				if k == "user id" {
					got = p.User
				}
				if k == "password" {
					got = p.Password
				}
				if got != v {
					t.Errorf("%s = %q, want %q (DSN %s)", k, got, v, c.Redacted)
				}
			}
			if p.LogFlags&msdsn.LogParams != 0 {
				t.Errorf("parameter logging enabled: log=%d", p.LogFlags)
			}
			if p.Host != tt.host || p.Port != tt.port || p.Instance != tt.inst {
				t.Errorf("host/port/instance = %q/%d/%q", p.Host, p.Port, p.Instance)
			}
			if c.Driver != tt.driver || c.Entra != tt.entra {
				t.Errorf("driver %q entra %q", c.Driver, c.Entra)
			}
			if pw := p.Password; pw != "" && strings.Contains(c.Redacted, pw) {
				t.Errorf("Redacted shows the password: %s", c.Redacted)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"nothing", Options{}, "no server given"},
		{"both", Options{Server: "h", ConnectionString: "server=h"}, "not both"},
		{"bad port", Options{Server: "h,99999"}, `port "99999"`},
		{"named pipes", Options{Server: `np:\\h\pipe\sql\query`}, "protocol np is not supported"},
		{"bad encrypt", Options{Server: "h", Encrypt: "sometimes"}, `--encrypt "sometimes"`},
		{"bad method", Options{Server: "h", AuthMethod: "Kerberos"}, `unknown authentication method "Kerberos"`},
		{"bad url", Options{ConnectionString: "sqlserver://sa:pa%zzss@h"}, "invalid URL"},
		{"other scheme", Options{ConnectionString: "postgres://u:S3cretPw@h"}, `unknown scheme "postgres"`},
		{"bad parameter", Options{ConnectionString: "server=h;password=S3cretPw;packet size=huge"}, "invalid packet size"},
		{"bad fedauth", Options{ConnectionString: "server=h;fedauth=Magic"}, `unknown fedauth method "Magic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.opts.Resolve()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "S3cretPw") || strings.Contains(err.Error(), "pa%zzss") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestPromptsOnStdout(t *testing.T) {
	for m, want := range map[string]bool{"ActiveDirectoryDeviceCode": true, "activedirectoryinteractive": true,
		"ActiveDirectoryDefault": false, "": false, "SqlPassword": false} {
		if got := PromptsOnStdout(m); got != want {
			t.Errorf("PromptsOnStdout(%q) = %v", m, got)
		}
	}
}

func TestSetOptions(t *testing.T) {
	o := DriverSetOptions()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o["ARITHABORT"] || !o["ANSI_WARNINGS"] || SSMSSetOptions()["ARITHABORT"] != true {
		t.Error("presets wrong")
	}
	for _, bad := range []struct{ in, want string }{
		{"ARITHABORT", "expected NAME=ON or NAME=OFF"},
		{"FORCEPLAN=ON", "unknown option FORCEPLAN"},
		{"ansi_nulls=maybe", `value must be ON or OFF, not "maybe"`},
	} {
		if err := o.Apply(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Apply(%q) = %v, want %q", bad.in, err, bad.want)
		}
	}
	if err := o.Apply(" quoted_identifier = off "); err != nil || o["QUOTED_IDENTIFIER"] {
		t.Errorf("Apply: %v, %v", err, o)
	}
	if _, err := PresetSetOptions("odbc"); err == nil {
		t.Error("unknown preset accepted")
	}
	if p, err := PresetSetOptions("SSMS"); err != nil || !p["ARITHABORT"] {
		t.Errorf("ssms preset: %v %v", p, err)
	}
	delete(o, "ANSI_NULLS")
	o["FORCEPLAN"] = true
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "FORCEPLAN") {
		t.Errorf("Validate = %v", err)
	}
	sql := DriverSetOptions().SQL()
	if strings.Count(sql, "SET ") != 7 || !strings.HasPrefix(sql, "SET ANSI_NULLS ON;\n") || !strings.Contains(sql, "SET ARITHABORT OFF;\n") {
		t.Errorf("SQL = %q", sql)
	}
}

// FuzzResolve: any server name, connection string and password either
// resolve to a connection string go-mssqldb accepts, with parameter
// logging off and the password redacted, or fail without showing the
// password.
func FuzzResolve(f *testing.F) {
	f.Add(`tcp:db.example.com\SQL2022,1444`, "", "S3cret;pw")
	f.Add("", "sqlserver://sa:x@h/inst?database=d&log=16", "S3cret;pw")
	f.Add("", "server=h;password=\"a;b\";log=255", "S3cret;pw")
	f.Add("", "odbc:server=h;password={a}}b};log=16", "S3cret;pw")
	f.Fuzz(func(t *testing.T, server, connString, password string) {
		o := Options{Server: server, ConnectionString: connString, Password: password, Database: "WorkDb", User: "app", AppName: "planlint/test"}
		c, err := o.Resolve()
		leaks := func(s string) bool {
			return len(password) >= minScrubLength && !strings.Contains(server+connString+"WorkDb app planlint/test", password) &&
				strings.Contains(s, password)
		}
		if err != nil {
			if leaks(err.Error()) {
				t.Fatalf("error shows the password %q: %v", password, err)
			}
			return
		}
		p, err := msdsn.Parse(c.DSN)
		if err != nil {
			t.Fatalf("Resolve accepted a connection string go-mssqldb rejects: %v", err)
		}
		if p.LogFlags&msdsn.LogParams != 0 {
			t.Fatalf("parameter logging on: %d", p.LogFlags)
		}
		if password != "" && p.Password != password {
			t.Fatalf("password %q became %q", password, p.Password)
		}
		if leaks(c.Redacted) {
			t.Fatalf("Redacted shows the password: %s", c.Redacted)
		}
	})
}
