package trace

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestWriteRead(t *testing.T) {
	r := NewRecorder("explain", false)
	n := int64(3)
	r.Add(Request{Conn: r.NewConn(), Kind: "batch", Text: "SELECT 1", RowsAffected: &n,
		ResultSets: []ResultSet{{Columns: []Column{{Name: "a", Type: "INT"}}, Rows: 1}}}, time.Now())
	r.Add(Request{Conn: 1, Kind: "rpc", Proc: "sp_executesql", Error: &Error{Number: 208, Class: 16, Message: "Invalid object name 'x'."}}, time.Now())
	var b bytes.Buffer
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != Version || got.Command != "explain" || len(got.Requests) != 2 || got.Requests[1].Seq != 2 ||
		got.Requests[0].ResultSets[0].Columns[0].Type != "INT" || got.Requests[1].Error.Number != 208 {
		t.Fatalf("read back %+v", got)
	}
}

func TestReadRejects(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":        "{",
		"newer version":   `{"version": 99, "requests": []}`,
		"no version":      `{"requests": []}`,
		"unknown request": `{"version": 1, "requests": [{"kind": "carrier pigeon"}]}`,
	} {
		if _, err := Read(strings.NewReader(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add(`{"version": 1, "requests": [{"seq": 1, "kind": "batch", "text": "SELECT 1", "result_sets": [{"columns": [{"name": "a", "type": "INT"}], "rows": 1, "values": [[1]]}]}]}`)
	f.Add(`{"version": 1, "requests": [{"kind": "rpc", "proc": "sp_executesql", "outputs": [{"name": "@x", "value": "y"}], "error": {"number": 262, "message": "m"}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := Read(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, q := range tr.Requests {
			if q.Kind != "batch" && q.Kind != "rpc" {
				t.Fatalf("accepted kind %q", q.Kind)
			}
		}
	})
}
