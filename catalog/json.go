package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/planlint/planlint/internal/regular"
)

// MaxScriptSize is the largest catalog script or JSON file LoadFile reads.
const MaxScriptSize = 256 << 20

// unwrapPath drops the "open path:" that the caller's path prefix repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// FormatVersion is the planlint_catalog version Write produces and Load
// reads.
const FormatVersion = 1

// document is the JSON file: the catalog under a format version.
type document struct {
	Version   *int        `json:"planlint_catalog"`
	Server    *Server     `json:"server,omitempty"`
	Databases []*Database `json:"databases,omitempty"`
	Tables    []*Table    `json:"tables"`
}

// Write writes c as indented JSON in a stable order: databases by name,
// tables by database, schema and name, indexes with the clustered one
// first and then by name. Columns, key columns and includes keep their
// order. c is not modified.
func Write(w io.Writer, c *Catalog) error {
	if c == nil {
		c = &Catalog{}
	}
	v := FormatVersion
	doc := document{Version: &v, Server: c.Server, Tables: []*Table{}}
	for _, d := range c.Databases {
		if d != nil {
			doc.Databases = append(doc.Databases, d)
		}
	}
	sort.SliceStable(doc.Databases, func(i, j int) bool {
		return strings.ToLower(doc.Databases[i].Name) < strings.ToLower(doc.Databases[j].Name)
	})
	for _, t := range c.Tables {
		if t == nil {
			continue
		}
		tc := *t
		tc.Columns = nil
		for _, col := range t.Columns {
			if col != nil {
				tc.Columns = append(tc.Columns, col)
			}
		}
		tc.Indexes = nil
		for _, ix := range t.Indexes {
			if ix == nil {
				continue
			}
			ic := *ix
			if ic.Keys == nil {
				ic.Keys = []IndexColumn{}
			}
			tc.Indexes = append(tc.Indexes, &ic)
		}
		sort.SliceStable(tc.Indexes, func(i, j int) bool {
			a, b := tc.Indexes[i], tc.Indexes[j]
			if a.isClustered() != b.isClustered() {
				return a.isClustered()
			}
			return strings.ToLower(a.Name) < strings.ToLower(b.Name)
		})
		doc.Tables = append(doc.Tables, &tc)
	}
	sort.SliceStable(doc.Tables, func(i, j int) bool {
		a, b := doc.Tables[i], doc.Tables[j]
		for _, pair := range [][2]string{{a.Database, b.Database}, {a.Schema, b.Schema}, {a.Name, b.Name}} {
			if x, y := strings.ToLower(pair[0]), strings.ToLower(pair[1]); x != y {
				return x < y
			}
		}
		return false
	})
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// Load reads catalog facts from path: the JSON that Write produces (the
// first non-space character is "{") or a T-SQL script. A script with
// diagnostics is an error that lists them all; LoadFile returns them
// instead. Errors name the path and, for bad JSON, the line and column.
func Load(path string) (*Catalog, error) {
	c, diags, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	if len(diags) > 0 {
		return nil, &ScriptError{Path: path, Diagnostics: diags}
	}
	return c, nil
}

// LoadFile is Load that returns a script's diagnostics with the facts
// from the statements that parsed.
func LoadFile(path string) (*Catalog, []Diagnostic, error) {
	raw, err := regular.ReadFile(path, MaxScriptSize)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	text, err := decodeText(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	switch firstByte(text) {
	case '{':
		c, err := decodeJSON(path, []byte(text))
		return c, nil, err
	case '<':
		return nil, nil, fmt.Errorf("%s: this is XML (a showplan?); expected a T-SQL script or planlint catalog JSON", path)
	}
	c, diags := parseText(path, text) // not ParseScript: it would read and decode a copy
	if len(c.Tables) == 0 && len(diags) == 0 {
		return nil, nil, fmt.Errorf("%s: no CREATE TABLE, CREATE INDEX or ALTER TABLE statement found; expected a T-SQL script or planlint catalog JSON", path)
	}
	return c, diags, nil
}

// ScriptError reports the diagnostics of a script that Load read.
type ScriptError struct {
	Path        string
	Diagnostics []Diagnostic
}

func (e *ScriptError) Error() string {
	var b strings.Builder
	if len(e.Diagnostics) == 1 {
		return e.Diagnostics[0].String()
	}
	fmt.Fprintf(&b, "%s: %d problems:", e.Path, len(e.Diagnostics))
	for _, d := range e.Diagnostics {
		b.WriteString("\n  ")
		b.WriteString(d.String())
	}
	return b.String()
}

// firstByte returns the first byte after whitespace, or 0.
func firstByte(text string) byte {
	text = strings.TrimLeft(text, " \t\r\n")
	if text == "" {
		return 0
	}
	return text[0]
}

// decodeJSON parses a catalog JSON document, checks its version and
// required names, and parses the filter definitions.
func decodeJSON(path string, data []byte) (*Catalog, error) {
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, jsonError(path, data, err)
	}
	if doc.Version == nil {
		return nil, fmt.Errorf("%s: not a planlint catalog: the \"planlint_catalog\" version field is missing (expected %d)", path, FormatVersion)
	}
	if *doc.Version != FormatVersion {
		line, col := versionPosition(data)
		return nil, fmt.Errorf("%s:%d:%d: unsupported planlint_catalog version %d (this planlint reads version %d)",
			path, line, col, *doc.Version, FormatVersion)
	}
	c := &Catalog{Server: doc.Server, Source: path}
	for i, d := range doc.Databases {
		if d == nil || d.Name == "" {
			return nil, fmt.Errorf("%s: databases[%d]: missing name", path, i)
		}
		c.Databases = append(c.Databases, d)
	}
	for i, t := range doc.Tables {
		if err := checkTable(t); err != nil {
			return nil, fmt.Errorf("%s: tables[%d]%s", path, i, err)
		}
		if t.Schema == "" {
			t.Schema = "dbo"
		}
		for _, ix := range t.Indexes {
			ix.Filter, ix.FilterError = nil, ""
			if ix.FilterDefinition == "" {
				continue
			}
			f, err := ParseFilter(ix.FilterDefinition)
			if err != nil {
				ix.FilterError = err.Error()
			} else {
				ix.Filter = f
			}
		}
		c.Tables = append(c.Tables, t)
	}
	return c, nil
}

// checkTable reports a table entry without the names the rules need; the
// message starts with the entry's place below tables[i].
func checkTable(t *Table) error {
	if t == nil {
		return errors.New(": null table")
	}
	if t.Name == "" {
		return errors.New(": missing name")
	}
	at := fmt.Sprintf(" (%s.%s)", t.Schema, t.Name)
	for j, col := range t.Columns {
		if col == nil || col.Name == "" {
			return fmt.Errorf("%s.columns[%d]: missing name", at, j)
		}
	}
	for j, ix := range t.Indexes {
		if ix == nil || ix.Name == "" {
			return fmt.Errorf("%s.indexes[%d]: missing name", at, j)
		}
		for k, key := range ix.Keys {
			if key.Name == "" {
				return fmt.Errorf("%s.indexes[%d] (%s).keys[%d]: missing name", at, j, ix.Name, k)
			}
		}
		for k, inc := range ix.Includes {
			if inc == "" {
				return fmt.Errorf("%s.indexes[%d] (%s).includes[%d]: empty name", at, j, ix.Name, k)
			}
		}
	}
	return nil
}

// jsonError places a decoding error at its line and column.
func jsonError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		// Offset counts the bytes read, the offending one included.
		at := max(int(syn.Offset)-1, 0)
		if strings.Contains(syn.Error(), "unexpected end") {
			at = len(data)
		}
		line, col := newPositions(string(data)).lineCol(at)
		return fmt.Errorf("%s:%d:%d: invalid JSON: %s", path, line, col, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		line, col := newPositions(string(data)).lineCol(valueStart(data, int(typ.Offset)))
		field := typ.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Errorf("%s:%d:%d: %s: expected %s, found JSON %s", path, line, col, field, typ.Type, typ.Value)
	}
	return fmt.Errorf("%s: invalid JSON: %w", path, err)
}

// valueStart returns where the JSON value that ends at or just after off
// begins: encoding/json places a type error after a string or literal and
// after the opening bracket of an array or object.
func valueStart(data []byte, off int) int {
	if off <= 0 || off > len(data) {
		return min(max(off, 0), len(data))
	}
	switch data[off-1] {
	case '[', '{':
		return off - 1
	case '"':
		for i := off - 2; i >= 0; i-- {
			if data[i] != '"' {
				continue
			}
			escapes := 0
			for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
				escapes++
			}
			if escapes%2 == 0 {
				return i
			}
		}
		return 0
	}
	i := off
	for i > 0 && strings.IndexByte("0123456789+-.eEtrufalsn", data[i-1]) >= 0 {
		i--
	}
	return i
}

// versionPosition finds the line and column of the planlint_catalog
// value, or 1:1.
func versionPosition(data []byte) (line, col int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 1, 1
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		if key == "planlint_catalog" {
			off := int(dec.InputOffset())
			for off < len(data) && (data[off] == ':' || data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n') {
				off++
			}
			return newPositions(string(data)).lineCol(off)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return 1, 1
}
