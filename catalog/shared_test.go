package catalog

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/planlint/planlint/internal/sharedtest"
)

// TestSharedArticleScript parses the queue example of the filtered-index
// article in the shared notes.
func TestSharedArticleScript(t *testing.T) {
	dir := sharedtest.Require(t, "docs")
	data, err := os.ReadFile(filepath.Join(dir, "queue-filtered-indexes.txt"))
	if err != nil {
		t.Skipf("article not readable: %v", err)
	}
	text := string(data)
	start := strings.Index(text, "CREATE TABLE #Work")
	end := strings.Index(text, "DROP TABLE #Work;")
	if start < 0 || end < start {
		t.Fatal("the article no longer holds the CREATE TABLE #Work ... DROP TABLE #Work; example")
	}
	c, diags := parse(t, text[start:end+len("DROP TABLE #Work;")])
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	want := []string{
		"table tempdb.dbo.#Work",
		"col WorkId bigint NOT NULL 8",
		"col Status tinyint NOT NULL 1",
		"col CreatedAt datetime2(0) NOT NULL 6",
		"col CustomerId int NOT NULL 4",
		"index PK__#Work CLUSTERED unique pk (WorkId)",
		"index IX_Work_Pending NONCLUSTERED (CreatedAt, WorkId) include (CustomerId) where Status = 0 => Status = 0",
	}
	if got := describeCatalog(c); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("catalog:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// How a plan names the table and the literal it compares with.
	work := c.FindTable("[tempdb]", "[dbo]", "[#Work]")
	if work == nil {
		t.Fatal("#Work not found under its plan name")
	}
	if ok, _ := work.FindIndex("[IX_Work_Pending]").Filter.ImpliedBy([]Conjunct{{Column: "[Status]", Op: "=", Values: []string{"(0)"}}}); !ok {
		t.Error("the article's query predicate does not imply its index filter")
	}
}

// planStrings returns the StatementText and ConstValue attributes of a
// showplan file.
func planStrings(t *testing.T, path string) (statements, constants []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text, err := decodeText(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	dec := xml.NewDecoder(strings.NewReader(text))
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil } // already UTF-8
	for {
		tok, err := dec.Token()
		if err != nil {
			return statements, constants
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "StatementText":
				statements = append(statements, a.Value)
			case "ConstValue":
				constants = append(constants, a.Value)
			}
		}
	}
}

// TestSharedCorpusStatements runs every statement text of the real plans
// through ParseScript: T-SQL that SQL Server compiled must not give
// diagnostics, and the CREATE TABLE and CREATE INDEX statements among them
// must yield tables and indexes. Every constant of the plans must compare
// equal to itself.
func TestSharedCorpusStatements(t *testing.T) {
	files := append(sharedtest.Files(t, "corpus/plans"), sharedtest.Files(t, "corpus/odd")...)
	var statements, cut, creates, tables, indexes, sessionIndexes, constants int
	for _, path := range files {
		stmts, consts := planStrings(t, path)
		for _, s := range stmts {
			statements++
			c, diags, err := ParseScript(filepath.Base(path), strings.NewReader(s))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range diags {
				// SQL Server cuts statement texts at 4000 characters,
				// which can leave a string or comment open.
				if truncated := utf8.RuneCountInString(s) >= 3999; truncated && strings.HasPrefix(d.Message, "unterminated") {
					cut++
					continue
				}
				t.Errorf("%v\nstatement: %s", d, clip(s))
			}
			if hasCreate(s) {
				creates++
			}
			for _, tb := range c.Tables {
				tables++
				indexes += len(tb.Indexes)
			}
			var buf bytes.Buffer
			if err := Write(&buf, c); err != nil {
				t.Fatal(err)
			}
		}
		// The file's statements as one script, a batch each, as a
		// session ran them: indexes land on the tables created before.
		var script []string
		for _, s := range stmts {
			if utf8.RuneCountInString(s) < 3999 {
				script = append(script, s)
			}
		}
		c, diags, err := ParseScript(filepath.Base(path), strings.NewReader(strings.Join(script, "\nGO\n")))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diags {
			t.Errorf("%v (statements joined)", d)
		}
		for _, tb := range c.Tables {
			if len(tb.Columns) > 0 {
				sessionIndexes += len(tb.Indexes)
			}
		}
		for _, v := range consts {
			if v == "" || strings.EqualFold(v, "NULL") {
				continue
			}
			constants++
			if cmp, ok := CompareLiterals(v, v); cmp != 0 || !ok {
				t.Errorf("%s: CompareLiterals(%q, itself) = %d, %v", filepath.Base(path), v, cmp, ok)
			}
		}
	}
	t.Logf("%d files, %d statements (%d cut short, %d with CREATE TABLE/INDEX outside modules): %d tables, %d indexes, "+
		"%d of them on tables created in the same file; %d constants",
		len(files), statements, cut, creates, tables, indexes, sessionIndexes, constants)
	if creates > 0 && (tables == 0 || indexes == 0 || sessionIndexes == 0) {
		t.Errorf("%d CREATE statements gave %d tables and %d indexes (%d on tables of the same file)", creates, tables, indexes, sessionIndexes)
	}
}

// hasCreate reports whether s starts a CREATE TABLE or CREATE INDEX
// statement outside a module body.
func hasCreate(s string) bool {
	toks := lex(s, true)
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].is("CREATE") && isModuleKeyword(toks[i+1]) {
			return false
		}
		if toks[i].is("CREATE") {
			for _, n := range toks[i+1 : min(i+5, len(toks))] {
				if n.is("TABLE") || n.is("INDEX") {
					return true
				}
			}
		}
	}
	return false
}
