package sqlscript

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/planlint/planlint/internal/sqlgen"
)

var update = flag.Bool("update", false, "rewrite testdata/parse.golden from the current output (review the diff)")

// dumpScript renders what Parse found in a script, offsets and all: the
// batches and their requests, statements with keywords and fingerprints,
// parameters, suppressions and diagnostics.
func dumpScript(s *Script, err error) string {
	var b strings.Builder
	if s == nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	for _, bt := range s.Batches {
		r := bt.Request()
		fmt.Fprintf(&b, "batch %d [%d,%d) repeat %d %s text [%d+%d]\n", bt.Index, bt.Range.Start.Offset, bt.Range.End.Offset,
			bt.Repeat, r.Kind, r.ScriptOffset(0), len(r.Text))
		if r.Kind == RPC {
			fmt.Fprintf(&b, "  declaration %q\n", r.Declaration)
		}
		for _, p := range r.Params {
			fmt.Fprintf(&b, "  param %s %s = %s output=%v at %s-%s\n", p.Name, p.Type, p.Value.Text, p.Output, p.Range.Start, p.Range.End)
		}
		for _, st := range bt.Statements {
			fmt.Fprintf(&b, "  statement %s [%d,%d) %s-%s %s\n", st.Keyword, st.Range.Start.Offset, st.Range.End.Offset,
				st.Range.Start, st.Range.End, Fingerprint(st.Text))
		}
		if bt.Call != nil {
			for _, st := range bt.Call.Statements {
				fmt.Fprintf(&b, "  call statement %s %s-%s %s\n", st.Keyword, st.Range.Start, st.Range.End, Fingerprint(st.Text))
			}
		}
	}
	for _, sp := range s.Suppressions {
		fmt.Fprintf(&b, "suppression %v file=%v %q %s-%s line %d\n", sp.Rules, sp.File, sp.Reason, sp.Range.Start, sp.Range.End, sp.Line)
	}
	for _, d := range s.Diagnostics {
		fmt.Fprintf(&b, "%s %s-%s %s\n", d.Severity, d.Range.Start, d.Range.End, d.Message)
	}
	return b.String()
}

// pinnedInputs are the scripts whose parse is pinned: the fuzz seeds, the
// .sql fixtures and small instances of the generated shapes.
func pinnedInputs(t *testing.T) map[string]string {
	in := map[string]string{}
	for i, s := range fuzzSeeds {
		in[fmt.Sprintf("seed %02d", i)] = s
	}
	files, err := filepath.Glob("../fixtures/*/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in[strings.TrimPrefix(filepath.ToSlash(f), "../")] = string(src)
	}
	args := strings.Repeat(", 1", 40)
	in["exec long"] = "-- @p int = 1\nEXEC dbo.Proc @p" + args + "\nGO\nEXEC dbo.Proc 0" + args + "; SELECT 1"
	in["exec sp_executesql long"] = "-- @p int = 1\nEXEC sp_executesql N'SELECT @a" + strings.Repeat(" + @a", 40) + "', N'@a int', @a = 1" +
		"\nGO\nEXEC [master].[sys].[sp_executesql] N'SELECT x FROM t WHERE a IN (1" + args + ")', N'@a int', @a = 1" +
		"\nGO\nEXEC master..sp_executesql N'SELECT 1'" + strings.Repeat(", @x = 1", 40)
	in["bench unit"] = benchScript[:strings.Index(benchScript[1:], "-- planlint-ignore")+1]
	for _, sh := range sqlgen.Shapes {
		n := 600
		if sh.Unit != "bytes" {
			n = 4
		}
		in["shape "+sh.Name] = sh.Gen(n)
	}
	return in
}

// TestParsePinned compares the parse of the pinned inputs with
// testdata/parse.golden: statement ranges, keywords, parameters,
// suppressions and the fingerprints baselines store must not change when
// the parser's internals do. Long dumps are pinned by their hash.
func TestParsePinned(t *testing.T) {
	in := pinnedInputs(t)
	names := make([]string, 0, len(in))
	for n := range in {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		d := dumpScript(Parse(n, []byte(in[n])))
		if len(d) > 4000 {
			d = fmt.Sprintf("%d bytes, sha256 %x\n", len(d), sha256.Sum256([]byte(d)))
		}
		fmt.Fprintf(&b, "== %s\n%s", n, d)
	}
	checkGolden(t, b.String(), filepath.Join("testdata", "parse.golden"))
}

// TestParsePinnedCorpus pins the parse of every batch text of the shared
// showplan corpus, each batch's statement texts joined as one script, by
// the hash of each plan's dump.
func TestParsePinnedCorpus(t *testing.T) {
	dir := sharedDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "corpus", "plans", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus plans: %v", err)
	}
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		var d strings.Builder
		for _, batch := range planBatches(t, f) {
			d.WriteString(dumpScript(Parse("plan.sql", []byte(strings.Join(batch, "\n")))))
		}
		fmt.Fprintf(&b, "%s %x\n", filepath.Base(f), sha256.Sum256([]byte(d.String())))
	}
	checkGolden(t, b.String(), filepath.Join("testdata", "parse-corpus.golden"))
}

func checkGolden(t *testing.T, got, golden string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (create it with: go test ./sqlscript -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("parse differs from %s at line %d\n got: %q\nwant: %q\n(if the change is intended, rerun with -update and review the diff)", golden, i+1, g, w)
			}
		}
	}
}

// TestFingerprintPinned pins fingerprints as baselines store them: a
// change here silently orphans every baseline entry.
func TestFingerprintPinned(t *testing.T) {
	tests := []struct{ sql, want string }{
		{"SELECT TOP (20) WorkId FROM dbo.Work WITH (READPAST) WHERE Status = 0 AND Kind IN (1, 2, 3) ORDER BY CreatedAt;", "828b3cfaa050dc24"},
		{"SELECT WorkId FROM dbo.Work WHERE Status = @Status", "35f004825bd5f6e7"},
		{"UPDATE dbo.Work SET Status = 1 OUTPUT inserted.WorkId WHERE WorkId = @id AND Status = -1", "819419d00ff3079d"},
		{"select [a b], \"c\", @@rowcount, N'x', 0x1F, $5 from #t -- comment\n/* block */ where x in (1, 'a', null);;", "5d3af15c2bc98818"},
		{"EXEC p @A = 1; ;", "54996732b18d8a47"},
		{"", "e3b0c44298fc1c14"},
	}
	for _, tt := range tests {
		if got := Fingerprint(tt.sql); got != tt.want {
			t.Errorf("Fingerprint(%q) = %s, want %s", tt.sql, got, tt.want)
		}
	}
}
