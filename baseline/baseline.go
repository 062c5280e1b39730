// Package baseline records known findings so that a run can report only new
// ones. A team adopting planlint on an old code base writes a baseline with
// --write-baseline, commits it, and runs with --baseline: findings already in
// the file are hidden and only new problems fail the build.
//
// Findings are identified by Key: rule, file, a fingerprint of the statement
// and a signature of the plan operator. None of these is a line number or a
// NodeId, so reformatting a file, moving a statement or a plan changing shape
// elsewhere keeps a finding baselined. How fingerprints and signatures are
// computed is the caller's business; this package only compares them.
package baseline

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// Version is the baseline file format this package writes and reads.
const Version = 1

// Key identifies a finding independently of line numbers.
type Key struct {
	// Rule is the rule's name, e.g. "key-lookup".
	Rule string
	// File is the repository-relative path with forward slashes; "" for
	// findings without a file (plans from the cache or Query Store).
	File string
	// Fingerprint identifies the statement within the file, e.g. a hash of
	// its normalised text.
	Fingerprint string
	// Node is the operator signature (see NodeSignature); "" for findings
	// on the whole statement.
	Node string
}

// normalize puts a key in the form it is compared and stored in.
func (k Key) normalize() Key {
	k.Rule = strings.TrimSpace(k.Rule)
	k.File = normalizeFile(k.File)
	k.Fingerprint = strings.TrimSpace(k.Fingerprint)
	k.Node = strings.TrimSpace(k.Node)
	return k
}

// normalizeFile turns backslashes into slashes and cleans the path.
func normalizeFile(f string) string {
	f = strings.TrimSpace(strings.ReplaceAll(f, `\`, "/"))
	if f == "" {
		return ""
	}
	return path.Clean(f)
}

func compareKeys(a, b Key) int {
	return cmp.Or(
		strings.Compare(a.File, b.File),
		strings.Compare(a.Rule, b.Rule),
		strings.Compare(a.Fingerprint, b.Fingerprint),
		strings.Compare(a.Node, b.Node),
	)
}

// NodeSignature identifies a plan operator by what it does rather than by
// its NodeId: the physical operator and the object it touches, e.g.
// NodeSignature("Key Lookup", "[dbo].[Jobs].[PK_Jobs]"). Blank parts are
// left out and runs of white space collapse to one space.
func NodeSignature(physicalOp string, object ...string) string {
	parts := strings.Fields(physicalOp)
	for _, o := range object {
		parts = append(parts, strings.Fields(o)...)
	}
	return strings.Join(parts, " ")
}

// Entry is a key and how many findings had it.
type Entry struct {
	Key
	Count int
}

// Item is a current finding: its key, and the caller's finding, which
// Filter hands back untouched.
type Item struct {
	Key
	Finding any
}

// Entries counts items by key, in the order Write uses.
func Entries(items []Item) []Entry {
	counts := make(map[Key]int, len(items))
	for _, it := range items {
		counts[it.Key.normalize()]++
	}
	return fromCounts(counts)
}

func fromCounts(counts map[Key]int) []Entry {
	out := make([]Entry, 0, len(counts))
	for k, n := range counts {
		if n > 0 {
			out = append(out, Entry{Key: k, Count: n})
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return compareKeys(a.Key, b.Key) })
	return out
}

// entryJSON is an entry as stored, in the field order written.
type entryJSON struct {
	File        string `json:"file"`
	Rule        string `json:"rule"`
	Fingerprint string `json:"fingerprint"`
	Node        string `json:"node,omitempty"`
	Count       int    `json:"count"`
}

// Write writes a baseline file: the entries (keys normalised, duplicates
// merged) sorted by file, rule, fingerprint and node, one entry per line so
// that changes diff cleanly.
func Write(w io.Writer, entries []Entry) error {
	counts := map[Key]int{}
	for i, e := range entries {
		k := e.Key.normalize()
		switch {
		case k.Rule == "":
			return fmt.Errorf("baseline entry %d (file %q): empty rule", i+1, k.File)
		case e.Count < 1:
			return fmt.Errorf("baseline entry %d (rule %s, file %q): count %d; want at least 1", i+1, k.Rule, k.File, e.Count)
		}
		counts[k] += e.Count
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "{\n  \"version\": %d,\n  \"entries\": [", Version)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i, e := range fromCounts(counts) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		if err := enc.Encode(entryJSON{File: e.File, Rule: e.Rule, Fingerprint: e.Fingerprint, Node: e.Node, Count: e.Count}); err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		b.Truncate(b.Len() - 1) // Encode's newline
	}
	if len(counts) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// Baseline is a loaded baseline file. Filter uses it up: each recorded
// finding hides one current finding, across all calls. It is not safe for
// concurrent use.
type Baseline struct {
	// Path is the file it was read from.
	Path      string
	entries   []Entry
	remaining map[Key]int
}

// New returns a baseline holding entries, as if written and loaded.
func New(entries []Entry) *Baseline {
	counts := make(map[Key]int, len(entries))
	for _, e := range entries {
		if e.Count > 0 {
			counts[e.Key.normalize()] += e.Count
		}
	}
	return newBaseline("", counts)
}

// newBaseline takes ownership of counts.
func newBaseline(path string, counts map[Key]int) *Baseline {
	return &Baseline{Path: path, entries: fromCounts(counts), remaining: counts}
}

// Entries returns the recorded entries, sorted.
func (b *Baseline) Entries() []Entry { return slices.Clone(b.entries) }

// Filter returns the items the baseline does not account for, in their
// order, and how many it hid. With n recorded for a key, the first n items
// with that key (in this and earlier calls) are hidden and the rest are
// fresh.
func (b *Baseline) Filter(items []Item) (fresh []Item, known int) {
	for _, it := range items {
		k := it.Key.normalize()
		if b.remaining[k] > 0 {
			b.remaining[k]--
			known++
			continue
		}
		fresh = append(fresh, it)
	}
	return fresh, known
}

// Unmatched returns the recorded findings Filter has not seen (so far), with
// Count the number not seen: problems fixed since the baseline was written,
// or in files this run did not analyse.
func (b *Baseline) Unmatched() []Entry {
	return fromCounts(b.remaining)
}
