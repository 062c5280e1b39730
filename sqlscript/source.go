package sqlscript

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Pos is a position in a text. Offset is a byte offset; Line and Column are
// 1-based and Column counts Unicode characters.
type Pos struct {
	Offset, Line, Column int
}

// String renders the position as line:column.
func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Range is the half-open span [Start, End) of a text.
type Range struct {
	Start, End Pos
}

// lineIndex maps byte offsets of a text to line and column numbers. Line
// breaks are "\r\n", "\n" and a lone "\r".
type lineIndex struct {
	text  string
	start []int // byte offset where each line starts
	// runes[k] counts the characters that start in text[:k*runeBlock], so
	// that columns on long lines cost O(runeBlock), not O(line length)
	runes []int
}

const runeBlock = 64

func newLineIndex(text string) *lineIndex {
	lines := strings.Count(text, "\n") + strings.Count(text, "\r") + 1 // at least the lines there are
	idx := &lineIndex{text: text, start: make([]int, 1, lines), runes: make([]int, 1, len(text)/runeBlock+1)}
	n := 0
	for i := 0; i < len(text); i++ {
		if i > 0 && i%runeBlock == 0 {
			idx.runes = append(idx.runes, n)
		}
		if utf8.RuneStart(text[i]) {
			n++
		}
		switch text[i] {
		case '\n':
			idx.start = append(idx.start, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				continue
			}
			idx.start = append(idx.start, i+1)
		}
	}
	return idx
}

// pos returns the position of a byte offset; offsets outside the text are
// clamped to it, and an offset inside a UTF-8 sequence counts as the start of
// that character.
func (idx *lineIndex) pos(offset int) Pos {
	if offset < 0 {
		offset = 0
	}
	if offset > len(idx.text) {
		offset = len(idx.text)
	}
	line := sort.Search(len(idx.start), func(i int) bool { return idx.start[i] > offset }) - 1
	col := idx.runesBefore(offset) - idx.runesBefore(idx.start[line]) + 1
	if offset < len(idx.text) && !utf8.RuneStart(idx.text[offset]) {
		col-- // inside a character: report the character itself
	}
	return Pos{Offset: offset, Line: line + 1, Column: col}
}

// runesBefore counts the characters that start in text[:offset].
func (idx *lineIndex) runesBefore(offset int) int {
	k := offset / runeBlock
	if k >= len(idx.runes) {
		k = len(idx.runes) - 1
	}
	n := idx.runes[k]
	for i := k * runeBlock; i < offset; i++ {
		if utf8.RuneStart(idx.text[i]) {
			n++
		}
	}
	return n
}

// line returns the 1-based line number of an offset.
func (idx *lineIndex) line(offset int) int {
	return sort.Search(len(idx.start), func(i int) bool { return idx.start[i] > offset })
}

func (idx *lineIndex) span(start, end int) Range {
	return Range{Start: idx.pos(start), End: idx.pos(end)}
}

// decodeSource turns the bytes of a .sql file into text: UTF-8 with or
// without a byte-order mark, or UTF-16 (little or big endian) with one.
func decodeSource(src []byte) (string, error) {
	switch {
	case bytes.HasPrefix(src, []byte{0xFF, 0xFE, 0x00, 0x00}) || bytes.HasPrefix(src, []byte{0x00, 0x00, 0xFE, 0xFF}):
		return "", fmt.Errorf("file is UTF-32, which is not supported: save it as UTF-8 or UTF-16")
	case bytes.HasPrefix(src, []byte{0xFF, 0xFE}):
		return decodeUTF16(src[2:], false)
	case bytes.HasPrefix(src, []byte{0xFE, 0xFF}):
		return decodeUTF16(src[2:], true)
	}
	src = bytes.TrimPrefix(src, []byte{0xEF, 0xBB, 0xBF})
	if i := bytes.IndexByte(src, 0); i >= 0 {
		p := newLineIndex(string(src[:i])).pos(i)
		return "", fmt.Errorf("%s: NUL byte in a UTF-8 file (is it UTF-16 without a byte-order mark? save it with one)", p)
	}
	if !utf8.Valid(src) {
		i := firstInvalidUTF8(src)
		p := newLineIndex(string(src[:i])).pos(i)
		return "", fmt.Errorf("%s: invalid UTF-8 (byte 0x%02X); save the file as UTF-8 or as UTF-16 with a byte-order mark", p, src[i])
	}
	return string(src), nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

func decodeUTF16(b []byte, bigEndian bool) (string, error) {
	if len(b)%2 != 0 {
		return "", fmt.Errorf("UTF-16 file has an odd number of bytes (%d after the byte-order mark); it is truncated", len(b))
	}
	units := make([]uint16, len(b)/2)
	for i := range units {
		if bigEndian {
			units[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			units[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	var sb bytes.Buffer
	sb.Grow(len(units))
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case utf16.IsSurrogate(rune(u)):
			if i+1 < len(units) {
				if r := utf16.DecodeRune(rune(u), rune(units[i+1])); r != utf8.RuneError {
					sb.WriteRune(r)
					i++
					continue
				}
			}
			p := newLineIndex(sb.String()).pos(sb.Len())
			return "", fmt.Errorf("%s: invalid UTF-16 (unpaired surrogate 0x%04X at byte %d of the file)", p, u, 2+2*i)
		case u == 0:
			p := newLineIndex(sb.String()).pos(sb.Len())
			return "", fmt.Errorf("%s: NUL character in a UTF-16 file (byte %d); is the byte order wrong?", p, 2+2*i)
		default:
			sb.WriteRune(rune(u))
		}
	}
	return sb.String(), nil
}
