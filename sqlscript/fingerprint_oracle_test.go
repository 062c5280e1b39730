package sqlscript

import "strings"

// The normalization of before the streamed one, kept as the oracle
// FuzzFingerprint compares with.

// oracleNormalize is normalize as it was before it streamed the tokens.
func oracleNormalize(sql string) string {
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
		case (t.IsOp("-") || t.IsOp("+")) && i+1 < len(toks) && (toks[i+1].Kind == tokNumber || toks[i+1].Kind == tokMoney) && oracleIsSignPosition(toks, i):
			// the sign belongs to the literal that follows
		case t.IsWord("IN") && i+1 < len(toks) && toks[i+1].IsOp("("):
			if end, ok := oracleLiteralList(toks, i+2); ok {
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
func oracleIsSignPosition(toks []token, i int) bool {
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
func oracleLiteralList(toks []token, i int) (int, bool) {
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
