package baseline

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWriteAndParse(t *testing.T) {
	entries := []Entry{
		{Key: Key{Rule: "residual-sort", File: "sql/queue.sql", Fingerprint: "fp-poll", Node: "Sort"}, Count: 1},
		{Key: Key{Rule: "key-lookup", File: `sql\queue.sql`, Fingerprint: "fp-poll", Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}, Count: 2},
		{Key: Key{Rule: "set-options", File: "./sql/admin.sql", Fingerprint: " fp-admin "}, Count: 1},
		{Key: Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: "fp-poll", Node: "Key Lookup  [dbo].[Jobs].[PK_Jobs]"}, Count: 1},
		{Key: Key{Rule: "unmatched-indexes", Fingerprint: "0x1A2B <&>"}, Count: 3},
	}
	var buf bytes.Buffer
	if err := Write(&buf, entries); err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "entries": [
    {"file":"","rule":"unmatched-indexes","fingerprint":"0x1A2B <&>","count":3},
    {"file":"sql/admin.sql","rule":"set-options","fingerprint":"fp-admin","count":1},
    {"file":"sql/queue.sql","rule":"key-lookup","fingerprint":"fp-poll","node":"Key Lookup  [dbo].[Jobs].[PK_Jobs]","count":1},
    {"file":"sql/queue.sql","rule":"key-lookup","fingerprint":"fp-poll","node":"Key Lookup [dbo].[Jobs].[PK_Jobs]","count":2},
    {"file":"sql/queue.sql","rule":"residual-sort","fingerprint":"fp-poll","node":"Sort","count":1}
  ]
}
`
	if buf.String() != want {
		t.Errorf("Write:\n%s\nwant:\n%s", buf.String(), want)
	}
	b, err := Parse("b.json", buf.Bytes())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	wantEntries := []Entry{
		{Key: Key{Rule: "unmatched-indexes", Fingerprint: "0x1A2B <&>"}, Count: 3},
		{Key: Key{Rule: "set-options", File: "sql/admin.sql", Fingerprint: "fp-admin"}, Count: 1},
		{Key: Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: "fp-poll", Node: "Key Lookup  [dbo].[Jobs].[PK_Jobs]"}, Count: 1},
		{Key: Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: "fp-poll", Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}, Count: 2},
		{Key: Key{Rule: "residual-sort", File: "sql/queue.sql", Fingerprint: "fp-poll", Node: "Sort"}, Count: 1},
	}
	if got := b.Entries(); !reflect.DeepEqual(got, wantEntries) {
		t.Errorf("Entries = %+v\nwant %+v", got, wantEntries)
	}
	if b.Path != "b.json" {
		t.Errorf("Path = %q", b.Path)
	}
	// Writing what was read gives the same bytes.
	var again bytes.Buffer
	if err := Write(&again, b.Entries()); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Errorf("rewrite differs:\n%s", again.String())
	}
}

func TestWriteMergesDuplicates(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, []Entry{
		{Key: Key{Rule: "key-lookup", File: "a.sql", Fingerprint: "f"}, Count: 1},
		{Key: Key{Rule: "key-lookup", File: `.\a.sql`, Fingerprint: "f"}, Count: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"version\": 1,\n  \"entries\": [\n    {\"file\":\"a.sql\",\"rule\":\"key-lookup\",\"fingerprint\":\"f\",\"count\":3}\n  ]\n}\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestWriteEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, nil); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"version\": 1,\n  \"entries\": []\n}\n"; buf.String() != want {
		t.Errorf("got %q; want %q", buf.String(), want)
	}
	b, err := Parse("empty.json", buf.Bytes())
	if err != nil || len(b.Entries()) != 0 {
		t.Errorf("Parse = %v, %v; want no entries", b, err)
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		want    string
	}{
		{"empty rule", []Entry{{Key: Key{File: "a.sql"}, Count: 1}}, `baseline entry 1 (file "a.sql"): empty rule`},
		{"zero count", []Entry{{Key: Key{Rule: "r", File: "a.sql"}, Count: 1}, {Key: Key{Rule: "key-lookup", File: "b.sql"}}}, `baseline entry 2 (rule key-lookup, file "b.sql"): count 0; want at least 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tt.entries)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error = %v; want %q", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q despite the error", buf.String())
			}
		})
	}
}

// item makes an Item whose Finding is its label.
func item(label, rule, file, fp, node string) Item {
	return Item{Key: Key{Rule: rule, File: file, Fingerprint: fp, Node: node}, Finding: label}
}

func labels(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Finding.(string))
	}
	return out
}

func TestFilter(t *testing.T) {
	lookup := Key{Rule: "key-lookup", File: "q.sql", Fingerprint: "poll", Node: "Key Lookup [dbo].[Jobs]"}
	sort := Key{Rule: "residual-sort", File: "q.sql", Fingerprint: "poll", Node: "Sort"}
	skew := Key{Rule: "row-estimate-skew", File: "r.sql", Fingerprint: "report", Node: "Hash Match"}
	recorded := []Entry{{Key: lookup, Count: 2}, {Key: sort, Count: 1}, {Key: skew, Count: 1}}

	tests := []struct {
		name      string
		calls     [][]Item // Filter is called once per element
		fresh     []string
		known     int
		unmatched []Entry
	}{
		{
			name: "same findings: nothing fresh",
			calls: [][]Item{{
				item("l1", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("l2", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("s", "residual-sort", "q.sql", "poll", "Sort"),
				item("k", "row-estimate-skew", "r.sql", "report", "Hash Match"),
			}},
			known: 4,
		},
		{
			name: "one more of a counted key is fresh",
			calls: [][]Item{{
				item("l1", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("l2", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("l3", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("s", "residual-sort", "q.sql", "poll", "Sort"),
				item("k", "row-estimate-skew", "r.sql", "report", "Hash Match"),
			}},
			fresh: []string{"l3"},
			known: 4,
		},
		{
			name: "fixed findings are unmatched",
			calls: [][]Item{{
				item("l1", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
			}},
			known:     1,
			unmatched: []Entry{{Key: lookup, Count: 1}, {Key: sort, Count: 1}, {Key: skew, Count: 1}},
		},
		{
			name: "any part of the key differing makes a finding fresh",
			calls: [][]Item{{
				item("other-rule", "filtered-index-hint", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("other-file", "key-lookup", "q2.sql", "poll", "Key Lookup [dbo].[Jobs]"),
				item("other-statement", "key-lookup", "q.sql", "poll-v2", "Key Lookup [dbo].[Jobs]"),
				item("other-node", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Tasks]"),
			}},
			fresh:     []string{"other-rule", "other-file", "other-statement", "other-node"},
			unmatched: recorded,
		},
		{
			name: "windows paths and stray white space match",
			calls: [][]Item{{
				item("l1", "key-lookup", `.\q.sql`, " poll", "Key Lookup [dbo].[Jobs] "),
				item("k", "row-estimate-skew", `r.sql`, "report", "Hash Match"),
			}},
			known:     2,
			unmatched: []Entry{{Key: lookup, Count: 1}, {Key: sort, Count: 1}},
		},
		{
			name: "counts are used up across calls",
			calls: [][]Item{
				{item("l1", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]")},
				{item("l2", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]")},
				{item("l3", "key-lookup", "q.sql", "poll", "Key Lookup [dbo].[Jobs]"), item("s", "residual-sort", "q.sql", "poll", "Sort")},
			},
			fresh:     []string{"l3"},
			known:     3,
			unmatched: []Entry{{Key: skew, Count: 1}},
		},
		{
			name:      "no findings",
			calls:     [][]Item{nil},
			unmatched: recorded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(recorded)
			var fresh []string
			known := 0
			for _, items := range tt.calls {
				f, k := b.Filter(items)
				fresh = append(fresh, labels(f)...)
				known += k
			}
			if !reflect.DeepEqual(fresh, tt.fresh) || known != tt.known {
				t.Errorf("fresh %q, known %d; want %q, %d", fresh, known, tt.fresh, tt.known)
			}
			want := tt.unmatched
			if want == nil {
				want = []Entry{}
			}
			if got := b.Unmatched(); !reflect.DeepEqual(got, want) {
				t.Errorf("Unmatched = %+v; want %+v", got, want)
			}
		})
	}
}

// finding is what a caller might hold: a place in a file and a plan, and
// what the key is made of.
type finding struct {
	rule      string
	file      string
	line      int // where the statement starts
	statement string
	nodeID    int
	op, obj   string
}

// key builds a Key the way the CLI is meant to: from the statement's
// fingerprint and the operator's signature, never from line or NodeId.
func (f finding) item() Item {
	return Item{Key: Key{Rule: f.rule, File: f.file, Fingerprint: fingerprint(f.statement), Node: NodeSignature(f.op, f.obj)}, Finding: f}
}

// fingerprint stands in for the CLI's statement fingerprint: text with
// white space collapsed.
func fingerprint(sql string) string { return strings.Join(strings.Fields(sql), " ") }

func TestLineNumberIndependence(t *testing.T) {
	before := []finding{
		{rule: "key-lookup", file: "q.sql", line: 10, statement: "SELECT TOP (20) * FROM dbo.Jobs WHERE ClaimedAt IS NULL", nodeID: 4, op: "Key Lookup", obj: "[dbo].[Jobs].[PK_Jobs]"},
		{rule: "residual-sort", file: "q.sql", line: 10, statement: "SELECT TOP (20) * FROM dbo.Jobs WHERE ClaimedAt IS NULL", nodeID: 1, op: "Sort"},
		{rule: "set-options", file: "q.sql", line: 30, statement: "UPDATE dbo.Jobs SET ClaimedAt = SYSUTCDATETIME()"},
	}
	var items []Item
	for _, f := range before {
		items = append(items, f.item())
	}
	var buf bytes.Buffer
	if err := Write(&buf, Entries(items)); err != nil {
		t.Fatal(err)
	}
	b, err := Parse("baseline.json", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}

	// The file was reformatted and reordered: statements moved, the query
	// reflowed over several lines, and the plan renumbered its nodes.
	after := []finding{
		{rule: "set-options", file: "q.sql", line: 3, statement: "UPDATE dbo.Jobs\n   SET ClaimedAt = SYSUTCDATETIME()"},
		{rule: "residual-sort", file: "q.sql", line: 12, statement: "SELECT TOP (20) *\n  FROM dbo.Jobs\n WHERE ClaimedAt IS NULL", nodeID: 2, op: "Sort"},
		{rule: "key-lookup", file: "q.sql", line: 12, statement: "SELECT TOP (20) *\n  FROM dbo.Jobs\n WHERE ClaimedAt IS NULL", nodeID: 7, op: "Key Lookup", obj: "[dbo].[Jobs].[PK_Jobs]"},
		// A genuinely new problem in the same statement.
		{rule: "key-lookup", file: "q.sql", line: 12, statement: "SELECT TOP (20) *\n  FROM dbo.Jobs\n WHERE ClaimedAt IS NULL", nodeID: 9, op: "Key Lookup", obj: "[dbo].[Tasks].[PK_Tasks]"},
	}
	items = items[:0]
	for _, f := range after {
		items = append(items, f.item())
	}
	fresh, known := b.Filter(items)
	if known != 3 || len(fresh) != 1 || fresh[0].Finding.(finding).nodeID != 9 {
		t.Errorf("known %d, fresh %+v; want 3 known and the Tasks lookup fresh", known, fresh)
	}
	if u := b.Unmatched(); len(u) != 0 {
		t.Errorf("Unmatched = %+v; want none", u)
	}
}

func TestNodeSignature(t *testing.T) {
	tests := []struct {
		op   string
		obj  []string
		want string
	}{
		{"Key Lookup", []string{"[dbo].[Jobs].[PK_Jobs]"}, "Key Lookup [dbo].[Jobs].[PK_Jobs]"},
		{" Index  Seek ", []string{"[dbo].[Jobs]", " [IX_Pending] "}, "Index Seek [dbo].[Jobs] [IX_Pending]"},
		{"Sort", nil, "Sort"},
		{"Sort", []string{"", "  "}, "Sort"},
		{"", nil, ""},
	}
	for _, tt := range tests {
		if got := NodeSignature(tt.op, tt.obj...); got != tt.want {
			t.Errorf("NodeSignature(%q, %q) = %q; want %q", tt.op, tt.obj, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string // without the file name
	}{
		{"empty file", "", `1:1: empty file; expected a JSON object with "version" and "entries"`},
		{"white space only", " \n\t", `1:1: empty file; expected a JSON object with "version" and "entries"`},
		{"not an object", "[1]", `1:1: expected a JSON object with "version" and "entries"; got a list`},
		{"a string", `"baseline"`, `1:1: expected a JSON object with "version" and "entries"; got "baseline"`},
		{"malformed", "{\n  \"version\": 1,\n  \"entries\": [}\n", `3:15: malformed JSON: invalid character '}' looking for beginning of value`},
		{"missing comma", "{\n  \"version\": 1\n  \"entries\": []\n}\n", `3:3: malformed JSON: invalid character '"' after object key:value pair`},
		{"truncated", "{\n  \"version\": 1,\n  \"entries\": [\n    {\"file\": \"a.sql\"", `4:21: unexpected end of file; expected "}" or another key`},
		{"trailing data", "{\"version\": 1, \"entries\": []}\n{}", `2:1: unexpected data after the baseline object`},
		{"newer version", "{\n  \"version\": 2,\n  \"entries\": []\n}", `2:14: baseline version 2 is newer than this planlint reads (1); upgrade planlint or rewrite the baseline with --write-baseline`},
		{"version zero", "{\"version\": 0, \"entries\": []}", `1:13: unsupported baseline version 0 (this planlint reads 1); rewrite the baseline with --write-baseline`},
		{"version a string", "{\"version\": \"1\", \"entries\": []}", `1:13: "version" must be an integer; got "1"`},
		{"version a fraction", "{\"version\": 1.0, \"entries\": []}", `1:13: "version" must be an integer; got 1.0`},
		{"no version", "{\"entries\": []}", `1:1: no "version" key; is this a planlint baseline?`},
		{"no entries", "{\"version\": 1}", `1:1: no "entries" key`},
		{"unknown key", "{\"version\": 1, \"findings\": []}", `1:16: unknown key "findings"; a baseline has "version" and "entries"`},
		{"duplicate key", "{\"version\": 1,\n \"version\": 1, \"entries\": []}", `2:2: duplicate key "version" (first at line 1, column 2)`},
		{"entries not a list", "{\"version\": 1, \"entries\": {}}", `1:27: entries: expected a list; got an object`},
		{"entry not an object", "{\"version\": 1, \"entries\": [\n  \"a.sql\"\n]}", `2:3: entry 1: expected an object; got "a.sql"`},
		{
			"unknown entry key",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": \"key-lookup\", \"fingerprint\": \"f\", \"line\": 3, \"count\": 1}\n]}",
			`2:63: entry 1: unknown key "line"; entries have file, rule, fingerprint, node and count`,
		},
		{
			"duplicate entry key",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"file\": \"b.sql\"}\n]}",
			`2:21: entry 1: duplicate key "file"`,
		},
		{
			"missing rule",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"fingerprint\": \"f\", \"count\": 1}\n]}",
			`2:3: entry 1: no "rule"`,
		},
		{
			"empty rule",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": \" \", \"fingerprint\": \"f\", \"count\": 1}\n]}",
			`2:3: entry 1: empty rule`,
		},
		{
			"rule not a string",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": 102, \"fingerprint\": \"f\", \"count\": 1}\n]}",
			`2:29: entry 1: "rule" must be a string; got 102`,
		},
		{
			"count zero",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": \"r\", \"fingerprint\": \"f\", \"count\": 0}\n]}",
			`2:63: entry 1: "count" must be a whole number of at least 1; got 0`,
		},
		{
			"count a string",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": \"r\", \"fingerprint\": \"f\", \"count\": \"2\"}\n]}",
			`2:63: entry 1: "count" must be a whole number of at least 1; got "2"`,
		},
		{
			"count a fraction",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": \"r\", \"fingerprint\": \"f\", \"count\": 1.5}\n]}",
			`2:63: entry 1: "count" must be a whole number of at least 1; got 1.5`,
		},
		{
			"repeated entry",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"a.sql\", \"rule\": \"r\", \"fingerprint\": \"f\", \"count\": 1},\n  {\"file\": \"a.sql\", \"rule\": \"r\", \"fingerprint\": \"f\", \"count\": 2}\n]}",
			`3:3: entry 2 repeats entry 1 (same file, rule, fingerprint and node); merge their counts`,
		},
		{
			"error after a multibyte character",
			"{\"version\": 1, \"entries\": [\n  {\"file\": \"å.sql\", \"rule\": \"r\", \"fingerprint\": \"f\", \"count\": -1}\n]}",
			`2:63: entry 1: "count" must be a whole number of at least 1; got -1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Parse("base.json", []byte(tt.json))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v; want %q", b.Entries(), tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			if got, want := err.Error(), "base.json:"+tt.want; got != want {
				t.Errorf("error\n got  %s\n want %s", got, want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []Entry
	}{
		{"null entries", `{"version": 1, "entries": null}`, []Entry{}},
		{"byte-order mark", "\ufeff{\"version\": 1, \"entries\": []}", []Entry{}},
		{"keys in any order, node optional", `{"entries": [{"count": 2, "fingerprint": "f", "rule": "r", "file": "a\\b.sql"}], "version": 1}`,
			[]Entry{{Key: Key{Rule: "r", File: "a/b.sql", Fingerprint: "f"}, Count: 2}}},
		{"byte-identical compact form", `{"version":1,"entries":[{"file":"a.sql","rule":"r","fingerprint":"","node":"Sort","count":1}]}`,
			[]Entry{{Key: Key{Rule: "r", File: "a.sql", Node: "Sort"}, Count: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Parse("b.json", []byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := b.Entries(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Entries = %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".planlint-baseline.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, []Entry{{Key: Key{Rule: "key-lookup", File: "a.sql", Fingerprint: "f"}, Count: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Path != path || len(b.Entries()) != 1 {
		t.Errorf("Load = %q with %d entries; want %q with 1", b.Path, len(b.Entries()), path)
	}

	missing := filepath.Join(dir, "none.json")
	_, err = Load(missing)
	if !errors.Is(err, fs.ErrNotExist) || err.Error() != missing+": cannot read baseline: no such file or directory" {
		t.Errorf("Load(missing) = %v", err)
	}
}

func BenchmarkFilter(b *testing.B) {
	const n = 10000
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Key: Key{Rule: "key-lookup", File: fmt.Sprintf("sql/module%03d/proc%d.sql", i%100, i%7), Fingerprint: fmt.Sprintf("%016x", i*2654435761), Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}}
	}
	entries := Entries(items)
	for range b.N {
		b.StopTimer()
		bl := New(entries)
		b.StartTimer()
		if fresh, known := bl.Filter(items); len(fresh) != 0 || known != n {
			b.Fatalf("fresh %d known %d", len(fresh), known)
		}
	}
}

func BenchmarkNew(b *testing.B) {
	items := make([]Item, 10000)
	for i := range items {
		items[i] = Item{Key: Key{Rule: "key-lookup", File: fmt.Sprintf("sql/module%03d/proc%d.sql", i%100, i%7), Fingerprint: fmt.Sprintf("%016x", i*2654435761), Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}}
	}
	entries := Entries(items)
	for b.Loop() {
		New(entries)
	}
}

func BenchmarkParse(b *testing.B) {
	var items []Item
	for i := range 10000 {
		items = append(items, Item{Key: Key{Rule: "residual-sort", File: fmt.Sprintf("sql/f%d.sql", i%300), Fingerprint: fmt.Sprintf("%016x", i*2654435761), Node: "Sort"}})
	}
	var buf bytes.Buffer
	if err := Write(&buf, Entries(items)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse("b.json", data); err != nil {
			b.Fatal(err)
		}
	}
}
