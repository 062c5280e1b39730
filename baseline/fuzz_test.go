package baseline

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// FuzzLoadBaseline checks that no input panics, that every error is an
// *Error with a position, and that whatever loads writes back and loads
// again to the same entries.
func FuzzLoadBaseline(f *testing.F) {
	var written bytes.Buffer
	_ = Write(&written, []Entry{
		{Key: Key{Rule: "key-lookup", File: "sql/q.sql", Fingerprint: "fp", Node: "Key Lookup [dbo].[Jobs]"}, Count: 2},
		{Key: Key{Rule: "set-options", File: "sql/a.sql", Fingerprint: "fa"}, Count: 1},
	})
	for _, s := range []string{
		written.String(),
		"",
		"{}",
		`{"version": 1, "entries": null}`,
		`{"version": 2, "entries": []}`,
		`{"version": 1, "entries": [{"file": "a", "rule": "r", "fingerprint": "f", "count": 1}, {"file": "a", "rule": "r", "fingerprint": "f", "count": 1}]}`,
		`{"version": 1, "entries": [{"file": "a\\b", "rule": "r", "fingerprint": "\u00e5", "node": "n", "count": 99999999999999999999}]}`,
		`{"version": 1, "entries": [{"file": "a", "rule": "r", "fingerprint": "f", "count": 1}`,
		"{\"version\": 1,\n \"version\": 1}",
		"\xef\xbb\xbf{}",
		`[{"version": 1}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Parse("b.json", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			if e.Line < 1 || e.Column < 1 || !strings.HasPrefix(err.Error(), "b.json:") {
				t.Fatalf("error without a position: %q", err.Error())
			}
			return
		}
		entries := b.Entries()
		var buf bytes.Buffer
		if err := Write(&buf, entries); err != nil {
			t.Fatalf("loaded entries do not write: %v", err)
		}
		again, err := Parse("again.json", buf.Bytes())
		if err != nil {
			t.Fatalf("written baseline does not load: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(again.Entries(), entries) {
			t.Fatalf("round trip changed entries:\n%+v\n%+v", entries, again.Entries())
		}
		items := make([]Item, 0)
		for _, e := range entries {
			for range min(e.Count, 3) {
				items = append(items, Item{Key: e.Key})
			}
		}
		if fresh, _ := b.Filter(items); len(fresh) != 0 {
			t.Fatalf("recorded findings came back fresh: %+v", fresh)
		}
	})
}
