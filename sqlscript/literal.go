package sqlscript

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// LiteralKind classifies a literal value.
type LiteralKind int

// Literal kinds.
const (
	LiteralNull     LiteralKind = iota // NULL
	LiteralInteger                     // 42, -7
	LiteralDecimal                     // 12.50
	LiteralFloat                       // 1e5, 2.5E-3
	LiteralMoney                       // $12.5
	LiteralString                      // 'text'
	LiteralNString                     // N'text'
	LiteralBinary                      // 0x1F2E
	LiteralVariable                    // @x, only as the value of an OUTPUT argument
)

var literalKindNames = [...]string{
	LiteralNull: "NULL", LiteralInteger: "integer", LiteralDecimal: "decimal", LiteralFloat: "float",
	LiteralMoney: "money", LiteralString: "string", LiteralNString: "Unicode string",
	LiteralBinary: "binary", LiteralVariable: "variable",
}

func (k LiteralKind) String() string {
	if k >= 0 && int(k) < len(literalKindNames) {
		return literalKindNames[k]
	}
	return fmt.Sprintf("LiteralKind(%d)", int(k))
}

// Literal is a constant written in T-SQL. Text is exactly as written
// (including quotes, N prefix and sign).
type Literal struct {
	Text string
	Kind LiteralKind
}

// String returns the literal as written.
func (l Literal) String() string { return l.Text }

// Str returns the content of a string literal with doubled quotes collapsed;
// for other kinds it returns Text.
func (l Literal) Str() string {
	switch l.Kind {
	case LiteralString, LiteralNString:
		t := token{Kind: tokString, Text: l.Text}
		if l.Kind == LiteralNString {
			t.Kind = tokNString
		}
		return unquote(t)
	}
	return l.Text
}

func (l Literal) numeric() bool {
	switch l.Kind {
	case LiteralInteger, LiteralDecimal, LiteralFloat, LiteralMoney:
		return true
	}
	return false
}

// rat returns the exact value of a numeric literal.
func (l Literal) rat() (*big.Rat, bool) {
	s := strings.Join(strings.Fields(l.Text), "")
	neg := false
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		neg = s[0] == '-'
		s = s[1:]
	}
	if l.Kind == LiteralMoney {
		_, n := utf8.DecodeRuneInString(s) // currency symbol
		s = s[n:]
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			neg = neg != (s[0] == '-')
			s = s[1:]
		}
	}
	if !isDecimalNumber(s) {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// keep SetString away from huge exponents: beyond ±400 the value
		// overflows every SQL type or rounds to zero
		if exp, err := strconv.Atoi(s[i+1:]); err != nil || exp > 400 || exp < -400 {
			if err == nil && exp < 0 {
				return new(big.Rat), true
			}
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, false
	}
	if neg {
		r.Neg(r)
	}
	return r, true
}

// isDecimalNumber reports whether s is digits with an optional fraction and
// exponent: 12, 12., .5, 1.5e-3.
func isDecimalNumber(s string) bool {
	i, digits := 0, 0
	for ; i < len(s) && isDigit(rune(s[i])); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(rune(s[i])); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for ; i < len(s) && isDigit(rune(s[i])); i++ {
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}

// literalFromTokens builds a literal from a value written as tokens: an
// optional sign followed by a number or money token, a string, a binary
// literal, NULL or a variable. It reports false for anything else.
func literalFromTokens(toks []token, src string) (Literal, bool) {
	if len(toks) == 0 {
		return Literal{}, false
	}
	if len(toks) == 2 && (toks[0].IsOp("-") || toks[0].IsOp("+")) && (toks[1].Kind == tokNumber || toks[1].Kind == tokMoney) {
		l, _ := literalFromTokens(toks[1:], src)
		l.Text = src[toks[0].Start:toks[1].End]
		return l, true
	}
	if len(toks) != 1 || toks[0].Unterminated {
		return Literal{}, false
	}
	t := toks[0]
	switch t.Kind {
	case tokNumber:
		switch {
		case strings.ContainsAny(t.Text, "eE"):
			return Literal{Text: t.Text, Kind: LiteralFloat}, true
		case strings.Contains(t.Text, "."):
			return Literal{Text: t.Text, Kind: LiteralDecimal}, true
		}
		return Literal{Text: t.Text, Kind: LiteralInteger}, true
	case tokMoney:
		return Literal{Text: t.Text, Kind: LiteralMoney}, true
	case tokString:
		return Literal{Text: t.Text, Kind: LiteralString}, true
	case tokNString:
		return Literal{Text: t.Text, Kind: LiteralNString}, true
	case tokBinary:
		return Literal{Text: t.Text, Kind: LiteralBinary}, true
	case tokVariable:
		return Literal{Text: t.Text, Kind: LiteralVariable}, true
	case tokWord:
		if t.IsWord("NULL") {
			return Literal{Text: t.Text, Kind: LiteralNull}, true
		}
	}
	return Literal{}, false
}

// sqlType is a parsed data type name such as decimal(18,2).
type sqlType struct {
	Base string // lower case, synonyms resolved: "int", "nvarchar", "decimal", ...
	Args []string
}

var typeSynonyms = map[string]string{
	"integer": "int", "dec": "decimal", "double precision": "float", "character": "char",
	"character varying": "varchar", "char varying": "varchar", "national character": "nchar",
	"national char": "nchar", "national character varying": "nvarchar", "national char varying": "nvarchar",
	"national text": "ntext", "binary varying": "varbinary", "timestamp": "rowversion",
}

// parseSQLType parses a data type as written in a declaration; a leading
// "sys." schema and brackets are accepted.
func parseSQLType(s string) (sqlType, error) {
	toks := code(lex(s))
	var words []string
	i := 0
	for ; i < len(toks) && (toks[i].Kind == tokWord || toks[i].Kind == tokQuotedIdent || toks[i].IsOp(".")); i++ {
		if toks[i].IsOp(".") {
			words = append(words, ".")
			continue
		}
		words = append(words, strings.ToLower(unquote(toks[i])))
	}
	name := strings.Join(words, " ")
	name = strings.ReplaceAll(name, " . ", ".")
	name = strings.TrimPrefix(name, "sys.")
	if syn, ok := typeSynonyms[name]; ok {
		name = syn
	}
	if name == "" {
		return sqlType{}, fmt.Errorf("missing type name")
	}
	t := sqlType{Base: name}
	if i == len(toks) {
		return t, nil
	}
	if !toks[i].IsOp("(") {
		return t, fmt.Errorf("unexpected %q after type %s", toks[i].Text, name)
	}
	i++
	for {
		if i >= len(toks) {
			return t, fmt.Errorf("missing ')' in type %s", s)
		}
		a := toks[i]
		if a.Kind != tokNumber && !a.IsWord("max") {
			return t, fmt.Errorf("type %s: expected a number or MAX, found %q", name, a.Text)
		}
		t.Args = append(t.Args, strings.ToLower(a.Text))
		i++
		if i < len(toks) && toks[i].IsOp(",") {
			i++
			continue
		}
		if i < len(toks) && toks[i].IsOp(")") {
			i++
			break
		}
		return t, fmt.Errorf("type %s: expected ',' or ')' in the length", name)
	}
	if i != len(toks) {
		return t, fmt.Errorf("unexpected %q after type %s", toks[i].Text, s)
	}
	return t, nil
}

func (t sqlType) intArg(i, def int) int {
	if i >= len(t.Args) {
		return def
	}
	n, err := strconv.Atoi(t.Args[i])
	if err != nil {
		return def
	}
	return n
}

var intRanges = map[string][2]int64{
	"tinyint":  {0, math.MaxUint8},
	"smallint": {math.MinInt16, math.MaxInt16},
	"int":      {math.MinInt32, math.MaxInt32},
	"bigint":   {math.MinInt64, math.MaxInt64},
}

// GoValue returns the value go-mssqldb should send for this literal when the
// parameter is declared with sqlType: int64 for integer types (range
// checked), bool for bit, float64 for float and real, []byte for binary
// types, nil for NULL and for a variable (the initial value of an OUTPUT
// argument), and a string for everything else. Decimal, numeric and money
// values are exact decimal strings with the declared scale; dates, times,
// GUIDs and other types are sent as strings that the server converts.
func (l Literal) GoValue(sqlType string) (any, error) {
	typ, err := parseSQLType(sqlType)
	if err != nil {
		return nil, fmt.Errorf("type %q: %v", sqlType, err)
	}
	v, err := l.goValue(typ)
	if err != nil {
		return nil, fmt.Errorf("value %s for type %s: %v", l.Text, sqlType, err)
	}
	return v, nil
}

func (l Literal) goValue(typ sqlType) (any, error) {
	if l.Kind == LiteralNull || l.Kind == LiteralVariable {
		return nil, nil
	}
	switch b := typ.Base; b {
	case "tinyint", "smallint", "int", "bigint":
		return l.integer(intRanges[b])
	case "bit":
		return l.bit()
	case "decimal", "numeric":
		p := typ.intArg(0, 18)
		s := typ.intArg(1, 0)
		if p < 1 || p > 38 || s < 0 || s > p {
			return nil, fmt.Errorf("invalid precision and scale (%d,%d)", p, s)
		}
		return l.decimal(p, s, nil)
	case "money":
		return l.decimal(19, 4, big.NewRat(9223372036854775807, 10000))
	case "smallmoney":
		return l.decimal(10, 4, big.NewRat(2147483647, 10000))
	case "float", "real":
		bits := 64
		if b == "real" || typ.intArg(0, 53) <= 24 {
			bits = 32
		}
		return l.float(bits)
	case "char", "varchar", "nchar", "nvarchar", "text", "ntext", "sysname", "xml", "sql_variant",
		"date", "time", "datetime", "datetime2", "smalldatetime", "datetimeoffset",
		"uniqueidentifier", "geography", "geometry", "hierarchyid":
		return l.text(b)
	case "binary", "varbinary", "image", "rowversion":
		if l.Kind != LiteralBinary {
			return nil, fmt.Errorf("expected a 0x… binary literal, found %s", l.Kind.withArticle())
		}
		h := l.Text[2:]
		if len(h)%2 == 1 {
			h = "0" + h
		}
		out, err := hex.DecodeString(h)
		if err != nil {
			return nil, fmt.Errorf("invalid hexadecimal digits")
		}
		return out, nil
	case "cursor", "table":
		return nil, fmt.Errorf("a %s parameter cannot be given a literal value", b)
	}
	return nil, fmt.Errorf("unknown or user-defined type %q (table-valued and CLR types cannot be given a literal value)", typ.Base)
}

// number returns the exact value of a numeric literal, or of a string whose
// content is a number (the server converts such strings).
func (l Literal) number() (*big.Rat, error) {
	switch {
	case l.numeric():
		if r, ok := l.rat(); ok {
			return r, nil
		}
		return nil, fmt.Errorf("not a valid number")
	case l.Kind == LiteralString || l.Kind == LiteralNString:
		s := strings.TrimSpace(l.Str())
		kind := LiteralDecimal
		if s != "" && !strings.ContainsAny(s[:1], "0123456789.+-") {
			kind = LiteralMoney
		}
		if r, ok := (Literal{Text: s, Kind: kind}).rat(); ok && s != "" {
			return r, nil
		}
		return nil, fmt.Errorf("the string is not a number")
	}
	return nil, fmt.Errorf("expected a number, found %s", l.Kind.withArticle())
}

func (l Literal) integer(rng [2]int64) (any, error) {
	r, err := l.number()
	if err != nil {
		return nil, err
	}
	if !r.IsInt() {
		return nil, fmt.Errorf("not a whole number")
	}
	n := r.Num()
	if !n.IsInt64() || n.Int64() < rng[0] || n.Int64() > rng[1] {
		return nil, fmt.Errorf("out of range (%d to %d)", rng[0], rng[1])
	}
	return n.Int64(), nil
}

func (l Literal) bit() (any, error) {
	if l.Kind == LiteralString || l.Kind == LiteralNString {
		switch strings.ToLower(strings.TrimSpace(l.Str())) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	r, err := l.number()
	if err != nil {
		return nil, fmt.Errorf("%v (bit takes 0, 1, 'true' or 'false')", err)
	}
	return r.Sign() != 0, nil
}

// decimal returns the value as a decimal string with scale digits after the
// point (rounded half away from zero, as the server does), checking that it
// fits precision p, or |value| <= limit when limit is set.
func (l Literal) decimal(p, scale int, limit *big.Rat) (any, error) {
	r, err := l.number()
	if err != nil {
		return nil, err
	}
	s := r.FloatString(scale)
	if limit != nil {
		low := new(big.Rat).Sub(new(big.Rat).Neg(limit), big.NewRat(1, 10000))
		if r.Cmp(limit) > 0 || r.Cmp(low) < 0 {
			return nil, fmt.Errorf("out of range (%s to %s)", low.FloatString(4), limit.FloatString(4))
		}
		return s, nil
	}
	digits := strings.TrimLeft(strings.TrimPrefix(strings.SplitN(s, ".", 2)[0], "-"), "0")
	if len(digits) > p-scale {
		return nil, fmt.Errorf("too many digits before the decimal point (at most %d)", p-scale)
	}
	return s, nil
}

func (l Literal) float(bits int) (any, error) {
	r, err := l.number()
	if err != nil {
		return nil, err
	}
	f, _ := r.Float64()
	max := math.MaxFloat64
	if bits == 32 {
		max = math.MaxFloat32
	}
	if math.IsInf(f, 0) || math.Abs(f) > max {
		return nil, fmt.Errorf("out of range for a %d-bit float", bits)
	}
	return f, nil
}

func (l Literal) text(base string) (any, error) {
	switch l.Kind {
	case LiteralString, LiteralNString:
		s := l.Str()
		if base == "uniqueidentifier" && !isGUID(s) {
			return nil, fmt.Errorf("not a uniqueidentifier (expected xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
		}
		return s, nil
	case LiteralBinary:
		return nil, fmt.Errorf("a binary literal cannot be sent as %s", base)
	}
	switch base {
	case "date", "time", "datetime2", "datetimeoffset", "uniqueidentifier", "geography", "geometry", "hierarchyid", "xml":
		return nil, fmt.Errorf("expected a quoted string, found %s", l.Kind.withArticle())
	case "datetime", "smalldatetime":
		// the server converts numbers to datetime as days since 1900-01-01
		if r, err := l.number(); err == nil {
			if r.IsInt() && r.Num().IsInt64() {
				return r.Num().Int64(), nil
			}
			f, _ := r.Float64()
			return f, nil
		}
	}
	return strings.TrimPrefix(strings.Join(strings.Fields(l.Text), ""), "+"), nil
}

func isGUID(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = s[1 : len(s)-1]
	}
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !isHex(r) {
				return false
			}
		}
	}
	return true
}

// withArticle returns the kind's name after "a" or "an".
func (k LiteralKind) withArticle() string {
	s := k.String()
	if strings.ContainsRune("aeiouAEIOU", rune(s[0])) && k != LiteralNString {
		return "an " + s
	}
	return "a " + s
}
