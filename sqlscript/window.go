package sqlscript

import (
	"strings"
	"unicode/utf8"

	"github.com/planlint/planlint/internal/tsql"
)

// codeWindow gives indexed access to the code tokens of a text while
// holding only those not yet released: a parser that moves forward reads a
// script of any size in memory proportional to its lookahead, not to the
// number of tokens.
type codeWindow struct {
	sc    tsql.Scanner // positioned after the last buffered token
	buf   []token      // tokens base ... base+len(buf)-1
	base  int
	done  bool // sc is exhausted
	owned bool // buf may be compacted (it is not a caller's slice)
	// onToken, when set, sees every token as it is read, once.
	onToken func(token)
}

// newWindow reads the code tokens of text[start:end], offsets in text.
func newWindow(text string, start, end int) *codeWindow {
	return &codeWindow{sc: *tsql.NewScannerAt(text, start, end), owned: true}
}

// windowOf serves the tokens of a slice.
func windowOf(toks []token) *codeWindow { return &codeWindow{buf: toks, done: true} }

// has reports whether token i exists, reading up to it.
func (w *codeWindow) has(i int) bool {
	for i >= w.base+len(w.buf) {
		if w.done {
			return false
		}
		t, ok := w.sc.NextCode()
		if !ok {
			w.done = true
			return false
		}
		if w.onToken != nil {
			w.onToken(t)
		}
		w.buf = append(w.buf, t)
	}
	return true
}

// at returns token i, or a space token past the end. i must not have been
// released.
func (w *codeWindow) at(i int) token {
	if i < w.base {
		panic("sqlscript: token read after its release")
	}
	if !w.has(i) {
		return token{Kind: tokSpace}
	}
	return w.buf[i-w.base]
}

// releaseMin is the fewest tokens release drops at once, with at least
// half the buffer (the copy stays linear overall); the package's tests set
// it to 1, so that a token read after its release panics in every test.
var releaseMin = 1024

// release says that tokens before i will not be read again.
func (w *codeWindow) release(i int) {
	n := i - w.base
	if !w.owned || n < releaseMin || n < len(w.buf)/2 {
		return
	}
	if n > len(w.buf) {
		n = len(w.buf)
	}
	w.buf = w.buf[:copy(w.buf, w.buf[n:])]
	w.base += n
}

// skip moves past the tokens before i, reading without buffering those
// not read yet: the next token read is i.
func (w *codeWindow) skip(i int) {
	if i <= w.base+len(w.buf) {
		w.release(i)
		return
	}
	w.base += len(w.buf)
	w.buf = w.buf[:0]
	for ; w.base < i && !w.done; w.base++ {
		t, ok := w.sc.NextCode()
		if !ok {
			w.done = true
			break
		}
		if w.onToken != nil {
			w.onToken(t)
		}
	}
}

// count reads to the end and returns the number of tokens.
func (w *codeWindow) count() int {
	for w.has(w.base + len(w.buf)) {
		w.release(w.base + len(w.buf) - 1)
	}
	return w.base + len(w.buf)
}

// scan calls f with tokens i, i+1, ... until f returns false or the
// tokens end, without buffering those not read yet.
func (w *codeWindow) scan(i int, f func(j int, t token) bool) {
	for ; i < w.base+len(w.buf); i++ {
		if !f(i, w.buf[i-w.base]) {
			return
		}
	}
	if w.done {
		return
	}
	sc := w.sc
	for ; ; i++ {
		t, ok := sc.NextCode()
		if !ok || !f(i, t) {
			return
		}
	}
}

// keywords interns the upper-case words the splitter and the fingerprint
// compare, so that keyword does not allocate.
var keywords = func() map[string]string {
	m := map[string]string{}
	for _, set := range []map[string]bool{objectTypes, statementStarters, continuingPrev, bodyObjects, unaryAfter} {
		for w := range set {
			m[w] = w
		}
	}
	for _, w := range strings.Fields("CASE END BEGIN ELSE TRY CATCH ATOMIC TRAN TRANSACTION DISTRIBUTED DIALOG CONVERSATION " +
		"STATISTICS EXISTS ROWS ROW ON VALUES XMLNAMESPACES") {
		m[w] = w
	}
	return m
}()

const maxKeyword = 16

// keyword returns a word token in upper case when it is one of keywords,
// and "" for any other token; unlike Upper it does not allocate.
func keyword(t token) string {
	if t.Kind != tokWord || len(t.Text) > maxKeyword {
		if t.Kind == tokWord && !isASCII(t.Text) {
			return keywords[t.Upper()]
		}
		return ""
	}
	var buf [maxKeyword]byte
	for i := 0; i < len(t.Text); i++ {
		c := t.Text[i]
		if c >= utf8.RuneSelf {
			return keywords[t.Upper()] // Unicode case mapping, as Upper
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	return keywords[string(buf[:len(t.Text)])]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
