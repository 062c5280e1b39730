package baseline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/planlint/planlint/internal/regular"
)

// MaxFileSize bounds the baseline file Load reads.
const MaxFileSize = 256 << 20

// Error is a problem with a baseline file.
type Error struct {
	Path string
	// Line and Column are 1-based; 0 when the position is unknown.
	Line, Column int
	Msg          string
	// Err is the underlying error, if any.
	Err error
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Path + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Column, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads a baseline file written by Write.
func Load(path string) (*Baseline, error) {
	data, err := regular.ReadFile(path, MaxFileSize)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &Error{Path: path, Msg: "cannot read baseline: " + err.Error(), Err: err}
	}
	return Parse(path, data)
}

// Parse reads a baseline from data; name is used in errors and as Path.
// A UTF-8 byte-order mark is ignored.
func Parse(name string, data []byte) (*Baseline, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	p := &reader{name: name, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	counts, err := p.file()
	if err != nil {
		return nil, err
	}
	return newBaseline(name, counts), nil
}

type reader struct {
	name string
	data []byte
	dec  *json.Decoder
}

// errAt returns an error at byte offset off.
func (p *reader) errAt(off int64, format string, args ...any) *Error {
	line, col := position(p.data, off)
	return &Error{Path: p.name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// next returns the offset where the next token starts.
func (p *reader) next() int64 {
	off := p.dec.InputOffset()
	for off < int64(len(p.data)) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// token reads one token, turning decoder errors into positioned ones.
func (p *reader) token(what string) (json.Token, int64, error) {
	off := p.next()
	t, err := p.dec.Token()
	if err != nil {
		return nil, off, p.syntaxError(err, off, what)
	}
	return t, off, nil
}

func (p *reader) syntaxError(err error, off int64, what string) *Error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// Offset is where the offending byte starts.
		e := p.errAt(se.Offset, "malformed JSON: %v", se)
		e.Err = err
		return e
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e := p.errAt(int64(len(p.data)), "unexpected end of file; expected %s", what)
		e.Err = err
		return e
	}
	e := p.errAt(off, "malformed JSON: %v", err)
	e.Err = err
	return e
}

func (p *reader) expectDelim(d json.Delim, what string) (int64, error) {
	t, off, err := p.token(what)
	if err != nil {
		return off, err
	}
	if t != d {
		return off, p.errAt(off, "expected %s; got %s", what, describe(t))
	}
	return off, nil
}

func (p *reader) file() (map[Key]int, error) {
	if len(bytes.TrimSpace(p.data)) == 0 {
		return nil, &Error{Path: p.name, Line: 1, Column: 1, Msg: `empty file; expected a JSON object with "version" and "entries"`}
	}
	if _, err := p.expectDelim('{', `a JSON object with "version" and "entries"`); err != nil {
		return nil, err
	}
	var (
		counts map[Key]int
		seen   = map[string]int64{}
	)
	for p.dec.More() {
		t, off, err := p.token("a key")
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		if first, dup := seen[key]; dup {
			line, col := position(p.data, first)
			return nil, p.errAt(off, "duplicate key %q (first at line %d, column %d)", key, line, col)
		}
		seen[key] = off
		switch key {
		case "version":
			if err := p.version(); err != nil {
				return nil, err
			}
		case "entries":
			if counts, err = p.entries(); err != nil {
				return nil, err
			}
		default:
			return nil, p.errAt(off, `unknown key %q; a baseline has "version" and "entries"`, key)
		}
	}
	if _, err := p.expectDelim('}', `"}"`); err != nil {
		return nil, err
	}
	if off := p.next(); off < int64(len(p.data)) {
		return nil, p.errAt(off, "unexpected data after the baseline object")
	}
	if _, ok := seen["version"]; !ok {
		return nil, p.errAt(0, `no "version" key; is this a planlint baseline?`)
	}
	if _, ok := seen["entries"]; !ok {
		return nil, p.errAt(0, `no "entries" key`)
	}
	return counts, nil
}

// version reads the format version and checks it is Version.
func (p *reader) version() error {
	t, off, err := p.token("a version number")
	if err != nil {
		return err
	}
	num, isNum := t.(json.Number)
	v, err := strconv.Atoi(string(num))
	switch {
	case !isNum || err != nil:
		return p.errAt(off, `"version" must be an integer; got %s`, describe(t))
	case v > Version:
		return p.errAt(off, "baseline version %d is newer than this planlint reads (%d); upgrade planlint or rewrite the baseline with --write-baseline", v, Version)
	case v != Version:
		return p.errAt(off, "unsupported baseline version %d (this planlint reads %d); rewrite the baseline with --write-baseline", v, Version)
	}
	return nil
}

func (p *reader) entries() (map[Key]int, error) {
	if t, off, err := p.token(`a list of entries`); err != nil {
		return nil, err
	} else if t == nil {
		return map[Key]int{}, nil // "entries": null
	} else if t != json.Delim('[') {
		return nil, p.errAt(off, "entries: expected a list; got %s", describe(t))
	}
	// Write puts one entry on each line; the cap bounds what odd input
	// makes us allocate up front.
	type numbered struct{ n, count int }
	found := make(map[Key]numbered, min(bytes.Count(p.data, []byte{'\n'}), 1<<16))
	for n := 1; p.dec.More(); n++ {
		off := p.next()
		e, err := p.entry(n, off)
		if err != nil {
			return nil, err
		}
		k := e.Key.normalize()
		if first, dup := found[k]; dup {
			return nil, p.errAt(off, "entry %d repeats entry %d (same file, rule, fingerprint and node); merge their counts", n, first.n)
		}
		found[k] = numbered{n, e.Count}
	}
	if _, err := p.expectDelim(']', `"]" or another entry`); err != nil {
		return nil, err
	}
	counts := make(map[Key]int, len(found))
	for k, v := range found {
		counts[k] = v.count
	}
	return counts, nil
}

// Entry keys, as bits for tracking which were seen.
const (
	hasFile = 1 << iota
	hasRule
	hasFingerprint
	hasNode
	hasCount
)

var entryKeys = map[string]int{"file": hasFile, "rule": hasRule, "fingerprint": hasFingerprint, "node": hasNode, "count": hasCount}

// entry reads one entry object starting at off.
func (p *reader) entry(n int, off int64) (Entry, error) {
	var e Entry
	if t, _, err := p.token("an entry"); err != nil {
		return e, err
	} else if t != json.Delim('{') {
		return e, p.errAt(off, "entry %d: expected an object; got %s", n, describe(t))
	}
	seen := 0
	for p.dec.More() {
		t, keyOff, err := p.token("a key")
		if err != nil {
			return e, err
		}
		key, _ := t.(string)
		bit, ok := entryKeys[key]
		switch {
		case !ok:
			return e, p.errAt(keyOff, "entry %d: unknown key %q; entries have file, rule, fingerprint, node and count", n, key)
		case seen&bit != 0:
			return e, p.errAt(keyOff, "entry %d: duplicate key %q", n, key)
		}
		seen |= bit
		v, valOff, err := p.token("a value")
		if err != nil {
			return e, err
		}
		if bit == hasCount {
			num, isNum := v.(json.Number)
			c, err := strconv.Atoi(string(num))
			if !isNum || err != nil || c < 1 {
				return e, p.errAt(valOff, "entry %d: \"count\" must be a whole number of at least 1; got %s", n, describe(v))
			}
			e.Count = c
			continue
		}
		s, isString := v.(string)
		if !isString {
			return e, p.errAt(valOff, "entry %d: %q must be a string; got %s", n, key, describe(v))
		}
		switch bit {
		case hasFile:
			e.File = s
		case hasRule:
			e.Rule = s
		case hasFingerprint:
			e.Fingerprint = s
		case hasNode:
			e.Node = s
		}
	}
	if _, err := p.expectDelim('}', `"}" or another key`); err != nil {
		return e, err
	}
	for _, key := range []string{"file", "rule", "fingerprint", "count"} {
		if seen&entryKeys[key] == 0 {
			return e, p.errAt(off, "entry %d: no %q", n, key)
		}
	}
	if e.Key.normalize().Rule == "" {
		return e, p.errAt(off, "entry %d: empty rule", n)
	}
	return e, nil
}

// describe names a JSON token for "got ..." in messages.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "a list"
		}
		return strconv.Quote(v.String())
	case string:
		return strconv.Quote(v)
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(t)
}

// position turns a byte offset into a 1-based line and column (in
// characters).
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}
