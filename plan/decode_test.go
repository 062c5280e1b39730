package plan

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"
)

// sampleDoc has non-ASCII text, a character outside the BMP (a surrogate
// pair in UTF-16) and an encoding declaration that tests replace.
func sampleDoc(declared string) string {
	return `<?xml version="1.0" encoding="` + declared + `"?>` + "\r\n" +
		`<ShowPlanXML ` + nsAttr + ` Version="1.564" Build="16.0.4215.2"><BatchSequence><Batch><Statements>` +
		simple("SELECT N'café 😀' FROM [Grüße]", relop("0", "Index Seek",
			`<IndexScan Ordered="1"><Object Schema="[dbo]" Table="[Grüße]" Index="[IX_ß]"/></IndexScan>`)) +
		`</Statements></Batch></BatchSequence></ShowPlanXML>` + "\r\n"
}

func encodeUTF16(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	out := make([]byte, 0, 2*len(units))
	for _, u := range units {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestEncodings(t *testing.T) {
	want, err := Parse(strings.NewReader(sampleDoc("utf-8")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := want.Batches[0].Statements[0].Text; got != "SELECT N'café 😀' FROM [Grüße]" {
		t.Fatalf("reference text %q", got)
	}
	if got := want.Statements()[0].QueryPlan.Root.Access.Object().Index; got != "IX_ß" {
		t.Fatalf("reference index %q", got)
	}
	noDecl := strings.SplitN(sampleDoc(""), "\n", 2)[1]
	variants := []struct {
		name string
		data []byte
		ref  string // UTF-8 text of the same lines, when not sampleDoc's
	}{
		{"UTF-8", []byte(sampleDoc("utf-8")), ""},
		{"UTF-8 with BOM", append([]byte{0xEF, 0xBB, 0xBF}, sampleDoc("utf-8")...), ""},
		{"UTF-16LE with BOM", encodeUTF16(sampleDoc("utf-16"), false, true), ""},
		{"UTF-16BE with BOM", encodeUTF16(sampleDoc("utf-16"), true, true), ""},
		{"UTF-16LE without BOM", encodeUTF16(sampleDoc("utf-16"), false, false), ""},
		{"UTF-16BE without BOM", encodeUTF16(sampleDoc("utf-16"), true, false), ""},
		{"UTF-8 declaring utf-16", []byte(sampleDoc("utf-16")), ""},
		{"UTF-8 with BOM declaring UTF-16", append([]byte{0xEF, 0xBB, 0xBF}, sampleDoc("UTF-16")...), ""},
		{"UTF-16LE declaring utf-8", encodeUTF16(sampleDoc("utf-8"), false, true), ""},
		{"UTF-16BE declaring windows-1252", encodeUTF16(sampleDoc("windows-1252"), true, true), ""},
		{"UTF-16LE without declaration", encodeUTF16(noDecl, false, true), noDecl},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
	}
	for _, v := range variants {
		for _, rd := range readers {
			t.Run(v.name+"/"+rd.name, func(t *testing.T) {
				got, err := Parse(rd.wrap(bytes.NewReader(v.data)), Options{})
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				want := want
				if v.ref != "" {
					want = mustParse(t, v.ref)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("model differs from the UTF-8 reference: statement text %q", got.Batches[0].Statements[0].Text)
				}
			})
		}
	}
}

// wantError checks that err is an *Error or *LimitError whose text contains
// every fragment.
func wantError(t *testing.T, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", fragments)
	}
	var pe *Error
	var le *LimitError
	if !errors.As(err, &pe) && !errors.As(err, &le) {
		t.Errorf("error %T is neither *Error nor *LimitError: %v", err, err)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err, f)
		}
	}
}

func TestBadInput(t *testing.T) {
	utf16Doc := encodeUTF16(sampleDoc("utf-16"), false, true)
	root := "<ShowPlanXML " + nsAttr + ">"
	rootLE, rootBE := encodeUTF16(root, false, true), encodeUTF16(root, true, true)
	highThenX := append(rootLE, 0x3D, 0xD8, 'x', 0) // D83D then 'x'
	loneLow := append(rootBE, 0xDC, 0x00)
	highAtEnd := append(rootLE, 0x3D, 0xD8)
	deep := `<ShowPlanXML ` + nsAttr + `>` + strings.Repeat("<RelOp>", 10000) + strings.Repeat("</RelOp>", 10000) + `</ShowPlanXML>`
	billionLaughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">` +
		`<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>` +
		`<ShowPlanXML ` + nsAttr + `><BatchSequence><Batch><Statements><StmtSimple StatementText="&lol3;"/></Statements></Batch></BatchSequence></ShowPlanXML>`
	externalEntity := `<?xml version="1.0"?><!DOCTYPE ShowPlanXML [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>` +
		`<ShowPlanXML ` + nsAttr + `><BatchSequence><Batch><Statements><StmtSimple StatementText="&xxe;"/></Statements></Batch></BatchSequence></ShowPlanXML>`
	tests := []struct {
		name  string
		input []byte
		opts  Options
		want  []string
	}{
		{"empty", nil, Options{}, []string{"empty input"}},
		{"white space only", []byte(" \r\n\t \n"), Options{}, []string{"no root element", "white space"}},
		{"UTF-16 BOM only", []byte{0xFF, 0xFE}, Options{}, []string{"empty input"}},
		{"binary garbage", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), Options{}, []string{"not XML", `expected '<'`, "found a PNG image"}},
		{"plain text", []byte("SELECT * FROM dbo.Queue WHERE Status = 0"), Options{}, []string{"line 1, column 1", "not XML", "found what looks like T-SQL"}},
		{"JSON", []byte("\n  {\"plan\": 1}"), Options{}, []string{"line 2, column 3", "not XML"}},
		{"binary after <", []byte("<\x01\x02\x03"), Options{}, []string{"malformed XML"}},
		{"UTF-32", []byte{0xFF, 0xFE, 0, 0, '<', 0, 0, 0}, Options{}, []string{"UTF-32 input is not supported"}},
		{"malformed tag", []byte(showplan(`<StmtSimple StatementText=unquoted/>`)), Options{}, []string{"malformed XML", "in <Statements>", "unquoted or missing attribute value"}},
		{"mismatched end tag", []byte("<ShowPlanXML " + nsAttr + ">\n<BatchSequence>\n<Batch>\n</BatchSequence>"), Options{},
			[]string{"line 4", "in <Batch>", "end tag </BatchSequence> does not match start tag <Batch> at line 3"}},
		{"invalid UTF-8", []byte(showplan("<StmtSimple StatementText=\"caf\xe9\"/>")), Options{}, []string{"malformed XML: invalid UTF-8"}},
		{"undefined entity", []byte(showplan(`<StmtSimple StatementText="&nbsp;"/>`)), Options{}, []string{"malformed XML", "&nbsp;"}},
		{"wrong root", []byte(`<?xml version="1.0"?><foo/>`), Options{}, []string{"not a showplan: root element <foo> without a namespace"}},
		{"wrong root in namespace", []byte(`<foo ` + nsAttr + `/>`), Options{}, []string{`not a showplan: root element <foo> in namespace "` + Namespace + `"`}},
		{"right root, wrong namespace", []byte(`<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2022/ShowPlan"/>`), Options{},
			[]string{`root element <ShowPlanXML> in namespace "http://schemas.microsoft.com/sqlserver/2022/ShowPlan"`, "expected <ShowPlanXML> in namespace"}},
		{"right root, no namespace", []byte(`<ShowPlanXML Version="1.5"/>`), Options{}, []string{"<ShowPlanXML> without a namespace"}},
		{"prefixed root, wrong namespace", []byte(`<p:ShowPlanXML xmlns="` + Namespace + `" xmlns:p="urn:other"/>`), Options{}, []string{`<p:ShowPlanXML> in namespace "urn:other"`}},
		{"non-showplan XML", []byte(`<?xml version="1.0"?><html><body><p>hi</p></body></html>`), Options{}, []string{"not a showplan: root element <html>"}},
		{"billion laughs", []byte(billionLaughs), Options{}, []string{"DOCTYPE declarations are not allowed in showplan XML"}},
		{"external entity", []byte(externalEntity), Options{}, []string{"DOCTYPE declarations are not allowed in showplan XML"}},
		{"other declaration", []byte(`<!ELEMENT x ANY><ShowPlanXML ` + nsAttr + `/>`), Options{}, []string{"markup declaration <!ELEMENT"}},
		{"10000 levels", []byte(deep), Options{}, []string{"in <RelOp>", "maximum element depth 4096 exceeded", "--max-depth"}},
		{"depth limit option", []byte(sampleDoc("utf-8")), Options{MaxDepth: 5}, []string{"maximum element depth 5 exceeded"}},
		{"size limit", []byte(sampleDoc("utf-8")), Options{MaxBytes: 100}, []string{"maximum file size 100 bytes exceeded", "--max-file-size"}},
		{"size limit counts decoded UTF-16", utf16Doc, Options{MaxBytes: int64(len(sampleDoc("utf-16")) - 1)}, []string{"maximum file size"}},
		{"odd-length UTF-16", utf16Doc[:len(utf16Doc)-1], Options{}, []string{"invalid UTF-16", "odd number of bytes", "byte offset " + strconv.Itoa(len(utf16Doc)-2)}},
		{"unpaired high surrogate", highThenX, Options{}, []string{"in <ShowPlanXML>", "invalid UTF-16", "unpaired high surrogate 0xD83D at byte offset " + strconv.Itoa(len(rootLE))}},
		{"unpaired low surrogate", loneLow, Options{}, []string{"invalid UTF-16", "unpaired low surrogate 0xDC00 at byte offset " + strconv.Itoa(len(rootBE))}},
		{"high surrogate at end", highAtEnd, Options{}, []string{"unpaired high surrogate 0xD83D at the end of the input, byte offset " + strconv.Itoa(len(rootLE))}},
		{"two roots", []byte(showplan("") + "<ShowPlanXML/>"), Options{}, []string{"element <ShowPlanXML> after the end of the root element"}},
		{"text after root", []byte(showplan("") + "trailing"), Options{}, []string{"unexpected text after the root element"}},
		{"end tag after root", []byte(showplan("") + "</x>"), Options{}, []string{"end tag </x> after the end of the root element"}},
		{"declaration only", []byte(`<?xml version="1.0"?>`), Options{}, []string{"no root element"}},
		{"unsupported XML version", []byte(`<?xml version="2.0"?><ShowPlanXML/>`), Options{}, []string{"malformed XML", "unsupported version"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Parse(bytes.NewReader(tc.input), tc.opts)
			if doc != nil {
				t.Errorf("got a document with the error")
			}
			wantError(t, err, tc.want...)
		})
	}
}

func TestLimitErrorFields(t *testing.T) {
	_, err := Parse(strings.NewReader(sampleDoc("utf-8")), Options{MaxBytes: 100})
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitFileSize || le.Max != 100 || le.Limit.Flag() != "--max-file-size" {
		t.Fatalf("got %#v", err)
	}
	// Exactly at the limit is accepted.
	n := int64(len(sampleDoc("utf-8")))
	if _, err := Parse(strings.NewReader(sampleDoc("utf-8")), Options{MaxBytes: n}); err != nil {
		t.Errorf("document of exactly MaxBytes: %v", err)
	}
	if _, err := Parse(strings.NewReader(sampleDoc("utf-8")), Options{MaxBytes: n - 1}); !errors.As(err, &le) {
		t.Errorf("document one byte over MaxBytes: %v", err)
	}
	_, err = Parse(strings.NewReader(sampleDoc("utf-8")), Options{MaxDepth: 3})
	if !errors.As(err, &le) || le.Limit != LimitDepth || le.Max != 3 || le.Element != "Statements" || le.Line != 2 {
		t.Errorf("depth limit: %#v", err)
	}
}

func TestErrorRendering(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&Error{Line: 12, Column: 5, Element: "RelOp", Msg: "unexpected EOF: the file is truncated"},
			"line 12, column 5 in <RelOp>: unexpected EOF: the file is truncated"},
		{&Error{Msg: "empty input: there is no XML content"}, "empty input: there is no XML content"},
		{&Error{Line: 1, Column: 1, Msg: "not XML"}, "line 1, column 1: not XML"},
		{&LimitError{Limit: LimitDepth, Max: 4096, Line: 4098, Column: 3, Element: "RelOp"},
			"line 4098, column 3 in <RelOp>: maximum element depth 4096 exceeded; raise the limit with --max-depth"},
		{&LimitError{Limit: LimitFileSize, Max: 1073741824, Line: 9, Column: 1, Element: "ScalarOperator"},
			"line 9, column 1 in <ScalarOperator>: maximum file size 1073741824 bytes exceeded; raise the limit with --max-file-size"},
		{&FileError{Path: "a/b.sqlplan", Err: &Error{Line: 2, Column: 7, Msg: "x"}}, "a/b.sqlplan: line 2, column 7: x"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

// TestTruncatedEverywhere cuts a small document at every byte after the
// root start tag, and real plans at several points; each cut must be
// reported as truncation.
func TestTruncatedEverywhere(t *testing.T) {
	doc := sampleDoc("utf-8")
	rootStart := strings.Index(doc, "Build=")
	end := strings.LastIndex(doc, ">") + 1
	for cut := rootStart; cut < end; cut++ {
		_, err := Parse(strings.NewReader(doc[:cut]), Options{})
		wantError(t, err, "unexpected EOF: the file is truncated")
		if t.Failed() {
			t.Fatalf("cut at byte %d: ...%q", cut, doc[max(0, cut-20):cut])
		}
	}
	// The whole document with or without its trailing line break parses.
	for _, d := range []string{doc[:end], doc} {
		if _, err := Parse(strings.NewReader(d), Options{}); err != nil {
			t.Errorf("complete document: %v", err)
		}
	}
	for _, raw := range optionalCorpusSample(t, 5) {
		text := utf8Text(t, raw)
		last := bytes.LastIndexByte(text, '<')
		for _, cut := range []int{last / 10, last / 3, last / 2, last - 1, last} {
			_, err := Parse(bytes.NewReader(text[:cut]), Options{})
			wantError(t, err, "truncated")
		}
		// Raw UTF-16 files cut at an even offset are truncated, too.
		if len(raw) > 2 && raw[0] == 0xFF {
			_, err := Parse(bytes.NewReader(raw[:len(raw)/4*2]), Options{})
			wantError(t, err, "truncated")
		}
	}
}

// TestTruncatedPosition checks the message names the unclosed element.
func TestTruncatedPosition(t *testing.T) {
	doc := "<ShowPlanXML " + nsAttr + ">\n<BatchSequence>\n  <Batch>\n"
	_, err := Parse(strings.NewReader(doc), Options{})
	wantError(t, err, "line 4, column 1 in <Batch>: unexpected EOF: the file is truncated (<Batch> from line 3 is not closed)")
}

// optionalCorpusSample returns up to n corpus plans' bytes, or nothing when
// the shared folder is absent (the caller does not skip).
func optionalCorpusSample(t *testing.T, n int) [][]byte {
	t.Helper()
	var out [][]byte
	skipped := true
	t.Run("corpus sample", func(t *testing.T) {
		files := corpusFiles(t, "plans")
		skipped = false
		for i := 0; i < len(files) && len(out) < n; i += max(1, len(files)/n) {
			b, err := os.ReadFile(files[i])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	})
	if skipped {
		return nil
	}
	return out
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sqlplan")
	empty := filepath.Join(dir, "empty.sqlplan")
	bad := filepath.Join(dir, "bad.sqlplan")
	for path, content := range map[string]string{good: sampleDoc("utf-16"), empty: "", bad: sampleDoc("utf-8")[:200]} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if doc, err := ParseFile(good, Options{}); err != nil || len(doc.Statements()) != 1 {
		t.Fatalf("ParseFile(good): %v", err)
	}
	n := 0
	h, err := StreamFile(good, Options{}, func(*Statement) error { n++; return nil })
	if err != nil || n != 1 || h.Batches != 1 {
		t.Fatalf("StreamFile(good): %v, %d statements, %+v", err, n, h)
	}

	tests := []struct {
		name, path string
		want       []string
		is         error
	}{
		{"directory", dir, []string{dir + ": is a directory, not a showplan file"}, nil},
		{"missing", filepath.Join(dir, "nope.sqlplan"), []string{filepath.Join(dir, "nope.sqlplan") + ": no such file"}, fs.ErrNotExist},
		{"empty", empty, []string{empty + ": the file is empty"}, nil},
		{"truncated", bad, []string{bad + ": line ", "the file is truncated"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, perr := ParseFile(tc.path, Options{})
			_, serr := StreamFile(tc.path, Options{}, func(*Statement) error { return nil })
			for _, err := range []error{perr, serr} {
				if err == nil {
					t.Fatal("no error")
				}
				if !strings.HasPrefix(err.Error(), tc.path+": ") {
					t.Errorf("error %q does not start with the path", err)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				if tc.is != nil && !errors.Is(err, tc.is) {
					t.Errorf("errors.Is(%v, %v) is false", err, tc.is)
				}
			}
		})
	}

	stop := errors.New("stop")
	if _, err := StreamFile(good, Options{}, func(*Statement) error { return stop }); !errors.Is(err, stop) || !strings.HasPrefix(err.Error(), good) {
		t.Errorf("callback error through StreamFile: %v", err)
	}
}

func TestUnreadableFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions are not enforced")
	}
	path := filepath.Join(t.TempDir(), "locked.sqlplan")
	if err := os.WriteFile(path, []byte(sampleDoc("utf-8")), 0); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), path+": cannot open, permission denied") || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("got %v", err)
	}
}

// failingReader returns data and then an I/O error.
type failingReader struct{ data []byte }

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, errors.New("device not ready")
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	_, err := Parse(&failingReader{data: []byte(sampleDoc("utf-8")[:300])}, Options{})
	wantError(t, err, "read error: device not ready")
	_, err = Parse(iotest.ErrReader(errors.New("boom")), Options{})
	wantError(t, err, "cannot read input: boom")
}
