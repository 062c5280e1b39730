package catalog

import (
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// literalKind classifies a T-SQL constant.
type literalKind int

const (
	litOther  literalKind = iota // CONVERT(...), {guid'...'} and anything else
	litNull                      // NULL
	litNumber                    // 0, (0), -1.5, 1.000000000000000e+001
	litString                    // 'x', N'x'
	litBinary                    // 0x0A
)

// literal is a constant parsed for comparison.
type literal struct {
	kind literalKind
	num  *big.Rat // litNumber
	// text is the string's content (litString), the lower-case hex digits
	// (litBinary) or the normalised source (litOther, litNull).
	text string
}

// maxExponent bounds the exponent of a numeric literal that is compared
// numerically; SQL Server's float stops at 1.79e308.
const maxExponent = 400

// parseLiteral reads a constant as written in a filter definition or a
// plan: wrapping parentheses are dropped, so "(0)", "((0))" and "0" are
// the same number, as are "(-1)" and "-(1)".
func parseLiteral(s string) literal {
	toks := lex(s, false)
	toks = toks[:len(toks)-1] // EOF or error
	for len(toks) >= 2 && toks[0].isPunct("(") && toks[len(toks)-1].isPunct(")") && closes(toks) {
		toks = toks[1 : len(toks)-1]
	}
	other := literal{kind: litOther, text: joinTokens(toks)}
	if len(toks) > 1 && (toks[0].isPunct("-") || toks[0].isPunct("+")) {
		rest := toks[1:]
		for len(rest) >= 2 && rest[0].isPunct("(") && rest[len(rest)-1].isPunct(")") && closes(rest) {
			rest = rest[1 : len(rest)-1]
		}
		if len(rest) == 1 && rest[0].kind == tokNumber {
			return numberLiteral(toks[0].text, rest[0].text, other)
		}
	}
	switch {
	case len(toks) == 1 && toks[0].is("NULL"):
		return literal{kind: litNull, text: "NULL"}
	case len(toks) == 1 && toks[0].kind == tokString:
		return literal{kind: litString, text: toks[0].value}
	case len(toks) == 1 && toks[0].kind == tokBinary:
		return literal{kind: litBinary, text: strings.ToLower(toks[0].text[2:])}
	case len(toks) == 1 && toks[0].kind == tokNumber:
		return numberLiteral("", toks[0].text, other)
	}
	return other
}

// closes reports whether the first token's "(" is closed by the last one.
func closes(toks []token) bool {
	depth := 0
	for i, t := range toks {
		switch {
		case t.isPunct("("):
			depth++
		case t.isPunct(")"):
			depth--
			if depth == 0 {
				return i == len(toks)-1
			}
		}
	}
	return false
}

func numberLiteral(sign, digits string, fallback literal) literal {
	// A money constant ($10.0000, £3) is its number.
	if r, size := utf8.DecodeRuneInString(digits); size > 0 && unicode.Is(unicode.Sc, r) {
		digits = digits[size:]
	}
	if i := strings.IndexAny(digits, "eE"); i >= 0 {
		exp, err := strconv.Atoi(digits[i+1:])
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return fallback
		}
	}
	r, ok := new(big.Rat).SetString(sign + digits)
	if !ok {
		return fallback
	}
	return literal{kind: litNumber, num: r}
}

// CompareLiterals compares two T-SQL constants as written in a filter
// definition or a plan ("(0)", "0.0", "N'a'", "'2024-01-01'", "0x0A"). ok
// is true only when the order holds whatever the column's type and
// collation:
//   - numbers compare numerically: (0), 0 and 0.0 are equal;
//   - strings (N'a' and 'a' alike) are equal when their text is (trailing
//     spaces aside, as SQL Server compares); otherwise they are ordered
//     only when they have the same shape and differ only in digits, such
//     as ISO dates ('2024-01-01' < '2024-02-01'). Differently-cased
//     strings are never reported equal: whether 'a' = 'A' depends on the
//     collation, so ok is false;
//   - binaries of the same length compare bytewise;
//   - NULL compares with nothing; other text (CONVERT(...)) is equal only
//     to the same text.
//
// When ok is false, cmp is the ordinal order of the texts, which is never
// 0 for different texts.
func CompareLiterals(a, b string) (cmp int, ok bool) {
	la, lb := parseLiteral(a), parseLiteral(b)
	r := compareLiterals(la, lb)
	if r.ordered {
		return r.cmp, true
	}
	return strings.Compare(a, b), false
}

// relation is what is known about two literals: their order when ordered,
// else perhaps only that they are distinct.
type relation struct {
	cmp      int
	ordered  bool
	distinct bool // certainly not equal
}

func (r relation) equal() bool { return r.ordered && r.cmp == 0 }

func compareLiterals(a, b literal) relation {
	if a.kind != b.kind || a.kind == litNull {
		return relation{}
	}
	switch a.kind {
	case litNumber:
		c := a.num.Cmp(b.num)
		return relation{cmp: c, ordered: true, distinct: c != 0}
	case litString:
		ta, tb := strings.TrimRight(a.text, " "), strings.TrimRight(b.text, " ")
		if ta == tb {
			return relation{ordered: true}
		}
		if digitOrdered(ta, tb) {
			return relation{cmp: strings.Compare(ta, tb), ordered: true, distinct: true}
		}
		return relation{distinct: isWord(ta) && isWord(tb) && !strings.EqualFold(ta, tb)}
	case litBinary:
		if a.text == b.text {
			return relation{ordered: true}
		}
		if len(a.text) == len(b.text) {
			return relation{cmp: strings.Compare(a.text, b.text), ordered: true, distinct: true}
		}
		return relation{}
	}
	if a.text == b.text {
		return relation{ordered: true}
	}
	return relation{}
}

// digitOrdered reports whether two strings order the same way as text under
// any collation and as numbers, dates or times: same length, identical
// except for digits, starting with a digit, made of digits and the
// separators of ISO dates and times (- : . T space). A dash may appear
// only in an ISO date (yyyy-mm-dd), and six bare digits (a yymmdd date
// whose century depends on the two-digit year cutoff) are excluded. The
// datetime type's SET DATEFORMAT ydm, which reads yyyy-mm-dd as
// yyyy-dd-mm, is not accounted for.
func digitOrdered(a, b string) bool {
	if len(a) != len(b) || a == "" || !isDigit(a[0]) {
		return false
	}
	allDigits := true
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		switch {
		case isDigit(ca) && isDigit(cb):
		case ca != cb || !strings.ContainsRune("-:. T", rune(ca)):
			return false
		default:
			allDigits = false
		}
	}
	if allDigits && len(a) == 6 {
		return false
	}
	if strings.Contains(a, "-") && !isISODatePrefix(a) {
		return false
	}
	return true
}

// isISODatePrefix reports whether s starts with yyyy-mm-dd and has no
// other dash.
func isISODatePrefix(s string) bool {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	return !strings.Contains(s[10:], "-")
}

// isWord reports whether s holds only ASCII letters, spaces and
// underscores: such strings cannot convert to numbers or dates, and two
// of them that differ other than in case differ under every collation.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == ' ' || c == '_') {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
