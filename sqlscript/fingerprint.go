package sqlscript

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Fingerprint returns a short hex hash that identifies a statement across
// reformatting: comments are dropped, whitespace collapsed, keywords,
// identifiers and variables case-folded, brackets and quotes removed from
// identifiers, literals (strings, numbers, binary, with their sign) replaced
// by ?, IN lists of literals collapsed to IN (?), and trailing semicolons
// dropped.
func Fingerprint(sql string) string {
	sum := sha256.Sum256([]byte(normalize(sql)))
	return hex.EncodeToString(sum[:8])
}

// unaryAfter are the keywords after which + or - is a sign, not an operator.
var unaryAfter = setOf("SELECT", "WHERE", "AND", "OR", "NOT", "THEN", "ELSE", "WHEN", "RETURN", "IN", "BY",
	"TOP", "VALUES", "BETWEEN", "IS", "LIKE", "ON", "SET", "CASE", "HAVING", "PRINT", "DEFAULT", "AS")

// normalize returns the text that Fingerprint hashes.
func normalize(sql string) string {
	toks := code(lex(sql))
	for len(toks) > 0 && toks[len(toks)-1].IsOp(";") {
		toks = toks[:len(toks)-1]
	}
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Literal():
			out = append(out, "?")
		case (t.IsOp("-") || t.IsOp("+")) && i+1 < len(toks) && (toks[i+1].Kind == tokNumber || toks[i+1].Kind == tokMoney) && isSignPosition(toks, i):
			// the sign belongs to the literal that follows
		case t.IsWord("IN") && i+1 < len(toks) && toks[i+1].IsOp("("):
			if end, ok := literalList(toks, i+2); ok {
				out = append(out, "in", "(", "?", ")")
				i = end
				continue
			}
			out = append(out, "in")
		case t.Kind == tokQuotedIdent:
			out = append(out, strings.ToLower(unquote(t)))
		case t.Kind == tokWord || t.Kind == tokVariable || t.Kind == tokSysVariable:
			out = append(out, strings.ToLower(t.Text))
		default:
			out = append(out, t.Text)
		}
	}
	return strings.Join(out, " ")
}

// isSignPosition reports whether the + or - at toks[i] is a sign: it starts
// the text or follows an operator (other than a closing parenthesis) or a
// keyword that cannot end an operand.
func isSignPosition(toks []token, i int) bool {
	if i == 0 {
		return true
	}
	p := toks[i-1]
	switch p.Kind {
	case tokOperator:
		return !p.IsOp(")")
	case tokWord:
		return unaryAfter[p.Upper()]
	}
	return false
}

// literalList reports whether toks from i up to a closing parenthesis are
// only literals (optionally signed) separated by commas, and returns the
// index of that parenthesis.
func literalList(toks []token, i int) (int, bool) {
	want := true // a literal is expected next
	for ; i < len(toks); i++ {
		t := toks[i]
		switch {
		case want && (t.IsOp("-") || t.IsOp("+")) && i+1 < len(toks) && (toks[i+1].Kind == tokNumber || toks[i+1].Kind == tokMoney):
			i++
			want = false
		case want && (t.Literal() || t.IsWord("NULL")):
			want = false
		case !want && t.IsOp(","):
			want = true
		case !want && t.IsOp(")"):
			return i, true
		default:
			return 0, false
		}
	}
	return 0, false
}

// Redact replaces every string literal with '?' (N'?' for Unicode strings)
// and every number, money and binary literal with ?, leaving keywords,
// identifiers, variables, comments and layout as they are.
func Redact(sql string) string {
	var sb strings.Builder
	sb.Grow(len(sql))
	for _, t := range lex(sql) {
		switch t.Kind {
		case tokString:
			sb.WriteString("'?'")
		case tokNString:
			sb.WriteString(t.Text[:1] + "'?'")
		case tokNumber, tokMoney, tokBinary:
			sb.WriteString("?")
		default:
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}
