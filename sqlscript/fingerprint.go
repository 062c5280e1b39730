package sqlscript

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Fingerprint returns a short hex hash that identifies a statement across
// reformatting: comments are dropped, whitespace collapsed, keywords,
// identifiers and variables case-folded, brackets and quotes removed from
// identifiers, literals (strings, numbers, binary, with their sign) replaced
// by ?, IN lists of literals collapsed to IN (?), and trailing semicolons
// dropped. The normalized text is hashed as it is produced, never held.
func Fingerprint(sql string) string {
	h := sha256.New()
	w := bufio.NewWriterSize(h, 4096)
	normalizeTo(w, sql)
	w.Flush()
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// unaryAfter are the keywords after which + or - is a sign, not an operator.
var unaryAfter = setOf("SELECT", "WHERE", "AND", "OR", "NOT", "THEN", "ELSE", "WHEN", "RETURN", "IN", "BY",
	"TOP", "VALUES", "BETWEEN", "IS", "LIKE", "ON", "SET", "CASE", "HAVING", "PRINT", "DEFAULT", "AS")

// normalize returns the text that Fingerprint hashes.
func normalize(sql string) string {
	var b strings.Builder
	normalizeTo(&b, sql)
	return b.String()
}

// normalizeTo writes the normalized words of sql to w, separated by
// spaces, reading the tokens from a window (an IN list is checked with a
// lookahead that does not hold its tokens).
func normalizeTo(w interface {
	WriteString(string) (int, error)
	WriteByte(byte) error
}, sql string) {
	toks := newWindow(sql, 0, len(sql))
	words, semicolons := 0, 0 // semicolons: written only if a token follows them
	put := func(s string) {
		if words > 0 {
			w.WriteByte(' ')
		}
		w.WriteString(s)
		words++
	}
	putLower := func(s string) {
		if !isASCII(s) {
			put(strings.ToLower(s))
			return
		}
		if words > 0 {
			w.WriteByte(' ')
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			w.WriteByte(c)
		}
		words++
	}
	var prev token // the token before toks.at(i)
	for i := 0; toks.has(i); i++ {
		toks.release(i)
		t := toks.at(i)
		if t.IsOp(";") {
			semicolons++
			prev = t
			continue
		}
		for ; semicolons > 0; semicolons-- {
			put(";")
		}
		switch {
		case t.Literal():
			put("?")
		case (t.IsOp("-") || t.IsOp("+")) && (toks.at(i+1).Kind == tokNumber || toks.at(i+1).Kind == tokMoney) && isSignPosition(prev, i):
			// the sign belongs to the literal that follows
		case t.IsWord("IN") && toks.at(i+1).IsOp("("):
			if end, ok := literalList(toks, i+2); ok {
				put("in")
				put("(")
				put("?")
				put(")")
				toks.skip(end)
				i = end
				prev = token{Kind: tokOperator, Text: ")"}
				continue
			}
			put("in")
		case t.Kind == tokQuotedIdent:
			putLower(unquote(t))
		case t.Kind == tokWord || t.Kind == tokVariable || t.Kind == tokSysVariable:
			putLower(t.Text)
		default:
			put(t.Text)
		}
		prev = t
	}
}

// isSignPosition reports whether the + or - at index i, after prev, is a
// sign: it starts the text or follows an operator (other than a closing
// parenthesis) or a keyword that cannot end an operand.
func isSignPosition(prev token, i int) bool {
	if i == 0 {
		return true
	}
	switch prev.Kind {
	case tokOperator:
		return !prev.IsOp(")")
	case tokWord:
		return unaryAfter[keyword(prev)]
	}
	return false
}

// literalList reports whether the tokens from i up to a closing
// parenthesis are only literals (optionally signed) separated by commas,
// and returns the index of that parenthesis.
func literalList(toks *codeWindow, i int) (end int, ok bool) {
	want := true // a literal is expected next
	sign := false
	toks.scan(i, func(j int, t token) bool {
		switch {
		case sign: // after a sign, the number or money literal it signs
			sign = false
			if t.Kind == tokNumber || t.Kind == tokMoney {
				want = false
				return true
			}
			return false
		case want && (t.IsOp("-") || t.IsOp("+")):
			sign = true
		case want && (t.Literal() || t.IsWord("NULL")):
			want = false
		case !want && t.IsOp(","):
			want = true
		case !want && t.IsOp(")"):
			end, ok = j, true
			return false
		default:
			return false
		}
		return true
	})
	return end, ok
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
