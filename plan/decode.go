package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Default limits, used when the corresponding Options field is zero or
// negative.
const (
	DefaultMaxBytes int64 = 1 << 30 // 1 GiB of decoded (UTF-8) text
	DefaultMaxDepth       = 4096    // element nesting levels
	// MaxDepthCeiling is the deepest nesting any Options may allow: the
	// parser, the rules and the renderers walk the operator tree
	// recursively, and a deeper tree would exhaust the goroutine stack.
	MaxDepthCeiling = 1 << 16
)

// Options bound the resources a decode may use. Zero values mean the
// defaults.
type Options struct {
	// MaxBytes is the largest accepted document, counted in bytes of the
	// decoded UTF-8 text (a UTF-16 file may be up to twice as large on disk).
	MaxBytes int64
	// MaxDepth is the deepest accepted element nesting; the root is level 1.
	MaxDepth int
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return o.MaxBytes
}

func (o Options) maxDepth() int {
	if o.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return min(o.MaxDepth, MaxDepthCeiling)
}

// Error is a problem with the input document. Line and Column locate it in
// the decoded text (columns count UTF-8 bytes; 0 means unknown); Element is
// the innermost open element, empty before the root.
type Error struct {
	Line, Column int
	Element      string
	Msg          string
	Err          error // underlying cause, if any
}

func (e *Error) Error() string { return position(e.Line, e.Column, e.Element) + e.Msg }

func (e *Error) Unwrap() error { return e.Err }

// Limit names a resource limit of Options.
type Limit int

// The limits a LimitError can report.
const (
	LimitFileSize Limit = iota + 1 // Options.MaxBytes
	LimitDepth                     // Options.MaxDepth
)

// Flag is the command-line flag that raises the limit.
func (l Limit) Flag() string {
	if l == LimitDepth {
		return "--max-depth"
	}
	return "--max-file-size"
}

// LimitError reports that a document exceeded one of the Options limits.
type LimitError struct {
	Limit        Limit
	Max          int64 // the limit in force
	Line, Column int
	Element      string
}

func (e *LimitError) Error() string {
	var what string
	if e.Limit == LimitDepth {
		what = fmt.Sprintf("maximum element depth %d exceeded", e.Max)
		if e.Max >= MaxDepthCeiling {
			return position(e.Line, e.Column, e.Element) + what + "; no plan may nest deeper"
		}
	} else {
		what = fmt.Sprintf("maximum file size %d bytes exceeded", e.Max)
	}
	return position(e.Line, e.Column, e.Element) + what + "; raise the limit with " + e.Limit.Flag()
}

// position renders the "line L, column C in <E>: " prefix of an error.
func position(line, col int, elem string) string {
	var b strings.Builder
	if line > 0 {
		fmt.Fprintf(&b, "line %d, column %d", line, col)
	}
	if elem != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("in <" + elem + ">")
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	return b.String()
}

// inputError is an encoding problem found below the XML decoder; the parser
// adds the position.
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

// errSizeLimit is returned by sizeLimiter once the decoded stream grows past
// the limit; the parser turns it into a LimitError.
var errSizeLimit = errors.New("size limit exceeded")

// openInput detects the encoding of r from its first bytes and returns a
// reader of UTF-8 text, with any byte order mark removed and at most
// maxBytes bytes long (reading further fails with errSizeLimit).
//
// The encoding declaration inside the document is not consulted: SSMS and
// other tools often save UTF-8 files that declare utf-16.
func openInput(r io.Reader, maxBytes int64) (io.Reader, error) {
	var head [4]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, &Error{Msg: "cannot read input: " + err.Error(), Err: err}
	}
	if n == 0 {
		return nil, &Error{Msg: "empty input: there is no XML content"}
	}
	h := head[:n]
	var src io.Reader
	switch {
	case bytes.HasPrefix(h, []byte{0xFF, 0xFE, 0, 0}), bytes.HasPrefix(h, []byte{0, 0, 0xFE, 0xFF}):
		return nil, &Error{Msg: "UTF-32 input is not supported: save the plan as UTF-8 or UTF-16"}
	case bytes.HasPrefix(h, []byte{0xEF, 0xBB, 0xBF}):
		src = io.MultiReader(bytes.NewReader(h[3:]), r)
	case bytes.HasPrefix(h, []byte{0xFF, 0xFE}):
		src = newUTF16Reader(io.MultiReader(bytes.NewReader(h[2:]), r), false, 2)
	case bytes.HasPrefix(h, []byte{0xFE, 0xFF}):
		src = newUTF16Reader(io.MultiReader(bytes.NewReader(h[2:]), r), true, 2)
	case len(h) >= 2 && isMarkupStart(h[0]) && h[1] == 0:
		src = newUTF16Reader(io.MultiReader(bytes.NewReader(h), r), false, 0)
	case len(h) >= 2 && h[0] == 0 && isMarkupStart(h[1]):
		src = newUTF16Reader(io.MultiReader(bytes.NewReader(h), r), true, 0)
	default:
		src = io.MultiReader(bytes.NewReader(h), r)
	}
	return &sizeLimiter{r: src, max: maxBytes}, nil
}

// isMarkupStart reports whether b may start an XML document ('<' or white
// space); used to recognise UTF-16 without a byte order mark.
func isMarkupStart(b byte) bool {
	return b == '<' || b == ' ' || b == '\t' || b == '\r' || b == '\n'
}

// sizeLimiter passes through at most max bytes and then fails with
// errSizeLimit if the input has more.
type sizeLimiter struct {
	r   io.Reader
	n   int64 // bytes passed so far
	max int64
}

func (l *sizeLimiter) Read(p []byte) (int, error) {
	if l.n > l.max {
		return 0, errSizeLimit
	}
	if room := l.max - l.n + 1; int64(len(p)) > room {
		p = p[:room] // one byte beyond the limit is enough to detect it
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.max {
		return n - int(l.n-l.max), errSizeLimit
	}
	return n, err
}

// utf16Reader transcodes UTF-16 to UTF-8 as it reads. An odd number of
// bytes or an unpaired surrogate is an error naming the byte offset in the
// original input.
type utf16Reader struct {
	r         io.Reader
	bigEndian bool
	raw       []byte // undecoded input is raw[start:end]
	start     int
	end       int
	offset    int64  // input offset of raw[start]
	out       []byte // decoded text not yet returned is out[outPos:]
	outPos    int
	err       error // returned once out is drained
}

func newUTF16Reader(r io.Reader, bigEndian bool, offset int64) *utf16Reader {
	const rawSize = 32 << 10
	// Two input bytes become at most three output bytes.
	return &utf16Reader{r: r, bigEndian: bigEndian, raw: make([]byte, rawSize), out: make([]byte, 0, rawSize/2*3), offset: offset}
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for u.outPos == len(u.out) {
		if u.err != nil {
			return 0, u.err
		}
		u.fill()
	}
	n := copy(p, u.out[u.outPos:])
	u.outPos += n
	return n, nil
}

// fill reads more input and decodes as much of it as possible into out.
func (u *utf16Reader) fill() {
	if u.start > 0 {
		u.end = copy(u.raw, u.raw[u.start:u.end])
		u.start = 0
	}
	n, err := io.ReadAtLeast(u.r, u.raw[u.end:], 4)
	u.end += n
	eof := err == io.EOF || err == io.ErrUnexpectedEOF
	if err != nil && !eof {
		u.err = err
	}
	u.out = u.out[:0]
	u.outPos = 0
	for u.end-u.start >= 2 {
		u.decodeASCII()
		if u.end-u.start < 2 {
			break
		}
		c := u.unit(u.start)
		switch {
		case utf16.IsSurrogate(rune(c)) && c < 0xDC00: // high surrogate
			if u.end-u.start < 4 {
				if eof {
					u.fail("unpaired high surrogate 0x%04X at the end of the input, byte offset %d (the file may be truncated)", c, u.offset)
					return
				}
				return // the low half is in the next read
			}
			lo := u.unit(u.start + 2)
			if lo < 0xDC00 || lo > 0xDFFF {
				u.fail("unpaired high surrogate 0x%04X at byte offset %d", c, u.offset)
				return
			}
			u.out = utf8.AppendRune(u.out, utf16.DecodeRune(rune(c), rune(lo)))
			u.advance(4)
		case utf16.IsSurrogate(rune(c)): // low surrogate without a high one
			u.fail("unpaired low surrogate 0x%04X at byte offset %d", c, u.offset)
			return
		default:
			u.out = utf8.AppendRune(u.out, rune(c))
			u.advance(2)
		}
	}
	if eof && u.err == nil {
		if u.end-u.start == 1 {
			u.fail("odd number of bytes: a lone byte remains at byte offset %d (the file may be truncated)", u.offset)
			return
		}
		u.err = io.EOF
	}
}

// decodeASCII decodes the run of ASCII code units at raw[start:], the bulk
// of a plan, without the general path.
func (u *utf16Reader) decodeASCII() {
	raw := u.raw[u.start:u.end]
	lo, hi := 0, 1 // the low and high byte of a unit
	if u.bigEndian {
		lo, hi = 1, 0
	}
	out := u.out
	i := 0
	for ; i+1 < len(raw); i += 2 {
		if raw[i+hi] != 0 || raw[i+lo] >= utf8.RuneSelf {
			break
		}
		out = append(out, raw[i+lo])
	}
	u.out = out
	u.advance(i)
}

func (u *utf16Reader) unit(i int) uint16 {
	if u.bigEndian {
		return uint16(u.raw[i])<<8 | uint16(u.raw[i+1])
	}
	return uint16(u.raw[i]) | uint16(u.raw[i+1])<<8
}

func (u *utf16Reader) advance(n int) {
	u.start += n
	u.offset += int64(n)
}

func (u *utf16Reader) fail(format string, args ...any) {
	u.err = &inputError{"invalid UTF-16 input: " + fmt.Sprintf(format, args...)}
}

// checkStart looks at the first non-blank bytes of the decoded text and
// rejects input that cannot be XML with a message saying what was found.
// It reads into the scanner's first buffer without consuming anything.
func checkStart(s *scanner) error {
	const sampleLen = 16
	for {
		buf := s.buf[:s.end]
		i := 0
		for i < len(buf) && isSpace(buf[i]) {
			i++
		}
		done := s.rerr != nil || s.end == len(s.buf) // no more data comes into this buffer
		if i < len(buf) && (buf[i] == '<' || len(buf)-i >= sampleLen || done) {
			if buf[i] == '<' {
				return nil
			}
			line := 1 + bytes.Count(buf[:i], []byte{'\n'})
			col := i - bytes.LastIndexByte(buf[:i], '\n')
			sample := buf[i:min(len(buf), i+sampleLen)]
			return &Error{Line: line, Column: col, Msg: "not XML: expected '<' at the start of the document, found " + contentKind(sample)}
		}
		if done {
			switch {
			case s.rerr == nil:
				return nil // a long run of white space; let the scanner go on
			case s.rerr != io.EOF:
				return nil // the scanner reports read errors with their position
			case len(buf) == 0:
				return &Error{Msg: "empty input: there is no XML content"}
			}
			return &Error{Msg: "no root element: the input contains only white space"}
		}
		s.read(1)
	}
}
