package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/text/encoding/unicode"
)

// Diagnostic is a problem in a script: where it is and what was expected.
type Diagnostic struct {
	File    string
	Line    int // 1-based
	Column  int // 1-based, in characters
	Message string
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Message)
}

// ParseScript reads the tables and indexes a T-SQL script creates:
// CREATE TABLE (temporary tables too), CREATE INDEX (rowstore and
// columnstore), ALTER TABLE ... ADD columns and constraints, ALTER TABLE
// ... ALTER COLUMN and ALTER INDEX ... DISABLE | REBUILD. Other statements
// are skipped, as are the bodies of procedures, functions, triggers and
// views. A malformed CREATE TABLE, CREATE INDEX or ALTER TABLE gives a
// Diagnostic and contributes nothing; parsing goes on with the next
// statement. A filter that does not parse is kept in FilterDefinition with
// FilterError set. The error is only for reading r.
//
// Conventions: the default schema is dbo; temporary tables (#Work) belong
// to tempdb; a PRIMARY KEY without CLUSTERED or NONCLUSTERED is clustered
// unless the table has another clustered index; unnamed PRIMARY KEY and
// UNIQUE constraints are named PK__Table and UQ__Table__Col1_Col2 (SQL
// Server appends a hash instead; FindIndex matches both); a later CREATE
// TABLE or CREATE INDEX of the same name replaces the earlier one; DROP
// statements are ignored. The script may be UTF-8 or, with a byte-order
// mark, UTF-16.
func ParseScript(name string, r io.Reader) (*Catalog, []Diagnostic, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	text, err := decodeText(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	cat, diags := parseText(name, text)
	return cat, diags, nil
}

// parseText parses a decoded script.
func parseText(name, text string) (*Catalog, []Diagnostic) {
	p := &scriptParser{
		file:   name,
		lx:     newLexer(text, true),
		posns:  newPositions(text),
		cat:    &Catalog{Source: name},
		tables: map[string]*Table{},
		lines:  map[*Table]int{},
	}
	p.run()
	return p.cat, p.diags
}

// decodeText returns the script as UTF-8, decoding UTF-16 when a
// byte-order mark says so and dropping a UTF-8 byte-order mark.
func decodeText(data []byte) (string, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		dec := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewDecoder()
		out, err := dec.Bytes(data)
		if err != nil {
			return "", fmt.Errorf("decoding UTF-16: %w", err)
		}
		return string(out), nil
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return string(data[3:]), nil
	}
	return string(data), nil
}

type scriptParser struct {
	file string
	// The tokens are read as the parser needs them: toks holds tokens
	// base ... base+len(toks)-1, those before the current statement are
	// released, so that a script of any size costs memory in proportion to
	// its longest statement, not to its length.
	lx     *lexer
	toks   []token
	base   int
	pos    int
	posns  *positions
	cat    *Catalog
	diags  []Diagnostic
	tables map[string]*Table // by tableKey
	// indexNames and columnNames find indexes and columns of large tables
	// by name (see indexNamed and columnNamed).
	indexNames  map[*Table]*nameIndex[*Index]
	columnNames map[*Table]*nameIndex[*Column]
	lines       map[*Table]int // line of the CREATE TABLE that defined a table's columns
}

// scriptError is a diagnostic not yet placed.
type scriptError struct {
	tok token
	msg string
}

func (e *scriptError) Error() string { return e.msg }

// has reports whether token i exists, reading up to it.
func (p *scriptParser) has(i int) bool {
	for i >= p.base+len(p.toks) && !p.lx.done {
		p.toks = append(p.toks, p.lx.next())
	}
	return i < p.base+len(p.toks)
}

// tok returns token i, or the last one (tokEOF or tokError) past the end.
func (p *scriptParser) tok(i int) token {
	if i < p.base {
		panic("catalog: token read after its release")
	}
	if !p.has(i) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[i-p.base]
}

// span returns tokens i ... j-1, all read already.
func (p *scriptParser) span(i, j int) []token { return p.toks[i-p.base : j-p.base] }

// releaseMin is the fewest tokens release drops at once, with at least
// half the buffer (the copy stays linear overall); the package's tests set
// it to 1, so that reading a released token fails every test that does.
var releaseMin = 1024

// release drops the tokens before i, which will not be read again.
func (p *scriptParser) release(i int) {
	n := i - p.base
	if n < releaseMin || n < len(p.toks)/2 {
		return
	}
	p.toks = p.toks[:copy(p.toks, p.toks[n:])]
	p.base = i
}

func (p *scriptParser) cur() token { return p.tok(p.pos) }

func (p *scriptParser) peek(ahead int) token { return p.tok(p.pos + ahead) }

func (p *scriptParser) advance() token {
	t := p.tok(p.pos)
	if p.has(p.pos + 1) {
		p.pos++
	}
	return t
}

// accept consumes the keyword kw if it is next.
func (p *scriptParser) accept(kw string) bool {
	if p.cur().is(kw) {
		p.advance()
		return true
	}
	return false
}

func (p *scriptParser) acceptPunct(s string) bool {
	if p.cur().isPunct(s) {
		p.advance()
		return true
	}
	return false
}

// expected reports that the current token is not what the statement
// needs.
func (p *scriptParser) expected(what, expectation string) error {
	t := p.cur()
	return &scriptError{tok: t, msg: fmt.Sprintf("%s: expected %s, found %s", what, expectation, describe(t))}
}

func (p *scriptParser) errorAt(t token, format string, args ...any) error {
	return &scriptError{tok: t, msg: fmt.Sprintf(format, args...)}
}

func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "the end of the script"
	case tokGo:
		return "GO"
	case tokError:
		return t.text
	}
	return fmt.Sprintf("%q", clip(t.text))
}

func (p *scriptParser) diag(t token, msg string) {
	line, col := p.posns.lineCol(t.pos)
	p.diags = append(p.diags, Diagnostic{File: p.file, Line: line, Column: col, Message: msg})
}

func (p *scriptParser) lineOf(t token) int {
	line, _ := p.posns.lineCol(t.pos)
	return line
}

func (p *scriptParser) run() {
	for {
		p.release(p.pos)
		t := p.cur()
		switch {
		case t.kind == tokEOF:
			return
		case t.kind == tokError:
			p.diag(t, t.text)
			return
		case t.is("CREATE"):
			p.statement(p.parseCreate)
		case t.is("ALTER"):
			p.statement(p.parseAlter)
		default:
			p.advance()
		}
	}
}

// statement runs one statement parser and records its error. Scanning
// resumes at the offending token, skipping to the next statement.
func (p *scriptParser) statement(parse func() error) {
	start := p.pos
	if err := parse(); err != nil {
		var se *scriptError
		if !errors.As(err, &se) {
			se = &scriptError{tok: p.cur(), msg: err.Error()}
		}
		if se.tok.kind != tokError { // reported once by run
			p.diag(se.tok, se.msg)
		}
	}
	if p.pos == start {
		p.advance()
	}
}

// skipBatch skips to the next GO: a procedure, function, trigger or view
// body runs to the end of its batch.
func (p *scriptParser) skipBatch() {
	for t := p.cur(); t.kind != tokGo && t.kind != tokEOF && t.kind != tokError; t = p.cur() {
		p.advance()
	}
}

func isModuleKeyword(t token) bool {
	return t.is("PROCEDURE") || t.is("PROC") || t.is("FUNCTION") || t.is("TRIGGER") || t.is("VIEW")
}

func (p *scriptParser) parseCreate() error {
	p.advance() // CREATE
	if p.cur().is("OR") && p.peek(1).is("ALTER") {
		p.pos += 2
	}
	t := p.cur()
	switch {
	case t.is("TABLE"):
		return p.parseCreateTable()
	case isModuleKeyword(t):
		p.skipBatch()
	case t.is("UNIQUE") || t.is("CLUSTERED") || t.is("NONCLUSTERED") || t.is("COLUMNSTORE") || t.is("INDEX"):
		return p.parseCreateIndex()
	}
	// Other CREATE statements (SCHEMA, STATISTICS, XML INDEX, ...) are
	// skipped.
	return nil
}

// objectName is a parsed [db.][schema.]name.
type objectName struct {
	database, schema, name string
}

func (o objectName) String() string {
	return o.schema + "." + o.name
}

// parseObjectName parses a one- to three-part name (db..name included).
// The schema defaults to dbo, and temporary tables live in tempdb.
func (p *scriptParser) parseObjectName(what, expectation string) (objectName, error) {
	first := p.cur()
	parts := []string{""}
	expectName := true
	for {
		t := p.cur()
		if expectName && t.isName() {
			parts[len(parts)-1] = t.value
			expectName = false
		} else if t.isPunct(".") {
			parts = append(parts, "")
			expectName = true
		} else {
			break
		}
		p.advance()
	}
	if parts[len(parts)-1] == "" {
		return objectName{}, p.expected(what, expectation)
	}
	if len(parts) > 3 {
		return objectName{}, p.errorAt(first, "%s: a name has at most three parts (database.schema.name)", what)
	}
	var o objectName
	o.name = parts[len(parts)-1]
	if len(parts) >= 2 {
		o.schema = parts[len(parts)-2]
	}
	if len(parts) == 3 {
		o.database = parts[0]
	}
	if o.schema == "" {
		o.schema = "dbo"
	}
	if strings.HasPrefix(o.name, "#") {
		o.database = "tempdb"
	}
	return o, nil
}

func tableKey(o objectName) string {
	return strings.ToLower(o.database) + "\x00" + strings.ToLower(o.schema) + "\x00" + strings.ToLower(o.name)
}

// table returns the table named o, or a new table with no known columns
// when the script has not created it; register adds a new one.
func (p *scriptParser) table(o objectName) *Table {
	if t, ok := p.tables[tableKey(o)]; ok {
		return t
	}
	return &Table{Database: o.database, Schema: o.schema, Name: o.name}
}

func (p *scriptParser) register(o objectName, t *Table) {
	if _, ok := p.tables[tableKey(o)]; ok {
		return
	}
	p.tables[tableKey(o)] = t
	p.cat.Tables = append(p.cat.Tables, t)
}

// parseNameList parses ( name [ASC|DESC], ... ), noting in spec where
// each name is written.
func (p *scriptParser) parseNameList(what, listName string, orderAllowed bool, spec *indexSpec) ([]IndexColumn, error) {
	if !p.acceptPunct("(") {
		return nil, p.expected(what, "( and the "+listName)
	}
	var cols []IndexColumn
	for {
		t := p.cur()
		if !t.isName() {
			return nil, p.expected(what, "a column name in the "+listName)
		}
		p.advance()
		spec.note(t)
		c := IndexColumn{Name: t.value}
		if orderAllowed {
			if p.accept("DESC") {
				c.Descending = true
			} else {
				p.accept("ASC")
			}
		}
		cols = append(cols, c)
		if p.acceptPunct(")") {
			return cols, nil
		}
		if !p.acceptPunct(",") {
			return nil, p.expected(what, ", or ) in the "+listName)
		}
	}
}

func names(cols []IndexColumn) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// skipParens skips a balanced parenthesised group starting at "(".
func (p *scriptParser) skipParens(what string) error {
	open := p.cur()
	if !open.isPunct("(") {
		return p.expected(what, "(")
	}
	depth := 0
	for {
		t := p.cur()
		switch {
		case t.kind == tokEOF || t.kind == tokGo || t.kind == tokError:
			return p.errorAt(t, "%s: the ( at line %d is not closed", what, p.lineOf(open))
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		}
		p.advance()
		if depth == 0 {
			return nil
		}
	}
}

// indexSpec collects an index definition while it is parsed.
type indexSpec struct {
	ix           *Index
	dropExisting bool
	columnstore  bool
	at           token          // where the definition starts, for messages
	tokens       []token        // where each column is first named
	written      map[string]int // for many columns: lower-case name -> index in tokens
}

func (s *indexSpec) note(t token) {
	if s.find(t.value) < 0 {
		if len(s.tokens) == 16 { // from here on, a map finds a name without a scan
			s.written = make(map[string]int, 32)
			for i, w := range s.tokens {
				s.written[strings.ToLower(w.value)] = i
			}
		}
		if s.written != nil {
			s.written[strings.ToLower(t.value)] = len(s.tokens)
		}
		if s.tokens == nil {
			s.tokens = make([]token, 0, 4) // keys and filter columns are few
		}
		s.tokens = append(s.tokens, t)
	}
}

// find returns the index in tokens of the first token naming column
// (compared in lower case), or -1.
func (s *indexSpec) find(column string) int {
	if s.written != nil {
		if i, ok := s.written[strings.ToLower(column)]; ok {
			return i
		}
		return -1
	}
	for i, w := range s.tokens {
		if lowerEqual(w.value, column) {
			return i
		}
	}
	return -1
}

// lowerEqual reports strings.ToLower(a) == strings.ToLower(b), without
// allocating for ASCII names.
func lowerEqual(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return strings.EqualFold(a, b) // the same for ASCII
	}
	// not EqualFold, which also matches U+017F with s: the map keys are
	// ToLower's
	la, lb := strings.ToLower(a), strings.ToLower(b)
	return la == lb
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// tokenOf returns where column is named in the definition.
func (s *indexSpec) tokenOf(column string) token {
	if i := s.find(column); i >= 0 {
		return s.tokens[i]
	}
	return s.at
}

// parseClustering reads [CLUSTERED | NONCLUSTERED] [HASH] [COLUMNSTORE]
// and returns the sys.indexes type description, or "" when no clustering
// was written.
func (p *scriptParser) parseClustering() (typ string, columnstore bool) {
	switch {
	case p.accept("CLUSTERED"):
		typ = "CLUSTERED"
	case p.accept("NONCLUSTERED"):
		typ = "NONCLUSTERED"
	}
	if p.accept("HASH") {
		typ = "NONCLUSTERED HASH"
	}
	if p.accept("COLUMNSTORE") {
		if typ == "" {
			typ = "NONCLUSTERED"
		}
		typ += " COLUMNSTORE"
		columnstore = true
	}
	return typ, columnstore
}

// parseCreateIndex parses CREATE [UNIQUE] [CLUSTERED|NONCLUSTERED]
// [COLUMNSTORE] INDEX name ON table (...) [INCLUDE (...)] [WHERE ...]
// [WITH (...)] [ON ...].
func (p *scriptParser) parseCreateIndex() error {
	start := p.cur()
	unique := p.accept("UNIQUE")
	typ, columnstore := p.parseClustering()
	if !p.accept("INDEX") {
		return p.expected("CREATE INDEX", "INDEX")
	}
	nameTok := p.cur()
	if !nameTok.isName() {
		return p.expected("CREATE INDEX", "the index name")
	}
	p.advance()
	what := "CREATE INDEX " + nameTok.value
	if !p.accept("ON") {
		return p.expected(what, "ON and the table name")
	}
	o, err := p.parseObjectName(what, "the table name after ON")
	if err != nil {
		return err
	}
	if typ == "" {
		typ = "NONCLUSTERED"
	}
	spec := &indexSpec{ix: &Index{Name: nameTok.value, Type: typ, Unique: unique}, columnstore: columnstore, at: start}
	if err := p.parseIndexBody(what, spec, ""); err != nil {
		return err
	}
	t := p.table(o)
	if err := p.checkColumns(what, t, spec); err != nil {
		return err
	}
	if err := p.addIndex(what, t, spec, true); err != nil {
		return err
	}
	p.register(o, t)
	return nil
}

// parseIndexBody parses an index's column list and clauses. column is set
// for an index declared on a column, which has no column list.
func (p *scriptParser) parseIndexBody(what string, spec *indexSpec, column string) error {
	ix := spec.ix
	switch {
	case column != "":
		ix.Keys = []IndexColumn{{Name: column}}
	case ix.Type == "CLUSTERED COLUMNSTORE":
		// Covers every column; no list.
	case spec.columnstore:
		cols, err := p.parseNameList(what, "columns", false, spec)
		if err != nil {
			return err
		}
		ix.Includes = names(cols)
	default:
		cols, err := p.parseNameList(what, "key columns", true, spec)
		if err != nil {
			return err
		}
		ix.Keys = cols
	}
	return p.parseIndexClauses(what, spec, true)
}

// parseIndexClauses parses the clauses after an index's columns. For a
// constraint (full false) only WITH and ON are allowed.
func (p *scriptParser) parseIndexClauses(what string, spec *indexSpec, full bool) error {
	ix := spec.ix
	for {
		t := p.cur()
		switch {
		case full && t.is("INCLUDE"):
			if ix.Includes != nil && !spec.columnstore {
				return p.errorAt(t, "%s: INCLUDE appears twice", what)
			}
			p.advance()
			cols, err := p.parseNameList(what, "INCLUDE columns", false, spec)
			if err != nil {
				return err
			}
			ix.Includes = append(ix.Includes, names(cols)...)
		case full && t.is("WHERE"):
			if ix.FilterDefinition != "" {
				return p.errorAt(t, "%s: WHERE appears twice", what)
			}
			p.advance()
			if err := p.parseWhere(what, spec); err != nil {
				return err
			}
		case full && t.is("ORDER") && spec.columnstore:
			p.advance()
			if err := p.skipParens(what); err != nil {
				return err
			}
		case t.is("WITH"):
			p.advance()
			if err := p.parseIndexOptions(what, spec); err != nil {
				return err
			}
		case t.is("ON"):
			p.advance()
			if err := p.parseStorage(what); err != nil {
				return err
			}
		case t.is("FILESTREAM_ON") || t.is("TEXTIMAGE_ON"):
			p.advance()
			if err := p.parseStorage(what); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// parseWhere reads a filter up to the clause or statement after it and
// parses it.
func (p *scriptParser) parseWhere(what string, spec *indexSpec) error {
	start := p.pos
	depth := 0
	for {
		t := p.cur()
		if t.kind == tokEOF || t.kind == tokError || t.kind == tokGo || t.isPunct(";") {
			break
		}
		if depth == 0 && (t.isPunct(",") || t.isPunct(")") ||
			t.is("WITH") || t.is("ON") || t.is("INCLUDE") || t.is("FILESTREAM_ON") || startsStatement(t)) {
			break
		}
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		}
		p.advance()
	}
	if p.pos == start {
		return p.expected(what, "a filter predicate after WHERE")
	}
	ix := spec.ix
	if strings.HasPrefix(ix.Type, "CLUSTERED") {
		return p.errorAt(p.tok(start), "%s: a clustered index cannot be filtered", what)
	}
	ix.FilterDefinition = joinTokens(p.span(start, p.pos))
	for _, t := range p.span(start, p.pos) {
		if t.kind == tokIdent || t.kind == tokQuoted {
			spec.note(t)
		}
	}
	f, err := ParseFilter(ix.FilterDefinition)
	if err != nil {
		ix.FilterError = err.Error()
		return nil
	}
	ix.Filter = f
	return nil
}

// parseIndexOptions parses WITH (option = value, ...) or the old
// WITH option [= value], ... form, noting DROP_EXISTING = ON.
func (p *scriptParser) parseIndexOptions(what string, spec *indexSpec) error {
	if p.cur().isPunct("(") {
		open := p.pos
		if err := p.skipParens(what); err != nil {
			return err
		}
		inner := p.span(open, p.pos)
		for i := 0; i+2 < len(inner); i++ {
			if inner[i].is("DROP_EXISTING") && inner[i+1].isPunct("=") && inner[i+2].is("ON") {
				spec.dropExisting = true
			}
		}
		return nil
	}
	for {
		t := p.cur()
		if t.kind != tokIdent || startsStatement(t) {
			return p.expected(what, "an index option after WITH")
		}
		p.advance()
		if t.is("DROP_EXISTING") {
			spec.dropExisting = true
		}
		if p.acceptPunct("=") {
			v := p.advance()
			if t.is("DROP_EXISTING") {
				spec.dropExisting = v.is("ON")
			}
		}
		if !p.acceptPunct(",") {
			return nil
		}
	}
}

// parseStorage parses the filegroup or partition scheme after ON:
// [PRIMARY], fg, "default", ps(col).
func (p *scriptParser) parseStorage(what string) error {
	t := p.cur()
	if !(t.kind == tokIdent || t.kind == tokQuoted || t.kind == tokString) || startsStatement(t) {
		return p.expected(what, "a filegroup or partition scheme after ON")
	}
	p.advance()
	if p.cur().isPunct("(") {
		return p.skipParens(what)
	}
	return nil
}

// checkColumns reports index columns that are not in a table whose
// columns the script defined.
func (p *scriptParser) checkColumns(what string, t *Table, spec *indexSpec) error {
	line, defined := p.lines[t]
	if !defined {
		return nil
	}
	for _, c := range indexColumns(spec.ix) {
		if t.FindColumn(c) == nil {
			return p.errorAt(spec.tokenOf(c), "%s: %s is not a column of %s.%s (created at line %d)", what, c, t.Schema, t.Name, line)
		}
	}
	return nil
}

// indexColumns lists the columns an index names: keys, includes and the
// columns of its parsed filter.
func indexColumns(ix *Index) []string {
	cols := append(names(ix.Keys), ix.Includes...)
	if ix.Filter != nil {
		for _, c := range ix.Filter.Conjuncts {
			cols = append(cols, c.Column)
		}
	}
	return cols
}

// addIndex adds spec's index to t. A standalone CREATE INDEX (replace)
// replaces an index of the same name; inside a table definition the name
// must be new. A table has at most one clustered index and one primary
// key.
func (p *scriptParser) addIndex(what string, t *Table, spec *indexSpec, replace bool) error {
	ix := spec.ix
	if ix.PrimaryKey {
		for _, old := range t.Indexes {
			if old.PrimaryKey && !(replace && strings.EqualFold(old.Name, ix.Name)) {
				return p.errorAt(spec.at, "%s: %s.%s already has primary key %s", what, t.Schema, t.Name, old.Name)
			}
		}
	}
	if i := p.indexNamed(t, ix.Name); i >= 0 {
		old := t.Indexes[i]
		if !replace {
			return p.errorAt(spec.at, "%s: %s already has an index or constraint named %s", what, t.Name, ix.Name)
		}
		if cl := t.Clustered(); ix.isClustered() && cl != nil && cl != old {
			return p.errorAt(spec.at, "%s: %s.%s already has clustered index %s", what, t.Schema, t.Name, cl.Name)
		}
		t.Indexes[i] = ix
		return nil
	}
	if ix.isClustered() {
		if cl := t.Clustered(); cl != nil {
			return p.errorAt(spec.at, "%s: %s.%s already has clustered index %s", what, t.Schema, t.Name, cl.Name)
		}
	}
	t.Indexes = append(t.Indexes, ix)
	return nil
}

// indexNamed returns the position of t's first index named name (case
// insensitively), or -1. Indexes of the table change only by an append or
// by a replacement under the same name, so the map is brought up to date by
// adding the indexes appended since; a table with few indexes is scanned.
func (p *scriptParser) indexNamed(t *Table, name string) int {
	if len(t.Indexes) < 32 {
		for i, old := range t.Indexes {
			if strings.EqualFold(old.Name, name) {
				return i
			}
		}
		return -1
	}
	if p.indexNames == nil {
		p.indexNames = map[*Table]*nameIndex[*Index]{}
	}
	ni := p.indexNames[t]
	if ni == nil {
		ni = &nameIndex[*Index]{}
		p.indexNames[t] = ni
	}
	return ni.find(t.Indexes, func(ix *Index) (string, bool) { return ix.Name, true }, name)
}

// columnNamed is t.FindColumn that, on a table with many columns, does
// not scan them (see indexNamed).
func (p *scriptParser) columnNamed(t *Table, name string) *Column {
	if len(t.Columns) < 32 {
		return t.FindColumn(name)
	}
	if p.columnNames == nil {
		p.columnNames = map[*Table]*nameIndex[*Column]{}
	}
	ni := p.columnNames[t]
	if ni == nil {
		ni = &nameIndex[*Column]{}
		p.columnNames[t] = ni
	}
	name = normName(name)
	if i := ni.find(t.Columns, func(c *Column) (string, bool) {
		if c == nil {
			return "", false // FindColumn skips it
		}
		return normName(c.Name), true
	}, name); i >= 0 {
		return t.Columns[i]
	}
	return nil
}

// tableBuilder holds a table while a CREATE or ALTER TABLE is parsed, so
// that a malformed statement changes nothing.
type tableBuilder struct {
	t      *Table
	what   string
	autoPK *Index // a PRIMARY KEY with no CLUSTERED or NONCLUSTERED
	specs  []*indexSpec
}

// parseCreateTable parses CREATE TABLE name ( column and constraint
// definitions ) and whatever options follow.
func (p *scriptParser) parseCreateTable() error {
	start := p.tok(p.pos - 1)
	p.advance() // TABLE
	o, err := p.parseObjectName("CREATE TABLE", "the table name")
	if err != nil {
		return err
	}
	what := "CREATE TABLE " + o.String()
	if p.cur().is("AS") { // AS FILETABLE: no user columns
		return nil
	}
	if !p.acceptPunct("(") {
		return p.expected(what, "( and the column definitions")
	}
	tb := &tableBuilder{t: &Table{Database: o.database, Schema: o.schema, Name: o.name}, what: what}
	for {
		p.release(p.pos) // no element reads the tokens of those before it
		if err := p.parseTableElement(tb); err != nil {
			return err
		}
		if p.acceptPunct(",") {
			if p.acceptPunct(")") { // SQL Server accepts a trailing comma
				break
			}
			continue
		}
		if p.acceptPunct(")") {
			break
		}
		return p.expected(what, ", or ) after the definition")
	}
	if err := tb.finish(p); err != nil {
		return err
	}
	t := tb.t
	key := tableKey(o)
	if old, ok := p.tables[key]; ok {
		*old = *t
		t = old
	} else {
		p.tables[key] = t
		p.cat.Tables = append(p.cat.Tables, t)
	}
	p.lines[t] = p.lineOf(start)
	return nil
}

// finish resolves the clustering of an unqualified primary key, makes key
// columns NOT NULL and checks that every indexed column exists.
func (tb *tableBuilder) finish(p *scriptParser) error {
	if tb.autoPK != nil {
		tb.autoPK.Type = "CLUSTERED"
		for _, ix := range tb.t.Indexes {
			if ix != tb.autoPK && ix.isClustered() {
				tb.autoPK.Type = "NONCLUSTERED"
			}
		}
	}
	for _, spec := range tb.specs {
		for _, c := range indexColumns(spec.ix) {
			if p.columnNamed(tb.t, c) == nil && len(tb.t.Columns) > 0 {
				return p.errorAt(spec.tokenOf(c), "%s: %s is not a column of the table", tb.what, c)
			}
		}
		if spec.ix.PrimaryKey {
			for _, k := range spec.ix.Keys {
				if c := p.columnNamed(tb.t, k.Name); c != nil {
					c.Nullable = false
				}
			}
		}
	}
	return nil
}

// isConstraintStart reports whether the current token begins a table
// constraint or table-level index rather than a column.
func (p *scriptParser) isConstraintStart() bool {
	t := p.cur()
	return t.is("CONSTRAINT") || t.is("PRIMARY") || t.is("UNIQUE") || t.is("CHECK") ||
		t.is("FOREIGN") || t.is("INDEX") || (t.is("PERIOD") && p.peek(1).is("FOR"))
}

func (p *scriptParser) parseTableElement(tb *tableBuilder) error {
	if p.isConstraintStart() {
		return p.parseTableConstraint(tb)
	}
	if p.cur().isName() {
		return p.parseColumnDef(tb)
	}
	return p.expected(tb.what, "a column definition or a table constraint")
}

// parseConstraintName parses an optional CONSTRAINT name.
func (p *scriptParser) parseConstraintName(what string) (string, error) {
	if !p.accept("CONSTRAINT") {
		return "", nil
	}
	t := p.cur()
	if !t.isName() {
		return "", p.expected(what, "the constraint name after CONSTRAINT")
	}
	p.advance()
	return t.value, nil
}

// parseTableConstraint parses a table-level constraint, index or period.
func (p *scriptParser) parseTableConstraint(tb *tableBuilder) error {
	start := p.cur()
	what := tb.what
	if p.accept("PERIOD") {
		p.advance() // FOR
		if !p.accept("SYSTEM_TIME") {
			return p.expected(what, "SYSTEM_TIME after PERIOD FOR")
		}
		return p.skipParens(what)
	}
	if p.cur().is("INDEX") {
		return p.parseInlineIndex(tb, "")
	}
	name, err := p.parseConstraintName(what)
	if err != nil {
		return err
	}
	t := p.cur()
	switch {
	case t.is("PRIMARY") || t.is("UNIQUE"):
		return p.parseKeyConstraint(tb, name, "", start)
	case t.is("CHECK"):
		p.advance()
		p.skipNotForReplication()
		return p.skipParens(what)
	case t.is("FOREIGN"):
		p.advance()
		if !p.accept("KEY") {
			return p.expected(what, "KEY after FOREIGN")
		}
		if err := p.skipParens(what); err != nil {
			return err
		}
		return p.parseReferences(what)
	case t.is("DEFAULT"):
		p.advance()
		if err := p.skipDefault(what); err != nil {
			return err
		}
		if !p.accept("FOR") {
			return p.expected(what, "FOR and a column after the DEFAULT value")
		}
		if !p.cur().isName() {
			return p.expected(what, "a column name after FOR")
		}
		p.advance()
		p.skipWithValues()
		return nil
	case t.is("CONNECTION"):
		p.advance()
		return p.skipParens(what)
	}
	return p.expected(what, "PRIMARY KEY, UNIQUE, CHECK, FOREIGN KEY or DEFAULT")
}

func (p *scriptParser) skipNotForReplication() {
	if p.cur().is("NOT") && p.peek(1).is("FOR") && p.peek(2).is("REPLICATION") {
		p.pos += 3
	}
}

func (p *scriptParser) skipWithValues() {
	if p.cur().is("WITH") && p.peek(1).is("VALUES") {
		p.pos += 2
	}
}

// parseKeyConstraint parses PRIMARY KEY or UNIQUE, at table level (column
// empty: a column list follows) or on column.
func (p *scriptParser) parseKeyConstraint(tb *tableBuilder, name, column string, start token) error {
	what := tb.what
	pk := p.accept("PRIMARY")
	if pk {
		if !p.accept("KEY") {
			return p.expected(what, "KEY after PRIMARY")
		}
	} else {
		p.advance() // UNIQUE
	}
	typ, _ := p.parseClustering()
	ix := &Index{Name: name, Type: typ, Unique: true, PrimaryKey: pk}
	spec := &indexSpec{ix: ix, at: start}
	if column != "" {
		ix.Keys = []IndexColumn{{Name: column}}
	} else {
		cols, err := p.parseNameList(what, "key columns", true, spec)
		if err != nil {
			return err
		}
		ix.Keys = cols
	}
	if err := p.parseIndexClauses(what, spec, false); err != nil {
		return err
	}
	if ix.Name == "" {
		ix.Name = generatedName(tb.t, ix)
	}
	switch {
	case pk && typ == "":
		tb.autoPK = ix
	case typ == "":
		ix.Type = "NONCLUSTERED"
	}
	return tb.add(p, spec)
}

// generatedName names an unnamed PRIMARY KEY or UNIQUE constraint.
func generatedName(t *Table, ix *Index) string {
	if ix.PrimaryKey {
		return "PK__" + t.Name
	}
	base := "UQ__" + t.Name + "__" + strings.Join(names(ix.Keys), "_")
	name := base
	for n := 2; t.hasIndex(name); n++ {
		name = fmt.Sprintf("%s_%d", base, n)
	}
	return name
}

func (t *Table) hasIndex(name string) bool {
	for _, ix := range t.Indexes {
		if strings.EqualFold(ix.Name, name) {
			return true
		}
	}
	return false
}

func (tb *tableBuilder) add(p *scriptParser, spec *indexSpec) error {
	if err := p.addIndex(tb.what, tb.t, spec, false); err != nil {
		return err
	}
	tb.specs = append(tb.specs, spec)
	return nil
}

// parseInlineIndex parses INDEX name ... inside a table definition, at
// table level (column empty) or on column.
func (p *scriptParser) parseInlineIndex(tb *tableBuilder, column string) error {
	start := p.advance() // INDEX
	nameTok := p.cur()
	if !nameTok.isName() {
		return p.expected(tb.what, "the index name after INDEX")
	}
	p.advance()
	unique := p.accept("UNIQUE")
	typ, columnstore := p.parseClustering()
	if typ == "" {
		typ = "NONCLUSTERED"
	}
	spec := &indexSpec{ix: &Index{Name: nameTok.value, Type: typ, Unique: unique}, columnstore: columnstore, at: start}
	if err := p.parseIndexBody(tb.what+" INDEX "+nameTok.value, spec, column); err != nil {
		return err
	}
	return tb.add(p, spec)
}

// parseReferences parses REFERENCES table [(columns)] [ON DELETE|UPDATE
// action] [NOT FOR REPLICATION].
func (p *scriptParser) parseReferences(what string) error {
	if !p.accept("REFERENCES") {
		return p.expected(what, "REFERENCES")
	}
	if _, err := p.parseObjectName(what, "the referenced table"); err != nil {
		return err
	}
	if p.cur().isPunct("(") {
		if err := p.skipParens(what); err != nil {
			return err
		}
	}
	for {
		switch {
		case p.cur().is("ON") && (p.peek(1).is("DELETE") || p.peek(1).is("UPDATE")):
			p.pos += 2
			switch {
			case p.accept("CASCADE"):
			case p.cur().is("NO") && p.peek(1).is("ACTION"):
				p.pos += 2
			case p.cur().is("SET") && (p.peek(1).is("NULL") || p.peek(1).is("DEFAULT")):
				p.pos += 2
			default:
				return p.expected(what, "CASCADE, NO ACTION, SET NULL or SET DEFAULT")
			}
		case p.cur().is("NOT") && p.peek(1).is("FOR") && p.peek(2).is("REPLICATION"):
			p.pos += 3
		default:
			return nil
		}
	}
}

// skipDefault skips a DEFAULT value: a constant, a function call, a
// parenthesised expression or NEXT VALUE FOR sequence, with arithmetic.
func (p *scriptParser) skipDefault(what string) error {
	for {
		t := p.cur()
		switch {
		case t.isPunct("-") || t.isPunct("+") || t.isPunct("~"):
			p.advance()
			continue
		case t.isPunct("("):
			if err := p.skipParens(what); err != nil {
				return err
			}
		case t.is("NEXT") && p.peek(1).is("VALUE") && p.peek(2).is("FOR"):
			p.pos += 3
			if _, err := p.parseObjectName(what, "a sequence name"); err != nil {
				return err
			}
		case t.kind == tokIdent && p.peek(1).isPunct("("):
			p.advance()
			if err := p.skipParens(what); err != nil {
				return err
			}
		case t.kind == tokNumber || t.kind == tokString || t.kind == tokBinary ||
			t.kind == tokIdent && !startsStatement(t) && !isColumnOption(t):
			p.advance()
		default:
			return p.expected(what, "a value after DEFAULT")
		}
		if n := p.cur(); n.kind == tokPunct && len(n.text) == 1 && strings.Contains("+-*/%&|^", n.text) {
			p.advance()
			continue
		}
		return nil
	}
}

// isColumnOption reports keywords that follow a column's DEFAULT value.
func isColumnOption(t token) bool {
	for _, kw := range []string{"NOT", "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "REFERENCES", "FOREIGN",
		"IDENTITY", "COLLATE", "WITH", "FOR", "INDEX"} {
		if t.is(kw) {
			return true
		}
	}
	return false
}

// parseColumnDef parses name type [options] or name AS expression
// [PERSISTED] [options].
func (p *scriptParser) parseColumnDef(tb *tableBuilder) error {
	nameTok := p.advance()
	col := &Column{Name: nameTok.value, Nullable: true}
	what := tb.what
	if p.columnNamed(tb.t, col.Name) != nil {
		return p.errorAt(nameTok, "%s: column %s is defined twice", what, col.Name)
	}
	if p.accept("AS") {
		col.Computed = true
		if err := p.skipExpression(what); err != nil {
			return err
		}
	} else {
		typ, err := p.parseDataType(what, col.Name)
		if err != nil {
			return err
		}
		col.Type = typ
		col.MaxLength = typeMaxLength(typ)
	}
	// Columns are nullable by default (ANSI_NULL_DFLT_ON, the client
	// default); IDENTITY and PRIMARY KEY columns are not.
	tb.t.Columns = append(tb.t.Columns, col)
	return p.parseColumnOptions(tb, col)
}

// skipExpression skips a computed column's expression, up to the
// options after it or the end of the column definition.
func (p *scriptParser) skipExpression(what string) error {
	start := p.pos
	depth, cases := 0, 0
	for {
		t := p.cur()
		if t.kind == tokEOF || t.kind == tokGo || t.kind == tokError || t.isPunct(";") {
			break
		}
		if depth == 0 {
			if t.isPunct(",") || t.isPunct(")") || t.is("PERSISTED") || t.is("CONSTRAINT") ||
				t.is("PRIMARY") || t.is("UNIQUE") || t.is("END") && cases == 0 || startsStatement(t) && !t.is("END") {
				break
			}
		}
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
		case t.is("CASE"):
			cases++
		case t.is("END"):
			cases--
		}
		p.advance()
	}
	if p.pos == start {
		return p.expected(what, "an expression after AS")
	}
	return nil
}

// multiWordTypes are the type names written as several words.
var multiWordTypes = [][]string{
	{"national", "character", "varying"},
	{"national", "char", "varying"},
	{"national", "character"},
	{"national", "char"},
	{"national", "text"},
	{"character", "varying"},
	{"char", "varying"},
	{"binary", "varying"},
	{"double", "precision"},
}

// parseDataType parses a type with its arguments: int, nvarchar(max),
// [decimal](18, 2), dbo.MyType, double precision, xml(CONTENT dbo.S).
func (p *scriptParser) parseDataType(what, column string) (string, error) {
	t := p.cur()
	if t.kind != tokIdent && t.kind != tokQuoted || t.kind == tokIdent && (startsStatement(t) || isColumnOption(t)) {
		return "", p.expected(what, "the data type of column "+column)
	}
	base := ""
	for _, words := range multiWordTypes {
		if p.matchWords(words) {
			base = strings.Join(words, " ")
			p.pos += len(words)
			break
		}
	}
	if base == "" {
		// A type name: type, [type] or schema.type.
		var parts []string
		for {
			n := p.cur()
			if n.kind != tokIdent && n.kind != tokQuoted {
				return "", p.expected(what, "the data type of column "+column)
			}
			parts = append(parts, n.value)
			p.advance()
			if !p.acceptPunct(".") {
				break
			}
		}
		base = strings.Join(parts, ".")
	}
	var args []string
	if p.cur().isPunct("(") {
		p.advance()
		var arg []token
		for {
			a := p.cur()
			// Arguments are numbers or MAX; only xml takes a schema
			// collection (CONTENT dbo.S).
			if len(arg) == 1 && !strings.EqualFold(base, "xml") && !a.isPunct(",") && !a.isPunct(")") {
				return "", p.expected(what, ", or ) in the type of column "+column)
			}
			switch {
			case a.isPunct(",") || a.isPunct(")"):
				if len(arg) == 0 {
					return "", p.expected(what, "a type argument for column "+column)
				}
				args = append(args, joinTokens(arg))
				arg = nil
				p.advance()
				if a.isPunct(")") {
					return canonicalType(base, args), nil
				}
				continue
			case a.kind == tokEOF || a.kind == tokGo || a.kind == tokError || a.isPunct("(") || a.isPunct(";"):
				return "", p.expected(what, ", or ) in the type of column "+column)
			}
			arg = append(arg, a)
			p.advance()
		}
	}
	return canonicalType(base, args), nil
}

func (p *scriptParser) matchWords(words []string) bool {
	for i, w := range words {
		if !p.peek(i).is(w) {
			return false
		}
	}
	return true
}

// parseColumnOptions parses what follows a column's type: nullability,
// IDENTITY, DEFAULT, constraints, an index and storage attributes.
func (p *scriptParser) parseColumnOptions(tb *tableBuilder, col *Column) error {
	what := tb.what
	explicitNull := false
	for {
		start := p.cur()
		name, err := p.parseConstraintName(what)
		if err != nil {
			return err
		}
		t := p.cur()
		if name != "" && !(t.is("PRIMARY") || t.is("UNIQUE") || t.is("CHECK") || t.is("FOREIGN") ||
			t.is("REFERENCES") || t.is("DEFAULT") || t.is("NULL") || t.is("NOT")) {
			return p.expected(what, "PRIMARY KEY, UNIQUE, CHECK, REFERENCES or DEFAULT after CONSTRAINT "+name)
		}
		switch {
		case t.is("NULL"):
			p.advance()
			col.Nullable, explicitNull = true, true
		case t.is("NOT") && p.peek(1).is("NULL"):
			p.pos += 2
			col.Nullable, explicitNull = false, true
		case t.is("NOT") && p.peek(1).is("FOR") && p.peek(2).is("REPLICATION"):
			p.pos += 3
		case t.is("IDENTITY"):
			p.advance()
			if p.cur().isPunct("(") {
				if err := p.skipParens(what); err != nil {
					return err
				}
			}
			if !explicitNull {
				col.Nullable = false
			}
		case t.is("DEFAULT"):
			p.advance()
			if err := p.skipDefault(what); err != nil {
				return err
			}
			p.skipWithValues()
		case t.is("PRIMARY") || t.is("UNIQUE"):
			if err := p.parseKeyConstraint(tb, name, col.Name, start); err != nil {
				return err
			}
		case t.is("CHECK"):
			p.advance()
			p.skipNotForReplication()
			if err := p.skipParens(what); err != nil {
				return err
			}
		case t.is("FOREIGN") || t.is("REFERENCES"):
			if p.accept("FOREIGN") && !p.accept("KEY") {
				return p.expected(what, "KEY after FOREIGN")
			}
			if err := p.parseReferences(what); err != nil {
				return err
			}
		case t.is("INDEX"):
			if err := p.parseInlineIndex(tb, col.Name); err != nil {
				return err
			}
		case t.is("COLLATE"):
			p.advance()
			if p.cur().kind != tokIdent {
				return p.expected(what, "a collation name after COLLATE")
			}
			p.advance()
		case t.is("GENERATED"):
			p.advance()
			for p.accept("ALWAYS") || p.accept("AS") || p.accept("ROW") || p.accept("TRANSACTION_ID") ||
				p.accept("SEQUENCE_NUMBER") || p.accept("START") || p.accept("END") {
			}
		case t.is("MASKED") || t.is("ENCRYPTED"):
			p.advance()
			if !p.accept("WITH") {
				return p.expected(what, "WITH after "+strings.ToUpper(t.text))
			}
			if err := p.skipParens(what); err != nil {
				return err
			}
		case t.is("COLUMN_SET"):
			p.advance()
			if !(p.accept("FOR") && p.accept("ALL_SPARSE_COLUMNS")) {
				return p.expected(what, "FOR ALL_SPARSE_COLUMNS after COLUMN_SET")
			}
		case t.is("PERSISTED") || t.is("SPARSE") || t.is("ROWGUIDCOL") || t.is("FILESTREAM") || t.is("HIDDEN"):
			p.advance()
		default:
			return nil
		}
	}
}

func (p *scriptParser) parseAlter() error {
	p.advance() // ALTER
	t := p.cur()
	switch {
	case t.is("TABLE"):
		return p.parseAlterTable()
	case t.is("INDEX"):
		return p.parseAlterIndex()
	case isModuleKeyword(t):
		p.skipBatch()
	}
	return nil
}

// parseAlterTable parses ALTER TABLE name ADD ... and ALTER TABLE name
// ALTER COLUMN ...; other forms are skipped.
func (p *scriptParser) parseAlterTable() error {
	p.advance() // TABLE
	o, err := p.parseObjectName("ALTER TABLE", "the table name")
	if err != nil {
		return err
	}
	what := "ALTER TABLE " + o.String()
	if p.cur().is("WITH") && (p.peek(1).is("CHECK") || p.peek(1).is("NOCHECK")) {
		p.pos += 2
	}
	switch {
	case p.cur().is("ADD"):
		p.advance()
		orig := p.table(o)
		tb := &tableBuilder{t: cloneTable(orig), what: what}
		for {
			if err := p.parseTableElement(tb); err != nil {
				return err
			}
			if !p.acceptPunct(",") {
				break
			}
		}
		if err := tb.finish(p); err != nil {
			return err
		}
		*orig = *tb.t
		p.register(o, orig)
	case p.cur().is("ALTER") && p.peek(1).is("COLUMN"):
		p.pos += 2
		return p.parseAlterColumn(o, what)
	}
	return nil
}

// parseAlterColumn parses ALTER COLUMN name type [COLLATE c] [NULL | NOT
// NULL] and updates the column.
func (p *scriptParser) parseAlterColumn(o objectName, what string) error {
	nameTok := p.cur()
	if !nameTok.isName() {
		return p.expected(what, "a column name after ALTER COLUMN")
	}
	p.advance()
	if p.cur().is("ADD") || p.cur().is("DROP") { // ADD | DROP ROWGUIDCOL, PERSISTED, ...
		return nil
	}
	typ, err := p.parseDataType(what, nameTok.value)
	if err != nil {
		return err
	}
	nullable := true
	if p.accept("COLLATE") {
		p.advance()
	}
	switch {
	case p.accept("NULL"):
	case p.cur().is("NOT") && p.peek(1).is("NULL"):
		p.pos += 2
		nullable = false
	}
	t := p.table(o)
	c := t.FindColumn(nameTok.value)
	if c == nil {
		if line, defined := p.lines[t]; defined {
			return p.errorAt(nameTok, "%s: %s is not a column of the table (created at line %d)", what, nameTok.value, line)
		}
		c = &Column{Name: nameTok.value}
		t.Columns = append(t.Columns, c)
	}
	c.Type, c.MaxLength, c.Nullable = typ, typeMaxLength(typ), nullable
	p.register(o, t)
	return nil
}

// parseAlterIndex applies ALTER INDEX name|ALL ON table DISABLE or
// REBUILD to indexes the script created.
func (p *scriptParser) parseAlterIndex() error {
	p.advance() // INDEX
	nameTok := p.cur()
	if !nameTok.isName() && !nameTok.is("ALL") {
		return nil
	}
	p.advance()
	if !p.accept("ON") {
		return nil
	}
	o, err := p.parseObjectName("ALTER INDEX", "the table name after ON")
	if err != nil {
		return err
	}
	t, ok := p.tables[tableKey(o)]
	if !ok {
		return nil
	}
	var disabled bool
	switch {
	case p.accept("DISABLE"):
		disabled = true
	case p.accept("REBUILD"):
	default:
		return nil
	}
	for _, ix := range t.Indexes {
		if nameTok.is("ALL") || strings.EqualFold(ix.Name, nameTok.value) {
			ix.Disabled = disabled
		}
	}
	return nil
}

// cloneTable copies t deeply enough that changes to the copy's columns and
// index list leave t alone.
func cloneTable(t *Table) *Table {
	c := *t
	c.Columns = make([]*Column, len(t.Columns))
	for i, col := range t.Columns {
		cc := *col
		c.Columns[i] = &cc
	}
	c.Indexes = append([]*Index(nil), t.Indexes...)
	return &c
}
