package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// sqlShapes are the .sql inputs whose parsing cost is measured, at a size
// of about n MiB (or n columns or indexes): each returns the file's text.
var sqlShapes = []struct {
	name  string
	unit  string
	sizes []int
	gen   func(n int) string
}{
	{"one line of statements", "MiB", []int{4, 8, 16}, func(n int) string {
		return repeatTo(n<<20, "", func(i int) string {
			return fmt.Sprintf("SELECT WorkId, CreatedAt FROM dbo.Work WHERE Status = 0 AND CustomerId = %d; ", i)
		})
	}},
	{"short lines", "MiB", []int{4, 8, 16}, func(n int) string {
		return repeatTo(n<<20, "", func(i int) string {
			return fmt.Sprintf("SELECT WorkId FROM dbo.Work\nWHERE CustomerId = %d;\n", i)
		})
	}},
	{"one string literal", "MiB", []int{4, 8, 16}, func(n int) string {
		return "SELECT '" + strings.Repeat("it''s ", (n<<20)/6) + "' AS s;\n"
	}},
	{"one comment", "MiB", []int{4, 8, 16}, func(n int) string {
		return "/* " + strings.Repeat("a comment ", (n<<20)/10) + " */\nSELECT WorkId FROM dbo.Work WHERE Status = 0;\n"
	}},
	{"IN list", "MiB", []int{4, 8, 16}, func(n int) string {
		return "SELECT WorkId FROM dbo.Work WHERE CustomerId IN (" +
			repeatTo(n<<20, "", func(i int) string { return fmt.Sprintf("%d, ", i) }) + "0);\n"
	}},
	{"CREATE TABLE columns", "columns", []int{2500, 5000, 10000}, func(n int) string {
		var b strings.Builder
		b.WriteString("CREATE TABLE dbo.Wide (\n    Id int NOT NULL CONSTRAINT PK_Wide PRIMARY KEY CLUSTERED")
		for i := range n {
			fmt.Fprintf(&b, ",\n    Column%d decimal(18, 2) NULL CONSTRAINT DF_Wide_%d DEFAULT (0)", i, i)
		}
		b.WriteString("\n);\n")
		return b.String()
	}},
	{"filtered indexes", "indexes", []int{25000, 50000, 100000}, func(n int) string {
		var b strings.Builder
		b.WriteString("CREATE TABLE dbo.Work (WorkId bigint NOT NULL PRIMARY KEY, Status tinyint NOT NULL, CreatedAt datetime2 NOT NULL);\nGO\n")
		for i := range n {
			fmt.Fprintf(&b, "CREATE INDEX IX_Work_%d ON dbo.Work (CreatedAt, WorkId) WHERE Status = %d AND CreatedAt IS NOT NULL;\n", i, i%200)
		}
		return b.String()
	}},
}

// repeatTo joins piece(0), piece(1), ... after prefix until n bytes.
func repeatTo(n int, prefix string, piece func(i int) string) string {
	var b strings.Builder
	b.Grow(n + 128)
	b.WriteString(prefix)
	for i := 0; b.Len() < n; i++ {
		b.WriteString(piece(i))
	}
	return b.String()
}

// sqlCases measures check --schema FILE.sql PLAN and, when server is set
// ("host,port" of the TDS test server), explain FILE.sql against it.
func sqlCases(server string) []scalingCase {
	var out []scalingCase
	for _, s := range sqlShapes {
		gen := func(n int) (string, string) { return "big.sql", s.gen(n) }
		out = append(out, scalingCase{".sql " + s.name + ", check --schema", s.unit, s.sizes, gen,
			func(path string) []string {
				return []string{"check", "--schema", path, "fixtures/queue/param.sqlplan"}
			}})
		if server != "" {
			out = append(out, scalingCase{".sql " + s.name + ", explain", s.unit, s.sizes, gen,
				func(path string) []string {
					return []string{"explain", "-S", server, "-U", "sa", "-P", "pw", "-C", "--max-file-size", "1GiB", path}
				}})
		}
	}
	return out
}

// startServer builds and starts the TDS test server; stop ends it.
func startServer(work string) (server string, stop func(), err error) {
	bin := filepath.Join(work, "tdsserver")
	build := exec.Command("go", "build", "-o", bin, "./capture/tdstest/cmd/tdsserver")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", nil, fmt.Errorf("building the TDS test server: %w", err)
	}
	cmd := exec.Command(bin, "-password", "pw")
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() { in.Close(); _ = cmd.Wait() }
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if addr, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- addr
			}
		}
	}()
	select {
	case addr := <-lines:
		return "127.0.0.1," + addr[strings.LastIndex(addr, ":")+1:], stop, nil
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, fmt.Errorf("the TDS test server did not start")
	}
}
