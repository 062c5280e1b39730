package tdstest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	_ "github.com/microsoft/go-mssqldb"

	"github.com/planlint/planlint/internal/sharedtest"
)

// testTimeout bounds every client call so that a server bug shows up as a
// failure instead of a hung test.
const testTimeout = 30 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

var disableEncrypt = url.Values{"encrypt": {"disable"}}

// openDB opens a database/sql pool on the server and closes it at cleanup.
func openDB(t *testing.T, s *Server, params url.Values) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", s.DSN(params))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// benchDB opens a pool for a benchmark, closed when the benchmark ends.
func benchDB(b *testing.B, s *Server, params url.Values) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlserver", s.DSN(params))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// pinnedConn opens one physical connection.
func pinnedConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// syntheticPlan is a showplan-shaped document of at least minChars UTF-16
// units, with non-ASCII and non-BMP characters so that UCS-2 encoding and
// surrogate pairs are exercised across packet and chunk boundaries.
func syntheticPlan(minChars int) string {
	var b strings.Builder
	b.WriteString(`<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.4125.3"><BatchSequence><Batch><Statements>`)
	for i := 0; ucs2Len(b.String()) < minChars; i++ {
		fmt.Fprintf(&b, `<StmtSimple StatementText="SELECT TOP (1) Id FROM dbo.Queue WHERE Status = 0 /* café 𝔘 %d */" StatementId="%d" StatementType="SELECT"/>`, i, i+1)
	}
	b.WriteString(`</Statements></Batch></BatchSequence></ShowPlanXML>`)
	return b.String()
}

// sharedDir locates the shared test material: $PLANLINT_SHARED, else
// ../shared next to the repository root. It skips the test when absent.
func sharedDir(t testing.TB) string {
	t.Helper()
	return sharedtest.Require(t, ".")
}

// corpusPlan returns the first real showplan in the shared corpus (by file
// name) that is longer than minChars once decoded.
func corpusPlan(t testing.TB, minChars int) (name, text string) {
	t.Helper()
	dir := filepath.Join(sharedDir(t), "corpus", "plans")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("shared corpus not readable: %v", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil || len(raw) > 1<<20 {
			continue
		}
		s, ok := decodeText(raw)
		if ok && ucs2Len(s) > minChars {
			return n, s
		}
	}
	t.Skipf("no plan longer than %d characters in %s", minChars, dir)
	return "", ""
}

// decodeText decodes UTF-8 (with or without BOM) or UTF-16LE with BOM.
func decodeText(raw []byte) (string, bool) {
	switch {
	case bytes.HasPrefix(raw, []byte{0xFF, 0xFE}):
		raw = raw[2:]
		u := make([]uint16, len(raw)/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(raw[2*i:])
		}
		return string(utf16.Decode(u)), true
	case bytes.HasPrefix(raw, []byte{0xEF, 0xBB, 0xBF}):
		return string(raw[3:]), true
	case bytes.HasPrefix(raw, []byte("<")):
		return string(raw), true
	}
	return "", false
}

// requestsOf filters recorded requests by connection and kind.
func requestsOf(reqs []Request, conn int, kinds ...Kind) []Request {
	var out []Request
	for _, r := range reqs {
		if conn != 0 && r.Conn != conn {
			continue
		}
		for _, k := range kinds {
			if r.Kind == k {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// lastConn is the connection number of the most recent request.
func lastConn(t *testing.T, s *Server) int {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) == 0 {
		t.Fatal("no requests recorded")
	}
	return reqs[len(reqs)-1].Conn
}

// obfuscate is the client side of the LOGIN7 password scrambling.
func obfuscate(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = (c<<4 | c>>4) ^ 0xA5
	}
	return out
}
