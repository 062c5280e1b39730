package sqlscript

import (
	"math"
	"sort"
	"strings"
	"unicode/utf8"
)

// compacted is a text with its whitespace removed, remembering where each
// run of kept bytes came from: whitespace came before every run but perhaps
// the first. It costs a byte per kept byte and eight per run, not nine per
// byte as an offset and a flag for every byte would.
type compacted struct {
	text string
	runs []run
}

// run is a stretch of kept bytes: text[at:] comes from the original text at
// offset from.
type run struct {
	at, from int32
}

// compact removes the whitespace of s[from:].
func compact(s string, from int) compacted {
	// a first pass sizes the text and the runs, so that neither grows
	kept, runs := 0, 0
	gap := true // a run starts at the first kept byte
	for i := from; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			gap = true
		} else {
			if gap {
				runs++
			}
			kept += n
			gap = false
		}
		i += n
	}
	c := compacted{runs: make([]run, 0, runs)}
	var sb strings.Builder
	sb.Grow(kept)
	gap = true
	for i := from; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isSpace(r) {
			gap = true
			i += n
			continue
		}
		if gap {
			c.runs = append(c.runs, run{at: int32(sb.Len()), from: int32(i)})
		}
		sb.WriteString(s[i : i+n])
		gap = false
		i += n
	}
	c.text = sb.String()
	return c
}

// offset returns the offset in the original text of c.text[i].
func (c *compacted) offset(i int) int {
	k := sort.Search(len(c.runs), func(k int) bool { return int(c.runs[k].at) > i }) - 1
	return int(c.runs[k].from) + i - int(c.runs[k].at)
}

// index returns the position in c.text of the first byte kept from the
// original text at or after offset from.
func (c *compacted) index(from int) int {
	k := sort.Search(len(c.runs), func(k int) bool { return int(c.runs[k].from) >= from })
	if k > 0 { // inside the run before?
		r := c.runs[k-1]
		end := len(c.text)
		if k < len(c.runs) {
			end = int(c.runs[k].at)
		}
		if i := int(r.at) + from - int(r.from); i < end {
			return i
		}
	}
	if k == len(c.runs) {
		return len(c.text)
	}
	return int(c.runs[k].at)
}

// Locator finds statements in one text, which it compacts once; Locate
// compacts it at every call.
type Locator struct {
	text string
	hay  compacted
}

// NewLocator prepares text for Locate calls.
func NewLocator(text string) *Locator {
	if len(text) > maxLocate {
		return &Locator{text: text}
	}
	return &Locator{text: text, hay: compact(text, 0)}
}

// maxLocate is the longest text Locate searches (offsets are kept in 32
// bits); SQL Server takes no batch this long.
const maxLocate = math.MaxInt32

// Locate is the package's Locate on the locator's text.
func (l *Locator) Locate(stmt string, from int) (start, end int, ok bool) {
	if from < 0 {
		from = 0
	}
	if from > len(l.text) || len(l.text) > maxLocate {
		return 0, 0, false
	}
	return locate(&l.hay, l.hay.index(from), stmt)
}

// Locate finds stmt (for example the StatementText of a plan, which is a
// substring of the text sent but may differ in whitespace and line endings)
// in text, starting at byte offset from. Whitespace is ignored in the
// comparison; among the matches, the first one that has whitespace exactly
// where stmt has it is preferred. start and end are the byte offsets of
// the first and just past the last non-space character matched.
func Locate(text, stmt string, from int) (start, end int, ok bool) {
	if from < 0 {
		from = 0
	}
	if from > len(text) || len(text) > maxLocate || len(stmt) > maxLocate {
		return 0, 0, false
	}
	hay := compact(text, from)
	return locate(&hay, 0, stmt)
}

// locate finds stmt in hay.text[base:].
func locate(hay *compacted, base int, stmt string) (start, end int, ok bool) {
	if len(stmt) > maxLocate {
		return 0, 0, false
	}
	needle := compact(stmt, 0)
	if needle.text == "" {
		return 0, 0, false
	}
	first := -1
	for {
		k := strings.Index(hay.text[base:], needle.text)
		if k < 0 {
			break
		}
		at := base + k
		if first < 0 {
			first = at
		}
		if sameGaps(hay, &needle, at) {
			first = at
			break
		}
		base = at + 1
	}
	if first < 0 {
		return 0, 0, false
	}
	last := first + len(needle.text) - 1
	return hay.offset(first), hay.offset(last) + 1, true
}

// sameGaps reports whether hay, at position at, has whitespace exactly
// between the characters where needle has it: the runs that start inside
// the match are those of the needle, shifted.
func sameGaps(hay, needle *compacted, at int) bool {
	n := len(needle.text)
	k := sort.Search(len(hay.runs), func(k int) bool { return int(hay.runs[k].at) > at })
	for _, r := range needle.runs[1:] {
		if k >= len(hay.runs) || int(hay.runs[k].at) != at+int(r.at) {
			return false
		}
		k++
	}
	return k >= len(hay.runs) || int(hay.runs[k].at) >= at+n
}
