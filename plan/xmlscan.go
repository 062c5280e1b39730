package plan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// This file is a streaming XML tokenizer made for showplans: it reads the
// input in large chunks, checks well-formedness as it goes, decodes
// attribute values and hands out tokens that alias its buffers. Showplans
// keep all their data in attributes, so text, comments and processing
// instructions are checked and then skipped by the parser.
//
// It accepts no input that encoding/xml's RawToken rejects, and rejects on
// purpose some input that RawToken accepts; each such case is a strictness
// value below. Like RawToken, it leaves matching end tags to its caller,
// does not look for duplicate attributes, turns line breaks in attribute
// values into \n without normalizing other white space, and allows white
// space before the XML declaration.

// tokenKind is the kind of token scanner.next returns.
type tokenKind uint8

const (
	tokStart    tokenKind = iota + 1 // start tag; a self-closing tag is followed by tokEnd
	tokEnd                           // end tag
	tokText                          // character data or a CDATA section
	tokComment                       // <!-- ... -->
	tokProcInst                      // <?target ...?>, including the XML declaration
)

// strictness says why the scanner rejects input that encoding/xml accepts.
type strictness uint8

const (
	strictDirective    strictness = iota + 1 // <!DOCTYPE ...> and other markup declarations
	strictXMLDecl                            // XML declaration after other markup, or a PI target spelled xml in another case
	strictNonASCIIName                       // non-ASCII letter in a name (showplan names are ASCII)
	strictAttrSpace                          // no white space between two attributes
	strictSurrogateRef                       // character reference to a surrogate (encoding/xml turns it into U+FFFD)
	strictMarkupChars                        // invalid UTF-8 or a control character in a comment or processing instruction
	strictTokenSize                          // a comment, CDATA section, PI, tag or text past its size bound
)

// syntaxError is a well-formedness error at input offset off.
type syntaxError struct {
	off       int64
	msg       string
	truncated bool       // the input ended inside a construct
	strict    strictness // nonzero when encoding/xml would have accepted the input
}

func (e *syntaxError) Error() string { return e.msg }

// errNeedMore tells scanner.next that the token does not fit in the data
// buffered so far.
var errNeedMore = errors.New("need more input")

// attribute is one attribute of a start tag. All three slices alias the
// scanner's buffers and are valid until the next call to next.
type attribute struct {
	prefix []byte // the part before the colon, or empty
	local  []byte // the name after the colon
	value  value  // decoded value
}

const (
	initialBufSize = 64 << 10
	maxInterned    = 4096 // distinct element names kept by one scanner
)

// scanner tokenizes UTF-8 XML read from r.
type scanner struct {
	r     io.Reader
	rerr  error // first error from r, reported once the buffered data is used up
	atEOF bool  // r is exhausted: an incomplete token is truncated
	err   error // sticky error returned by next

	buf      []byte // buf[:end] holds input; buf[tokStart:end] is not yet discarded
	pos, end int
	tokStart int
	base     int64 // input offset of buf[0]

	// Lines are counted lazily with bytes.Count up to input offset lineOff.
	// The start of the current line is looked for only when a column is
	// needed: it follows the last newline in input[nlFrom:nlTo].
	lineOff      int64
	line         int   // line at lineOff
	lineStart    int64 // input offset of the first byte of that line, unless nlFrom < nlTo
	nlFrom, nlTo int64

	// The current token.
	qname      []byte // element name of tokStart and tokEnd
	name       string // interned qname of tokStart
	local      string // name after the colon of tokStart
	prefix     string // name before the colon of tokStart, or ""
	attrs      []attribute
	raw        []byte // content of tokText, tokComment and tokProcInst, undecoded
	target     []byte // target of tokProcInst
	blank      bool   // tokText holds only white space once decoded
	cdata      bool   // tokText is a CDATA section
	pendingEnd bool   // the last start tag closed itself
	declOK     bool   // an XML declaration may still come
	scratch    []byte // decoded attribute values that differ from the input
	names      *interner
}

func newScanner(r io.Reader) *scanner { return newScannerSize(r, initialBufSize) }

// reset prepares s to read a new input from r, keeping its buffers and
// interned names.
func (s *scanner) reset(r io.Reader) {
	s.names.trim()
	buf := s.buf
	if buf == nil {
		buf = make([]byte, initialBufSize)
	}
	*s = scanner{r: r, buf: buf, line: 1, declOK: true, names: s.names, attrs: s.attrs[:0], scratch: s.scratch[:0]}
}

// release drops the input, and the buffers if they grew, so that a pooled
// scanner holds no more than its initial buffer.
func (s *scanner) release() {
	clear(s.attrs[:cap(s.attrs)])
	if len(s.buf) != initialBufSize {
		s.buf = nil
	}
	if cap(s.scratch) > initialBufSize {
		s.scratch = nil
	}
	*s = scanner{buf: s.buf, names: s.names, attrs: s.attrs[:0], scratch: s.scratch[:0]}
}

// newScannerSize starts with a buffer of size bytes (at least 2); it grows
// as tokens need.
func newScannerSize(r io.Reader, size int) *scanner {
	return &scanner{
		r:      r,
		buf:    make([]byte, max(size, 2)),
		line:   1,
		declOK: true,
		names:  newInterner(maxInterned),
	}
}

// next reads the next token. It returns io.EOF at the end of the input
// between tokens, a *syntaxError for malformed input, and read errors as
// they came from r. Errors are sticky.
func (s *scanner) next() (tokenKind, error) {
	if s.pendingEnd { // the "/>" just read
		s.pendingEnd = false
		s.tokStart = s.pos - 2
		return tokEnd, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	for {
		s.tokStart = s.pos
		k, err := s.scan()
		if err == nil {
			if k != tokText || !s.blank {
				s.declOK = false
			}
			return k, nil
		}
		if err == errNeedMore {
			err = s.fill()
			if err == nil {
				s.pos = s.tokStart
				continue
			}
		}
		s.err = err
		return 0, err
	}
}

// fill discards the input before the current token, makes room and reads
// more. It reads at least as many bytes as the token already has, so a
// token that keeps growing is rescanned a logarithmic number of times.
func (s *scanner) fill() error {
	if s.rerr != nil {
		if s.rerr == io.EOF && !s.atEOF {
			s.atEOF = true
			return nil // rescan: the token is now complete or truncated
		}
		return s.rerr
	}
	if s.tokStart > 0 {
		s.countLines(s.base + int64(s.tokStart))
		s.findLineStart()
		s.end = copy(s.buf, s.buf[s.tokStart:s.end])
		s.base += int64(s.tokStart)
		s.pos -= s.tokStart
		s.tokStart = 0
	}
	if len(s.buf)-s.end < len(s.buf)/2 {
		if err := s.tokenTooLong(); err != nil {
			return err
		}
		grown := make([]byte, 2*len(s.buf))
		copy(grown, s.buf[:s.end])
		s.buf = grown
	}
	if s.read(max(s.end, 1)) > 0 {
		return nil
	}
	return s.fill() // s.rerr is set
}

// Bounds on one token, checked before the buffer grows: an unterminated
// construct would otherwise be buffered up to the file size limit.
// Showplans carry no comments, CDATA sections or processing instructions
// beyond a few bytes, and their largest start tags are tens of KB.
const (
	maxMarkupToken = 1 << 20  // <!-- -->, <![CDATA[ ]]>, <? ?>
	maxToken       = 64 << 20 // a start tag with its attributes, text
)

// tokenTooLong reports a token at the start of the buffer that has grown
// past its bound.
func (s *scanner) tokenTooLong() error {
	tok := s.buf[s.tokStart:s.end]
	what, limit := "", maxToken
	switch {
	case bytes.HasPrefix(tok, []byte("<!--")):
		what, limit = "comment", maxMarkupToken
	case bytes.HasPrefix(tok, []byte("<![CDATA[")):
		what, limit = "CDATA section", maxMarkupToken
	case bytes.HasPrefix(tok, []byte("<?")):
		what, limit = "processing instruction", maxMarkupToken
	case bytes.HasPrefix(tok, []byte("<")):
		what = "tag"
	default:
		what = "run of text"
	}
	if len(tok) < limit {
		return nil
	}
	return s.stricter(strictTokenSize, s.tokStart,
		fmt.Sprintf("malformed XML: a %s longer than %d MiB (is it unterminated?); showplans have none this long", what, limit>>20))
}

// read reads at least need bytes into the free end of the buffer unless r
// fails or the buffer fills up, and returns how many it read.
func (s *scanner) read(need int) int {
	got := 0
	for empty := 0; got < need && s.end < len(s.buf); {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		got += n
		if err != nil {
			s.rerr = err
			break
		}
		if n == 0 {
			if empty++; empty == 100 {
				s.rerr = io.ErrNoProgress
				break
			}
		}
	}
	return got
}

// short reports that the data ends inside the current token: more is
// needed, or the input is truncated.
func (s *scanner) short() error {
	if s.atEOF {
		return &syntaxError{off: s.base + int64(s.end), msg: "unexpected EOF", truncated: true}
	}
	return errNeedMore
}

// syntax returns a *syntaxError at buffer index i.
func (s *scanner) syntax(i int, format string, args ...any) error {
	return &syntaxError{off: s.base + int64(i), msg: "malformed XML: " + fmt.Sprintf(format, args...)}
}

// stricter returns a *syntaxError for input that encoding/xml accepts.
func (s *scanner) stricter(why strictness, i int, msg string) error {
	return &syntaxError{off: s.base + int64(i), msg: msg, strict: why}
}

// offset is the input offset just after the current token.
func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

// inputEnd is the input offset just after the data read so far.
func (s *scanner) inputEnd() int64 { return s.base + int64(s.end) }

// tokenOffset is the input offset of the current token's first byte.
func (s *scanner) tokenOffset() int64 { return s.base + int64(s.tokStart) }

// position returns the 1-based line and column (in bytes) of input offset
// off. Lines are counted forward from the last offset asked for; an offset
// before it must still be buffered, and its column is 0 (unknown) when its
// line starts before the buffer.
func (s *scanner) position(off int64) (line, col int) {
	if off >= s.lineOff {
		s.countLines(off)
		s.findLineStart()
		return s.line, int(off-s.lineStart) + 1
	}
	// Behind the counted position: count back within the buffer.
	i, j := int(max(off-s.base, 0)), int(s.lineOff-s.base)
	back := bytes.Count(s.buf[i:j], []byte{'\n'})
	if back == 0 {
		s.findLineStart()
		return s.line, int(off-s.lineStart) + 1
	}
	if nl := bytes.LastIndexByte(s.buf[:i], '\n'); nl >= 0 {
		return s.line - back, int(off - (s.base + int64(nl)))
	}
	return s.line - back, 0
}

// lineAt returns the line of input offset off, which must not precede an
// offset asked for before. It is position without the column, cheaper.
func (s *scanner) lineAt(off int64) int {
	if off < s.lineOff {
		line, _ := s.position(off)
		return line
	}
	s.countLines(off)
	return s.line
}

// countLines advances the line count to input offset off, which must be
// within the buffer.
func (s *scanner) countLines(off int64) {
	if off <= s.lineOff {
		return
	}
	if n := bytes.Count(s.buf[s.lineOff-s.base:off-s.base], []byte{'\n'}); n > 0 {
		s.line += n
		s.nlFrom, s.nlTo = s.lineOff, off
	}
	s.lineOff = off
}

// findLineStart sets lineStart from the last newline counted.
func (s *scanner) findLineStart() {
	if s.nlFrom < s.nlTo {
		seg := s.buf[s.nlFrom-s.base : s.nlTo-s.base]
		s.lineStart = s.nlFrom + int64(bytes.LastIndexByte(seg, '\n')) + 1
		s.nlFrom, s.nlTo = 0, 0
	}
}

// Byte classes.
var (
	nameByte  [256]uint8   // nonzero for bytes of an ASCII name; colonByte for ':'
	nameFirst [256]bool    // may start an ASCII name
	spaceByte [256]bool    // XML white space
	attrPlain [2][256]bool // needs no attention inside "..." ([0]) or '...' ([1])
	textPlain [256]bool    // needs no attention in character data
)

const colonByte = 2

func init() {
	for c := 0; c < 256; c++ {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		nameFirst[c] = letter || c == '_' || c == ':'
		if nameFirst[c] || '0' <= c && c <= '9' || c == '.' || c == '-' {
			nameByte[c] = 1
		}
		spaceByte[c] = c == ' ' || c == '\n' || c == '\t' || c == '\r'
		printable := 0x20 <= c && c < 0x80 && c != '<' && c != '&'
		attrPlain[0][c] = printable && c != '"'
		attrPlain[1][c] = printable && c != '\''
		textPlain[c] = printable && c != ' ' && c != '>'
	}
	nameByte[':'] = colonByte
}

func isSpace(c byte) bool { return spaceByte[c] }

// skipSpaces returns the index of the first byte from b[i] on that is not
// white space. Indentation is about half of the corpus's bytes, so runs of
// spaces are skipped eight bytes at a time.
func skipSpaces(b []byte, i int) int {
	const spaces = 0x2020202020202020
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:]) ^ spaces
		if x == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(x) / 8
		if !spaceByte[b[i]] {
			return i
		}
		i++
	}
	for i < len(b) && spaceByte[b[i]] {
		i++
	}
	return i
}

// isXMLChar reports whether r is in the Char production of XML 1.0.
func isXMLChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// scan reads one token starting at s.pos.
func (s *scanner) scan() (tokenKind, error) {
	b := s.buf[:s.end]
	i := s.pos
	if i >= len(b) {
		if s.atEOF {
			return 0, io.EOF
		}
		return 0, errNeedMore
	}
	if b[i] != '<' {
		return s.scanText(b, i)
	}
	if i+1 >= len(b) {
		return 0, s.short()
	}
	switch b[i+1] {
	case '/':
		return s.scanEndTag(b, i+2)
	case '?':
		return s.scanProcInst(b, i+2)
	case '!':
		return s.scanBang(b, i+2)
	}
	return s.scanStartTag(b, i+1)
}

// scanName reads the name at b[i]. It returns the index after it and the
// index of its colon when the colon splits it into prefix and local name
// (exactly one colon, not first or last), else -1. end == i means there is
// no name at b[i].
func (s *scanner) scanName(b []byte, i int) (end, colon int, err error) {
	j := i
	var seen uint8
	for j < len(b) && nameByte[b[j]] != 0 {
		seen |= nameByte[b[j]]
		j++
	}
	if j >= len(b) {
		return 0, 0, s.short()
	}
	if b[j] >= utf8.RuneSelf {
		if !utf8.FullRune(b[j:]) {
			return 0, 0, s.short()
		}
		_, n := utf8.DecodeRune(b[j:])
		return 0, 0, s.stricter(strictNonASCIIName, j,
			fmt.Sprintf("malformed XML: non-ASCII character in name %q: showplan names are ASCII", b[i:j+n]))
	}
	if j == i {
		return i, -1, nil
	}
	if !nameFirst[b[i]] {
		return 0, 0, s.syntax(i, "invalid XML name %q: a name must start with a letter, '_' or ':'", b[i:j])
	}
	colon = -1
	if seen&colonByte != 0 {
		colon = i + bytes.IndexByte(b[i:j], ':')
		if bytes.IndexByte(b[colon+1:j], ':') >= 0 {
			return 0, 0, s.syntax(i, "invalid XML name %q: more than one colon", b[i:j])
		}
		if colon == i || colon == j-1 {
			colon = -1
		}
	}
	return j, colon, nil
}

func (s *scanner) scanStartTag(b []byte, i int) (tokenKind, error) {
	nameEnd, colon, err := s.scanName(b, i)
	if err != nil {
		return 0, err
	}
	if nameEnd == i {
		return 0, s.syntax(i, "expected element name after <, found %s", describe(b[i]))
	}
	s.setName(b[i:nameEnd], colon-i)
	s.attrs = s.attrs[:0]
	s.scratch = s.scratch[:0]
	i = nameEnd
	for {
		spaceStart := i
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0, s.short()
		}
		switch b[i] {
		case '>':
			s.pos = i + 1
			return tokStart, nil
		case '/':
			if i+1 >= len(b) {
				return 0, s.short()
			}
			if b[i+1] != '>' {
				return 0, s.syntax(i+1, "expected > after / to close <%s>, found %s", s.name, describe(b[i+1]))
			}
			s.pos = i + 2
			s.pendingEnd = true
			return tokStart, nil
		}
		nameStart := i
		nameEnd, colon, err := s.scanName(b, i)
		if err != nil {
			return 0, err
		}
		if nameEnd == i {
			return 0, s.syntax(i, "expected attribute name, > or /> in <%s>, found %s", s.name, describe(b[i]))
		}
		if i == spaceStart {
			return 0, s.stricter(strictAttrSpace, i,
				fmt.Sprintf("malformed XML: attributes of <%s> must be separated by white space before %q", s.name, b[nameStart:nameEnd]))
		}
		i = nameEnd
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0, s.short()
		}
		if b[i] != '=' {
			return 0, s.syntax(i, "attribute name without = in <%s>: expected = after %q, found %s", s.name, b[nameStart:nameEnd], describe(b[i]))
		}
		i++
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0, s.short()
		}
		q := b[i]
		if q != '"' && q != '\'' {
			return 0, s.syntax(i, "unquoted or missing attribute value for %q in <%s>: expected \" or ', found %s", b[nameStart:nameEnd], s.name, describe(q))
		}
		value, end, err := s.scanAttrValue(b, i+1, q)
		if err != nil {
			return 0, err
		}
		a := attribute{local: b[nameStart:nameEnd], value: value}
		if colon >= 0 {
			a.prefix, a.local = b[nameStart:colon], b[colon+1:nameEnd]
		}
		s.attrs = append(s.attrs, a)
		i = end
	}
}

// setName sets the name of a start tag, interned; colon is the index of
// the splitting colon within qname, or negative.
func (s *scanner) setName(qname []byte, colon int) {
	s.qname = qname
	name := s.names.get(qname)
	s.name, s.local, s.prefix = name, name, ""
	if colon >= 0 {
		s.prefix, s.local = name[:colon], name[colon+1:]
	}
}

// scanAttrValue reads a quoted value starting at b[i], after the opening
// quote q. It returns the decoded value and the index after the closing
// quote. Values without references or carriage returns alias b.
func (s *scanner) scanAttrValue(b []byte, i int, q byte) ([]byte, int, error) {
	plain := &attrPlain[0]
	if q == '\'' {
		plain = &attrPlain[1]
	}
	start := i
	for {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			return nil, 0, s.short()
		}
		switch c := b[i]; {
		case c == q:
			return b[start:i], i + 1, nil
		case c == '\t' || c == '\n':
			i++
		case c >= utf8.RuneSelf:
			n, err := s.checkRune(b, i)
			if err != nil {
				return nil, 0, err
			}
			i += n
		case c == '&' || c == '\r':
			return s.decodeAttrValue(b, start, i, q)
		default:
			return nil, 0, s.badAttrChar(b, i)
		}
	}
}

// decodeAttrValue continues scanAttrValue at b[i], the first reference or
// carriage return, writing the decoded value to s.scratch.
func (s *scanner) decodeAttrValue(b []byte, start, i int, q byte) ([]byte, int, error) {
	plain := &attrPlain[0]
	if q == '\'' {
		plain = &attrPlain[1]
	}
	d := len(s.scratch)
	s.scratch = append(s.scratch, b[start:i]...)
	for {
		j := i
		for j < len(b) && plain[b[j]] {
			j++
		}
		s.scratch = append(s.scratch, b[i:j]...)
		i = j
		if i >= len(b) {
			return nil, 0, s.short()
		}
		switch c := b[i]; {
		case c == q:
			return s.scratch[d:], i + 1, nil
		case c == '&':
			r, n, err := s.charRef(b, i)
			if err != nil {
				return nil, 0, err
			}
			s.scratch = utf8.AppendRune(s.scratch, r)
			i += n
		case c == '\r': // a line break \r or \r\n becomes \n
			s.scratch = append(s.scratch, '\n')
			i++
			if i < len(b) && b[i] == '\n' {
				i++
			}
		case c == '\t' || c == '\n':
			s.scratch = append(s.scratch, c)
			i++
		case c >= utf8.RuneSelf:
			n, err := s.checkRune(b, i)
			if err != nil {
				return nil, 0, err
			}
			s.scratch = append(s.scratch, b[i:i+n]...)
			i += n
		default:
			return nil, 0, s.badAttrChar(b, i)
		}
	}
}

func (s *scanner) badAttrChar(b []byte, i int) error {
	if b[i] == '<' {
		return s.syntax(i, "unescaped < inside the attribute value in <%s>: write it as &lt;", s.name)
	}
	return s.syntax(i, "illegal character code %U in an attribute value of <%s>", rune(b[i]), s.name)
}

// checkRune checks the UTF-8 sequence at b[i] (b[i] >= 0x80) and returns
// its length.
func (s *scanner) checkRune(b []byte, i int) (int, error) {
	r, n := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && n == 1 {
		if !utf8.FullRune(b[i:]) {
			return 0, s.short()
		}
		return 0, s.syntax(i, "invalid UTF-8")
	}
	if !isXMLChar(r) {
		return 0, s.syntax(i, "illegal character code %U", r)
	}
	return n, nil
}

// predefined are the entities XML defines without a DTD.
var predefined = map[string]rune{"lt": '<', "gt": '>', "amp": '&', "apos": '\'', "quot": '"'}

// charRef decodes the entity or character reference at b[i] == '&' and
// returns the character and the reference's length.
func (s *scanner) charRef(b []byte, i int) (rune, int, error) {
	j := i + 1
	if j >= len(b) {
		return 0, 0, s.short()
	}
	if b[j] != '#' {
		k := j
		for k < len(b) && nameByte[b[k]] != 0 {
			k++
		}
		if k >= len(b) {
			return 0, 0, s.short()
		}
		if b[k] != ';' || k == j {
			return 0, 0, s.syntax(i, "invalid entity reference %q: expected &name; or &#number;", sampleBytes(b[i:min(k+1, len(b))]))
		}
		r, ok := predefined[string(b[j:k])]
		if !ok {
			return 0, 0, s.syntax(i, "undefined entity %s: only &lt; &gt; &amp; &apos; &quot; and character references are allowed", b[i:k+1])
		}
		return r, k + 1 - i, nil
	}
	j++
	base := rune(10)
	if j < len(b) && b[j] == 'x' {
		base = 16
		j++
	}
	digits := j
	var r rune
	for ; j < len(b); j++ {
		c := b[j]
		var d rune
		switch {
		case '0' <= c && c <= '9':
			d = rune(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = rune(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			d = rune(c-'A') + 10
		default:
			d = -1
		}
		if d < 0 {
			break
		}
		r = min(r*base+d, utf8.MaxRune+1) // saturate: any larger value is out of range too
	}
	if j >= len(b) {
		return 0, 0, s.short()
	}
	ref := b[i:j]
	if b[j] != ';' || j == digits {
		return 0, 0, s.syntax(i, "invalid character reference %q: expected &#decimal; or &#xhex;", sampleBytes(b[i:min(j+1, len(b))]))
	}
	switch {
	case r > utf8.MaxRune:
		return 0, 0, s.syntax(i, "character reference %s; is beyond U+10FFFF", ref)
	case 0xD800 <= r && r <= 0xDFFF:
		return 0, 0, s.stricter(strictSurrogateRef, i,
			fmt.Sprintf("malformed XML: character reference %s; is a UTF-16 surrogate, not a character", ref))
	case !isXMLChar(r):
		return 0, 0, s.syntax(i, "character reference %s; is illegal character code %U", ref, r)
	}
	return r, j + 1 - i, nil
}

// scanText reads character data up to the next '<' or the end of the
// input, checking it without decoding it.
func (s *scanner) scanText(b []byte, i int) (tokenKind, error) {
	start := i
	blank := true
	for {
		i = skipSpaces(b, i)
		if i < len(b) && textPlain[b[i]] {
			blank = false
			for i < len(b) && textPlain[b[i]] {
				i++
			}
			continue
		}
		if i >= len(b) {
			if !s.atEOF {
				return 0, errNeedMore
			}
			break
		}
		c := b[i]
		if c == '<' {
			break
		}
		switch {
		case c == '&':
			r, n, err := s.charRef(b, i)
			if err != nil {
				return 0, err
			}
			if r != ' ' && r != '\t' && r != '\n' && r != '\r' {
				blank = false
			}
			i += n
		case c == '>':
			if i-2 >= start && b[i-1] == ']' && b[i-2] == ']' {
				return 0, s.syntax(i-2, "unescaped ]]> outside a CDATA section: write > as &gt;")
			}
			blank = false
			i++
		case c >= utf8.RuneSelf:
			n, err := s.checkRune(b, i)
			if err != nil {
				return 0, err
			}
			blank = false
			i += n
		default:
			return 0, s.syntax(i, "illegal character code %U", rune(c))
		}
	}
	s.raw, s.blank, s.cdata = b[start:i], blank, false
	s.pos = i
	return tokText, nil
}

// scanBang reads what follows "<!": a comment or a CDATA section. Markup
// declarations (DOCTYPE, ENTITY, ...) are rejected: showplans have none,
// and entity definitions are how XML bombs and external entities work.
func (s *scanner) scanBang(b []byte, i int) (tokenKind, error) {
	if i >= len(b) {
		return 0, s.short()
	}
	switch b[i] {
	case '-':
		if i+1 >= len(b) {
			return 0, s.short()
		}
		if b[i+1] != '-' {
			return 0, s.syntax(i-2, "invalid sequence <!- not part of <!--")
		}
		return s.scanComment(b, i+2)
	case '[':
		const open = "[CDATA["
		rest := b[i:min(len(b), i+len(open))]
		if !bytes.HasPrefix([]byte(open), rest) {
			return 0, s.syntax(i-2, "invalid <![ sequence: expected <![CDATA[")
		}
		if len(rest) < len(open) {
			return 0, s.short()
		}
		return s.scanCDATA(b, i+len(open))
	}
	// Refused at its start: reading to its end first would buffer an
	// unterminated declaration whole.
	const doctype = "DOCTYPE"
	rest := b[i:min(len(b), i+len(doctype))]
	if bytes.HasPrefix([]byte(doctype), rest) && len(rest) < len(doctype) && !s.atEOF {
		return 0, s.short()
	}
	if bytes.Equal(rest, []byte(doctype)) {
		return 0, s.stricter(strictDirective, i-2, "DOCTYPE declarations are not allowed in showplan XML")
	}
	name := i
	for name < len(b) && name-i < 16 && (b[name] >= 'A' && b[name] <= 'Z') {
		name++
	}
	if name == len(b) && !s.atEOF {
		return 0, s.short()
	}
	return 0, s.stricter(strictDirective, i-2,
		fmt.Sprintf("unexpected markup declaration <!%s: not allowed in showplan XML", b[i:name]))
}

func (s *scanner) scanComment(b []byte, i int) (tokenKind, error) {
	k := bytes.Index(b[i:], []byte("--"))
	if k < 0 || i+k+2 >= len(b) {
		return 0, s.short()
	}
	if b[i+k+2] != '>' {
		return 0, s.syntax(i+k, `invalid sequence "--" not allowed in comments`)
	}
	if err := s.checkMarkupChars(b, i, i+k, "comment"); err != nil {
		return 0, err
	}
	s.raw = b[i : i+k]
	s.pos = i + k + 3
	return tokComment, nil
}

func (s *scanner) scanCDATA(b []byte, i int) (tokenKind, error) {
	k := bytes.Index(b[i:], []byte("]]>"))
	if k < 0 {
		return 0, s.short()
	}
	for j := i; j < i+k; {
		c := b[j]
		switch {
		case c >= 0x20 && c < utf8.RuneSelf || c == '\t' || c == '\n' || c == '\r':
			j++
		case c >= utf8.RuneSelf:
			n, err := s.checkRune(b, j)
			if err != nil {
				return 0, err
			}
			j += n
		default:
			return 0, s.syntax(j, "illegal character code %U in a CDATA section", rune(c))
		}
	}
	s.raw, s.blank, s.cdata = b[i:i+k], isBlank(b[i:i+k]), true
	s.pos = i + k + 3
	return tokText, nil
}

// scanProcInst reads a processing instruction after "<?". The XML
// declaration is one, allowed only before any other markup, and its
// version must be 1.0; its encoding is ignored (openInput has decided it).
func (s *scanner) scanProcInst(b []byte, i int) (tokenKind, error) {
	start := i
	nameEnd, _, err := s.scanName(b, i)
	if err != nil {
		return 0, err
	}
	if nameEnd == i {
		return 0, s.syntax(i, "expected target name after <?, found %s", describe(b[i]))
	}
	target := b[start:nameEnd]
	i = nameEnd
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	k := bytes.Index(b[i:], []byte("?>"))
	if k < 0 {
		return 0, s.short()
	}
	content := b[i : i+k]
	if err := s.checkMarkupChars(b, i, i+k, "processing instruction"); err != nil {
		return 0, err
	}
	if len(target) == 3 && bytes.EqualFold(target, []byte("xml")) {
		if string(target) != "xml" {
			return 0, s.stricter(strictXMLDecl, start-2,
				fmt.Sprintf("malformed XML: processing instruction target %q is reserved", target))
		}
		if !s.declOK {
			return 0, s.stricter(strictXMLDecl, start-2, "malformed XML: the XML declaration is allowed only at the start of the document")
		}
		if v := declParam("version", content); v != "" && v != "1.0" {
			if len(v) > 8 || strings.Trim(v, "0123456789.") != "" { // not a version number: do not echo it
				v = "?"
			}
			return 0, s.syntax(start-2, "unsupported version %q; only version 1.0 is supported", v)
		}
	}
	s.target, s.raw = target, content
	s.pos = i + k + 2
	return tokProcInst, nil
}

// checkMarkupChars checks b[i:end], the content of a comment or processing
// instruction, for invalid UTF-8 and characters outside XML's range.
func (s *scanner) checkMarkupChars(b []byte, i, end int, what string) error {
	for i < end {
		c := b[i]
		switch {
		case c >= 0x20 && c < utf8.RuneSelf || c == '\t' || c == '\n' || c == '\r':
			i++
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(b[i:end])
			if r == utf8.RuneError && n == 1 {
				return s.stricter(strictMarkupChars, i, "malformed XML: invalid UTF-8 in a "+what)
			}
			if !isXMLChar(r) {
				return s.stricter(strictMarkupChars, i, fmt.Sprintf("malformed XML: illegal character code %U in a %s", r, what))
			}
			i += n
		default:
			return s.stricter(strictMarkupChars, i, fmt.Sprintf("malformed XML: illegal character code %U in a %s", rune(c), what))
		}
	}
	return nil
}

// declParam returns the value of param="..." or param='...' in the content
// of an XML declaration, or "". It finds what encoding/xml finds.
func declParam(param string, s []byte) string {
	key := []byte(param + "=")
	for i := 0; i < len(s); {
		k := bytes.Index(s[i:], key)
		if k < 0 || i+k+len(key) >= len(s) {
			return ""
		}
		i += k + len(key)
		if q := s[i]; q == '"' || q == '\'' {
			end := bytes.IndexByte(s[i+1:], q)
			if end < 0 {
				return ""
			}
			return string(s[i+1 : i+1+end])
		}
		i++
	}
	return ""
}

func (s *scanner) scanEndTag(b []byte, i int) (tokenKind, error) {
	nameEnd, _, err := s.scanName(b, i)
	if err != nil {
		return 0, err
	}
	if nameEnd == i {
		return 0, s.syntax(i, "expected element name after </, found %s", describe(b[i]))
	}
	s.qname = b[i:nameEnd]
	j := nameEnd
	for j < len(b) && isSpace(b[j]) {
		j++
	}
	if j >= len(b) {
		return 0, s.short()
	}
	if b[j] != '>' {
		return 0, s.syntax(j, "invalid characters between </%s and >: found %s", s.qname, describe(b[j]))
	}
	s.pos = j + 1
	return tokEnd, nil
}

// text returns the current tokText decoded: references replaced and line
// breaks normalized to \n, as encoding/xml returns CharData.
func (s *scanner) text() []byte {
	var out []byte
	b := s.raw
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '&' && !s.cdata:
			r, n, err := s.charRef(b, i)
			if err != nil { // cannot happen: scanText has checked it
				return append(out, b[i:]...)
			}
			out = utf8.AppendRune(out, r)
			i += n - 1
		case c == '\r':
			out = append(out, '\n')
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// describe names byte c for a message.
func describe(c byte) string {
	switch {
	case c == '\'':
		return `"'"`
	case c >= 0x20 && c < 0x7F:
		return "'" + string(rune(c)) + "'"
	}
	return fmt.Sprintf("byte 0x%02X", c)
}

// sampleBytes is b for a message, cut to 40 bytes.
func sampleBytes(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}
