package plan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// xtok is a token in a form both tokenizers can produce: kind, name and,
// for start tags, attributes as "prefix:local=value".
type xtok struct {
	kind  string
	name  string
	attrs string
	data  string // text (decoded), comment or processing instruction content
}

func (t xtok) String() string {
	return fmt.Sprintf("%s %q %q %q", t.kind, t.name, t.attrs, t.data)
}

// splitName renders a qualified name as encoding/xml splits it.
func splitName(prefix, local string) string {
	if prefix == "" {
		return local
	}
	return prefix + ":" + local
}

// appendTok appends t, merging character data with the previous token:
// the scanner and encoding/xml split text differently around CDATA.
func appendTok(toks []xtok, t xtok) []xtok {
	if t.kind == "text" && len(toks) > 0 && toks[len(toks)-1].kind == "text" {
		toks[len(toks)-1].data += t.data
		return toks
	}
	return append(toks, t)
}

// stdTokens tokenizes data with encoding/xml RawToken. directive is true
// when it stopped at a markup declaration, which the scanner rejects.
func stdTokens(data []byte) (toks []xtok, directive bool, err error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return toks, false, nil
		}
		if err != nil {
			return toks, false, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var attrs []string
			for _, a := range t.Attr {
				attrs = append(attrs, splitName(a.Name.Space, a.Name.Local)+"="+a.Value)
			}
			toks = appendTok(toks, xtok{kind: "start", name: splitName(t.Name.Space, t.Name.Local), attrs: strings.Join(attrs, "\x00")})
		case xml.EndElement:
			toks = appendTok(toks, xtok{kind: "end", name: splitName(t.Name.Space, t.Name.Local)})
		case xml.CharData:
			toks = appendTok(toks, xtok{kind: "text", data: string(t)})
		case xml.Comment:
			toks = appendTok(toks, xtok{kind: "comment", data: string(t)})
		case xml.ProcInst:
			toks = appendTok(toks, xtok{kind: "procinst", name: t.Target, data: string(t.Inst)})
		case xml.Directive:
			return toks, true, nil
		}
	}
}

// scanTokens tokenizes data with the scanner reading through r.
func scanTokens(r io.Reader, bufSize int) ([]xtok, error) {
	s := newScannerSize(r, bufSize)
	var toks []xtok
	for {
		k, err := s.next()
		if err == io.EOF {
			return toks, nil
		}
		if err != nil {
			return toks, err
		}
		switch k {
		case tokStart:
			var attrs []string
			for _, a := range s.attrs {
				attrs = append(attrs, splitName(string(a.prefix), string(a.local))+"="+string(a.value))
			}
			toks = appendTok(toks, xtok{kind: "start", name: splitName(s.prefix, s.local), attrs: strings.Join(attrs, "\x00")})
			if s.name != string(s.qname) {
				return toks, fmt.Errorf("interned name %q differs from %q", s.name, s.qname)
			}
		case tokEnd:
			toks = appendTok(toks, xtok{kind: "end", name: string(s.qname)})
		case tokText:
			text := s.text()
			if s.blank != (len(bytes.Trim(text, " \t\r\n")) == 0) {
				return toks, fmt.Errorf("text %q: blank is %v", text, s.blank)
			}
			toks = appendTok(toks, xtok{kind: "text", data: string(text)})
		case tokComment:
			toks = appendTok(toks, xtok{kind: "comment", data: string(s.raw)})
		case tokProcInst:
			toks = appendTok(toks, xtok{kind: "procinst", name: string(s.target), data: string(s.raw)})
		default:
			return toks, fmt.Errorf("unknown token kind %d", k)
		}
	}
}

// compareWithStd checks the scanner against encoding/xml on data: the same
// tokens when both accept it; when encoding/xml accepts and the scanner
// does not, the scanner's error must be one of its documented strictness
// cases and the tokens before it must agree; encoding/xml rejecting
// means the scanner rejects too.
func compareWithStd(t *testing.T, data []byte) {
	t.Helper()
	want, directive, stdErr := stdTokens(data)
	readers := []struct {
		name string
		r    io.Reader
		size int
	}{
		{"whole", bytes.NewReader(data), initialBufSize},
		{"one byte at a time, 16-byte buffer", iotest.OneByteReader(bytes.NewReader(data)), 16},
		{"half reads, 2-byte buffer", iotest.HalfReader(bytes.NewReader(data)), 2},
	}
	if len(data) > 256<<10 {
		readers = readers[:1] // small inputs and the fuzz target cover refills
	}
	for _, rd := range readers {
		got, err := scanTokens(rd.r, rd.size)
		var syn *syntaxError
		switch {
		case err != nil && !errors.As(err, &syn):
			t.Fatalf("%s: scanner error %T is not a *syntaxError: %v", rd.name, err, err)
		case stdErr != nil:
			if err == nil {
				t.Fatalf("%s: encoding/xml rejects the input (%v) but the scanner accepts it", rd.name, stdErr)
			}
		case directive:
			if err == nil || syn.strict != strictDirective {
				t.Fatalf("%s: encoding/xml reads a markup declaration; the scanner should reject it, got %v", rd.name, err)
			}
			checkPrefix(t, rd.name, got, want)
		case err != nil:
			if syn.strict == 0 {
				t.Fatalf("%s: encoding/xml accepts the input but the scanner rejects it for no documented reason: %v", rd.name, err)
			}
			checkPrefix(t, rd.name, got, want)
		default:
			if len(got) != len(want) {
				t.Fatalf("%s: %d tokens, encoding/xml has %d%s", rd.name, len(got), len(want), firstDiff(got, want))
			}
			checkPrefix(t, rd.name, got, want)
		}
	}
}

// checkPrefix checks that got agrees with the start of want.
func checkPrefix(t *testing.T, name string, got, want []xtok) {
	t.Helper()
	if len(got) > len(want) {
		t.Fatalf("%s: %d tokens before the error, encoding/xml has only %d%s", name, len(got), len(want), firstDiff(got, want))
	}
	for i := range got {
		// The last token may be text cut short by the error.
		if got[i] != want[i] && !(i == len(got)-1 && got[i].kind == "text" && strings.HasPrefix(want[i].data, got[i].data)) {
			t.Fatalf("%s: token %d:\n got %v\nwant %v", name, i, got[i], want[i])
		}
	}
}

func firstDiff(got, want []xtok) string {
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			return fmt.Sprintf("; first difference at token %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	return ""
}

// repoFiles lists the regular files under dir (relative to the repository
// root), sorted.
func repoFiles(t *testing.T, dir string) []string {
	t.Helper()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		if parent := filepath.Dir(root); parent != root {
			root = parent
			continue
		}
		t.Fatal("go.mod not found above the working directory")
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// asUTF8 is the file's text as the scanner sees it: transcoded to UTF-8
// when it has a byte order mark and decodes cleanly, else the raw bytes.
func asUTF8(t *testing.T, raw []byte) []byte {
	if bytes.HasPrefix(raw, []byte{0xFF, 0xFE}) || bytes.HasPrefix(raw, []byte{0xFE, 0xFF}) || bytes.HasPrefix(raw, []byte{0xEF, 0xBB, 0xBF}) {
		if len(raw)%2 == 1 && raw[0] != 0xEF {
			return raw
		}
		return utf8Text(t, raw)
	}
	return raw
}

func TestScannerMatchesEncodingXMLOnFiles(t *testing.T) {
	files := repoFiles(t, "fixtures")
	if dir, _ := locateShared(); dir != "" {
		for _, sub := range []string{"plans", "odd"} {
			files = append(files, corpusFiles(t, sub)...)
		}
	} else {
		t.Log("shared corpus not found: checking the repository's fixtures only")
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			compareWithStd(t, asUTF8(t, raw))
		})
	}
}

// scannerSeeds are small documents for the differential tests: well-formed
// ones, tricky references, CDATA, comments, odd white space, and malformed
// ones of every kind the scanner checks.
var scannerSeeds = []string{
	``,
	`<a/>`,
	`<a></a>`,
	`<a b="1" c='2'/>`,
	"<a\r\n\tb = \"1\"\n\tc\t=\t'2'\r\n/>",
	`<p:a xmlns:p="urn:x" p:b="1"></p:a>`,
	`<:a :b="1"/>`,
	`<a: b:="1"/>`,
	`<a.b-c_d e.f-g="1"/>`,
	`<a b="&lt;&gt;&amp;&apos;&quot;"/>`,
	`<a b="&#65;&#x42;&#x10FFFF;&#0000067;&#x9;&#10;&#13;"/>`,
	`<a b="x&#xD;&#xA;y">&#xD;&#xA;z</a>`,
	"<a b=\"x\r\ny\rz\n\"/>",
	"<a>x\r\ny\rz</a>",
	`<a b='"' c="'"/>`,
	`<a b="]]>"/>`,
	`<a>]]&gt;</a>`,
	`<a>]]></a>`,
	`<a>]></a>`,
	`<a><![CDATA[<x>&amp;]]]]><![CDATA[>]]></a>`,
	"<a><![CDATA[\r\n]]></a>",
	`<a><!-- comment - with dashes --></a>`,
	`<!---->`,
	`<!--->-->`,
	`<!-- a --->`,
	`<!-- a -- b -->`,
	`<?xml version="1.0" encoding="utf-16"?><a/>`,
	`<?xml version='1.1'?><a/>`,
	`<?xml?><a/>`,
	` <?xml version="1.0"?><a/>`,
	`<a/><?xml version="1.0"?>`,
	`<?XML version="1.0"?><a/>`,
	`<?xml-stylesheet href="x"?><a/>`,
	`<?pi some data ??>`,
	`<?pi?>`,
	`<? pi?>`,
	`<!DOCTYPE a><a/>`,
	`<!ENTITY x "y"><a/>`,
	`<!DOCTYPE a [<!ENTITY x "<>"><!-- > --><!ENTITY y '">'>]><a/>`,
	`<!DOCTYPE a [<!-- unterminated`,
	`<!DOCTYPE a "unterminated>`,
	`<!DOCTYPE a [<!-`,
	`<!X <>>`,
	`<!X <<!-->-->>>`,
	`<!X <!x>>`,
	`<!"x>`,
	`<!>x>`,
	`<![CDATA[x]]>`,
	`<![CDAT`,
	`<!-x-->`,
	`<!`,
	`<a b="&nbsp;"/>`,
	`<a b="&#0;"/>`,
	`<a b="&#xD800;"/>`,
	`<a b="&#x110000;"/>`,
	`<a b="&#99999999999999999999;"/>`,
	`<a b="&#xFFFE;"/>`,
	`<a b="&#;"/>`,
	`<a b="&#x;"/>`,
	`<a b="&#X41;"/>`,
	`<a b="&#65"/>`,
	`<a b="&;"/>`,
	`<a b="& "/>`,
	`<a>&amp</a>`,
	`<a b="<"/>`,
	"<a b=\"\x01\"/>",
	"<a>\x00</a>",
	"<a>caf\xe9</a>",
	"<a b=\"caf\xc3\"/>",
	"<a b=\"\xef\xbf\xbe\"/>",
	"<a b=\"\xed\xa0\x80\"/>",
	"<a>\xf0\x9f\x98\x80 caf\xc3\xa9</a>",
	"<!-- \x01 --><a/>",
	"<?pi \xff?><a/>",
	`<a b=1/>`,
	`<a b/>`,
	`<a b="1"c="2"/>`,
	`<a b="1"/c="2">`,
	`<a / >`,
	`<a/ >`,
	`< a/>`,
	`<1a/>`,
	`<a 1="x"/>`,
	`<a:b:c/>`,
	`<a b:c:d="1"/>`,
	`</a b>`,
	`</ a>`,
	`</a  >`,
	`<a></b>`,
	"<é/>",
	"<a é=\"1\"/>",
	`<a b="1`,
	`<a b="1"`,
	`<a`,
	`<`,
	`<a>text`,
	`text`,
	`<a><!-- unterminated`,
	`<a><?pi unterminated`,
	`<a><![CDATA[unterminated`,
	`<a b="x&am`,
	`<a b="x&#x4`,
}

func TestScannerMatchesEncodingXMLOnSeeds(t *testing.T) {
	for _, s := range scannerSeeds {
		t.Run(fmt.Sprintf("%q", s), func(t *testing.T) { compareWithStd(t, []byte(s)) })
	}
}

// FuzzScannerMatchesEncodingXML runs the differential check on arbitrary
// input.
func FuzzScannerMatchesEncodingXML(f *testing.F) {
	for _, s := range scannerSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(sampleDoc("utf-8")))
	for _, b := range smallCorpusPlans(6, 8<<10) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithStd(t, data)
	})
}

// scanError scans data to its first error and returns it with its
// position.
func scanError(t *testing.T, data string, bufSize int) (err *syntaxError, line, col int) {
	t.Helper()
	s := newScannerSize(iotest.HalfReader(strings.NewReader(data)), bufSize)
	for {
		_, e := s.next()
		if e == io.EOF {
			return nil, 0, 0
		}
		if e != nil {
			if !errors.As(e, &err) {
				t.Fatalf("error %T is not a *syntaxError: %v", e, e)
			}
			line, col = s.position(err.off)
			return err, line, col
		}
	}
}

func TestScannerErrors(t *testing.T) {
	tests := []struct {
		name, in  string
		msg       string
		line, col int
		strict    strictness
	}{
		{"unquoted value", "<a\n b=1/>", `unquoted or missing attribute value for "b" in <a>`, 2, 4, 0},
		{"missing =", `<a b c="1"/>`, `expected = after "b", found 'c'`, 1, 6, 0},
		{"< in value", `<a b="x<y"/>`, "unescaped < inside the attribute value in <a>", 1, 8, 0},
		{"control in value", "<a b=\"x\x07\"/>", "illegal character code U+0007 in an attribute value of <a>", 1, 8, 0},
		{"undefined entity", "<a>\n\n  <b c=\"x&nbsp;\"/>", "undefined entity &nbsp;", 3, 10, 0},
		{"no semicolon", `<a b="&amp x"/>`, `invalid entity reference "&amp "`, 1, 7, 0},
		{"reference to NUL", `<a b="&#0;"/>`, "character reference &#0; is illegal character code U+0000", 1, 7, 0},
		{"reference beyond Unicode", `<a b="&#x110000;"/>`, "character reference &#x110000; is beyond U+10FFFF", 1, 7, 0},
		{"reference to FFFF", `<a b="&#xFFFF;"/>`, "illegal character code U+FFFF", 1, 7, 0},
		{"empty reference", `<a b="&#x;"/>`, `invalid character reference "&#x;"`, 1, 7, 0},
		{"surrogate reference", `<a b="&#xDC00;"/>`, "character reference &#xDC00; is a UTF-16 surrogate", 1, 7, strictSurrogateRef},
		{"invalid UTF-8 in text", "<a>\nab\xff</a>", "invalid UTF-8", 2, 3, 0},
		{"invalid UTF-8 in value", "<a b=\"\xc3(\"/>", "invalid UTF-8", 1, 7, 0},
		{"noncharacter", "<a>\xef\xbf\xbf</a>", "illegal character code U+FFFF", 1, 4, 0},
		{"control in text", "<a>\x1b[0m</a>", "illegal character code U+001B", 1, 4, 0},
		{"]]> in text", "<a>x]]>y</a>", "unescaped ]]> outside a CDATA section", 1, 5, 0},
		{"-- in comment", "<!-- a -- b -->", `"--" not allowed in comments`, 1, 8, 0},
		{"control in comment", "<!-- \x01 -->", "illegal character code U+0001 in a comment", 1, 6, strictMarkupChars},
		{"invalid UTF-8 in PI", "<?pi \xc3?>", "invalid UTF-8 in a processing instruction", 1, 6, strictMarkupChars},
		{"control in CDATA", "<a><![CDATA[\x02]]></a>", "illegal character code U+0002 in a CDATA section", 1, 13, 0},
		{"bad CDATA opening", "<a><![CDATX[", "invalid <![ sequence", 1, 4, 0},
		{"DOCTYPE", "<?xml version=\"1.0\"?>\n<!DOCTYPE a [\n<!ENTITY x \"y\">]>", "DOCTYPE declarations are not allowed in showplan XML", 2, 1, strictDirective},
		{"ELEMENT", "<!ELEMENT a ANY>", "unexpected markup declaration <!ELEMENT:", 1, 1, strictDirective},
		{"late XML declaration", "<a/>\n<?xml version=\"1.0\"?>", "XML declaration is allowed only at the start", 2, 1, strictXMLDecl},
		{"second XML declaration", "<?xml version=\"1.0\"?><?xml version=\"1.0\"?><a/>", "XML declaration is allowed only at the start", 1, 22, strictXMLDecl},
		{"reserved PI target", "<?Xml version=\"1.0\"?><a/>", `processing instruction target "Xml" is reserved`, 1, 1, strictXMLDecl},
		{"XML 1.1", "<?xml version=\"1.1\"?><a/>", `unsupported version "1.1"`, 1, 1, 0},
		{"attributes run together", `<a b="1"c="2"/>`, `attributes of <a> must be separated by white space before "c"`, 1, 9, strictAttrSpace},
		{"non-ASCII element name", "<Grüße/>", `non-ASCII character in name "Grü"`, 1, 4, strictNonASCIIName},
		{"name starts with digit", "<a>\n<1b/>", `invalid XML name "1b"`, 2, 2, 0},
		{"two colons", "<a:b:c/>", `invalid XML name "a:b:c": more than one colon`, 1, 2, 0},
		{"bad self-closing", "<a/ >", "expected > after / to close <a>, found ' '", 1, 4, 0},
		{"junk in end tag", "<a></a b>", "invalid characters between </a and >: found 'b'", 1, 8, 0},
		{"no name after <", "<a>< b/></a>", "expected element name after <, found ' '", 1, 5, 0},
		{"no name after </", "<a></ a>", "expected element name after </, found ' '", 1, 6, 0},
		{"no PI target", "<? x?>", "expected target name after <?, found ' '", 1, 3, 0},
	}
	for _, tc := range tests {
		for _, size := range []int{2, initialBufSize} {
			t.Run(fmt.Sprintf("%s/buffer %d", tc.name, size), func(t *testing.T) {
				err, line, col := scanError(t, tc.in, size)
				if err == nil {
					t.Fatalf("no error; want %q", tc.msg)
				}
				if !strings.Contains(err.msg, tc.msg) || line != tc.line || col != tc.col || err.strict != tc.strict || err.truncated {
					t.Errorf("got line %d, column %d, strict %d: %s\nwant line %d, column %d, strict %d: ...%s...",
						line, col, err.strict, err.msg, tc.line, tc.col, tc.strict, tc.msg)
				}
			})
		}
	}
}

// TestScannerTruncation cuts well-formed documents at every byte: each cut
// inside a construct is reported as truncation at the end of the input.
func TestScannerTruncation(t *testing.T) {
	docs := []string{
		"<?xml version=\"1.0\"?>\n<a b=\"x&amp;y&#x1F600;\" c='caf\xc3\xa9'><!-- c --><?pi d?><![CDATA[e]]>\xf0\x9f\x98\x80</a>",
		sampleDoc("utf-8"),
	}
	for _, doc := range docs {
		for cut := 1; cut < len(doc); cut++ {
			in := doc[:cut]
			err, line, col := scanError(t, in, 8)
			if err == nil {
				continue // cut between tokens or inside text
			}
			wantLine := 1 + strings.Count(in, "\n")
			wantCol := len(in) - strings.LastIndexByte(in, '\n')
			if !err.truncated || line != wantLine || col != wantCol {
				t.Fatalf("cut at %d (...%q): got %v at line %d, column %d; want truncation at line %d, column %d",
					cut, in[max(0, cut-10):], err, line, col, wantLine, wantCol)
			}
		}
	}
}

// TestScannerPositions checks the line and column of every token start
// against a plain count, with buffers small enough to refill mid-token.
func TestScannerPositions(t *testing.T) {
	doc := "<?xml version=\"1.0\"?>\r\n<a\r\n  b=\"1\"\n  c='\n2'>\n\t<b/>  <c>text\n\nmore</c>\r\n<!--\n-->\n<d e=\"&#10;\"\n/></a>\n"
	for _, size := range []int{2, 5, 64, initialBufSize} {
		s := newScannerSize(iotest.OneByteReader(strings.NewReader(doc)), size)
		for {
			_, err := s.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			off := int(s.tokenOffset())
			wantLine := 1 + strings.Count(doc[:off], "\n")
			wantCol := off - strings.LastIndexByte(doc[:off], "\n"[0])
			if line, col := s.position(int64(off)); line != wantLine || col != wantCol {
				t.Errorf("buffer %d: token at offset %d (%q): line %d, column %d; want %d, %d",
					size, off, doc[off:min(off+6, len(doc))], line, col, wantLine, wantCol)
			}
			end := int(s.offset())
			wantLine = 1 + strings.Count(doc[:end], "\n")
			wantCol = end - strings.LastIndexByte(doc[:end], "\n"[0])
			if line, col := s.position(int64(end)); line != wantLine || col != wantCol {
				t.Errorf("buffer %d: token end at offset %d: line %d, column %d; want %d, %d", size, end, line, col, wantLine, wantCol)
			}
		}
	}
}

// TestScannerLargeValue reads an attribute value far larger than the
// buffer through a reader that returns one byte at a time: the buffer grows
// to hold it, and the rescans stay linear.
func TestScannerLargeValue(t *testing.T) {
	const n = 1 << 20
	val := strings.Repeat("SELECT 1; ", n/10)
	doc := `<a b="` + val + `&amp;" c="2">` + strings.Repeat(" ", n) + `</a>`
	r := &countingReader{r: iotest.OneByteReader(strings.NewReader(doc))}
	s := newScannerSize(r, 16)
	k, err := s.next()
	if err != nil || k != tokStart || len(s.attrs) != 2 || string(s.attrs[0].value) != val+"&" || string(s.attrs[1].value) != "2" {
		t.Fatalf("start tag: kind %d, %d attributes, err %v", k, len(s.attrs), err)
	}
	if k, err := s.next(); err != nil || k != tokText || !s.blank || len(s.raw) != n {
		t.Fatalf("text: kind %d, %d bytes, err %v", k, len(s.raw), err)
	}
	if k, err := s.next(); err != nil || k != tokEnd {
		t.Fatalf("end tag: kind %d, err %v", k, err)
	}
	if _, err := s.next(); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
	if len(s.buf) > 4*n {
		t.Errorf("buffer grew to %d bytes for tokens of at most %d", len(s.buf), n+len(val))
	}
	if r.reads > 2*len(doc) {
		t.Errorf("%d reads for %d bytes", r.reads, len(doc))
	}
}

type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestScannerReadErrors checks that errors from the reader come back
// unchanged once the data before them is used up, and stay.
func TestScannerReadErrors(t *testing.T) {
	boom := errors.New("boom")
	s := newScannerSize(io.MultiReader(strings.NewReader("<a><b/>"), iotest.ErrReader(boom)), 4)
	var kinds []tokenKind
	for {
		k, err := s.next()
		if err != nil {
			if err != boom {
				t.Fatalf("got %v, want the reader's error", err)
			}
			break
		}
		kinds = append(kinds, k)
	}
	if fmt.Sprint(kinds) != fmt.Sprint([]tokenKind{tokStart, tokStart, tokEnd}) {
		t.Errorf("tokens before the error: %v", kinds)
	}
	if _, err := s.next(); err != boom {
		t.Errorf("error is not sticky: %v", err)
	}
	// A reader that returns nothing forever is an error, not a hang.
	if _, err := newScanner(stuckReader{}).next(); err != io.ErrNoProgress {
		t.Errorf("stuck reader: %v", err)
	}
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

// TestParseRejectsMoreThanEncodingXML checks, through Parse, the input that
// encoding/xml accepts and this package rejects on purpose: each error names
// the place and what is wrong.
func TestParseRejectsMoreThanEncodingXML(t *testing.T) {
	tests := []struct {
		name, in string
		at       string // the error is at the first byte of its first occurrence
		want     string
	}{
		{"attributes run together", showplan(`<StmtSimple StatementId="1"StatementText="q"/>`), `StatementText`,
			`malformed XML: attributes of <StmtSimple> must be separated by white space before "StatementText"`},
		{"late XML declaration", showplan(`<?xml version="1.0"?>`), `<?xml version="1.0"?></`,
			"malformed XML: the XML declaration is allowed only at the start of the document"},
		{"non-ASCII element name", showplan(`<StmtSimplé/>`), `é`,
			`malformed XML: non-ASCII character in name "StmtSimplé": showplan names are ASCII`},
		{"surrogate reference", showplan(`<StmtSimple StatementText="&#xD83D;&#xDE00;"/>`), `&#xD83D;`,
			"malformed XML: character reference &#xD83D; is a UTF-16 surrogate, not a character"},
		{"control character in a comment", showplan("<!-- \x1b[31m -->"), "\x1b",
			"malformed XML: illegal character code U+001B in a comment"},
		{"DOCTYPE inside the root", showplan(`<!DOCTYPE x>`), `<!DOCTYPE`,
			"DOCTYPE declarations are not allowed in showplan XML"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := stdTokens([]byte(tc.in)); err != nil {
				t.Fatalf("encoding/xml rejects the input too: %v", err)
			}
			off := strings.Index(tc.in, tc.at)
			line := 1 + strings.Count(tc.in[:off], "\n")
			col := off - strings.LastIndexByte(tc.in[:off], '\n')
			want := fmt.Sprintf("line %d, column %d in <Statements>: %s", line, col, tc.want)
			_, err := Parse(strings.NewReader(tc.in), Options{})
			if err == nil || err.Error() != want {
				t.Errorf("got  %v\nwant %s", err, want)
			}
		})
	}
}

// TestParseConcurrent decodes documents on several goroutines at once, as
// the CLI does, with pooled parsers passing between them: every result must
// equal a decode on its own, including errors.
func TestParseConcurrent(t *testing.T) {
	docs := [][]byte{
		[]byte(sampleDoc("utf-8")),
		encodeUTF16(sampleDoc("utf-16"), false, true),
		[]byte(showplan(`<StmtSimple StatementText="` + strings.Repeat("x&amp;", 40000) + `"/>`)),
		[]byte(showplan(`<StmtSimple StatementText="bad &nbsp;"/>`)),
		[]byte(sampleDoc("utf-8")[:300]),
	}
	type result struct {
		doc *Document
		err string
	}
	parse := func(d []byte) result {
		doc, err := Parse(bytes.NewReader(d), Options{})
		if err != nil {
			return result{err: err.Error()}
		}
		return result{doc: doc}
	}
	var want []result
	for _, d := range docs {
		want = append(want, parse(d))
	}
	errs := make(chan error, 8*len(docs))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 4 * len(docs) {
				k := (i + g) % len(docs)
				if got := parse(docs[k]); !reflect.DeepEqual(got, want[k]) {
					errs <- fmt.Errorf("document %d differs: error %q, want %q", k, got.err, want[k].err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestScannerRelease checks that a released scanner keeps no grown buffer
// and no reference to the input.
func TestScannerRelease(t *testing.T) {
	s := newScanner(strings.NewReader(`<a b="` + strings.Repeat("x", 3*initialBufSize) + `"/>`))
	if k, err := s.next(); err != nil || k != tokStart {
		t.Fatalf("kind %d, err %v", k, err)
	}
	s.release()
	if s.buf != nil || s.r != nil || len(s.attrs) != 0 || s.attrs[:cap(s.attrs)][0].value != nil {
		t.Errorf("released scanner keeps a %d-byte buffer, reader %v, attributes %v", len(s.buf), s.r, s.attrs[:cap(s.attrs)])
	}
	s.reset(strings.NewReader(`<c/>`))
	if k, err := s.next(); err != nil || k != tokStart || s.name != "c" || len(s.buf) != initialBufSize {
		t.Errorf("after reset: kind %d, name %q, buffer %d, err %v", k, s.name, len(s.buf), err)
	}
}
