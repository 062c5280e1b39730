package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/planlint/planlint/internal/sqlgen"
)

// sqlSizes are the sizes each .sql shape is measured at, in its unit.
var sqlSizes = map[string][]int{"bytes": {4 << 20, 8 << 20, 16 << 20}, "columns": {2500, 5000, 10000}, "indexes": {25000, 50000, 100000}}

// sqlCases measures check --schema FILE.sql PLAN and, when server is set
// ("host,port" of the TDS test server), explain FILE.sql against it.
func sqlCases(server string) []scalingCase {
	var out []scalingCase
	for _, s := range sqlgen.Shapes {
		gen := func(n int) (string, string) { return "big.sql", s.Gen(n) }
		// a schema needs a table, or check refuses it once it is read
		schema := func(n int) (string, string) {
			return "big.sql", "CREATE TABLE dbo.T (Id int NOT NULL PRIMARY KEY);\nGO\n" + s.Gen(n)
		}
		out = append(out, scalingCase{".sql " + s.Name + ", check --schema", s.Unit, sqlSizes[s.Unit], schema,
			func(path string) []string {
				return []string{"check", "--schema", path, "fixtures/queue/param.sqlplan"}
			}})
		if server != "" {
			sizes := sqlSizes[s.Unit]
			if s.Unit == "bytes" {
				sizes = []int{2 << 20, 4 << 20, 8 << 20} // the test server takes no batch of 16 MiB
			}
			out = append(out, scalingCase{".sql " + s.Name + ", explain", s.Unit, sizes, gen,
				func(path string) []string {
					return []string{"explain", "-S", server, "-U", "sa", "-P", "pw", "-C", path}
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
