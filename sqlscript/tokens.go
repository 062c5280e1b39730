package sqlscript

// Token is a code token of a T-SQL text; whitespace and comments are not
// tokens.
type Token struct {
	Text       string
	Start, End int // byte offsets in the text
	// Literal is set for a number, money, string, Unicode string or binary
	// literal (a sign before a number is a separate token).
	Literal *Literal
	// Variable is set for a parameter or variable name such as @Status or
	// @0 (not for @@system variables).
	Variable bool
	// Identifier is the name a word or quoted identifier spells, without
	// brackets or quotes: "dbo" for dbo, [dbo] and "dbo". It is "" for
	// other tokens.
	Identifier string
}

// CodeTokens splits text into its code tokens. It never fails: an
// unterminated string, identifier or comment runs to the end of the text.
func CodeTokens(text string) []Token {
	toks := code(lex(text))
	out := make([]Token, len(toks))
	for i, t := range toks {
		out[i] = Token{Text: t.Text, Start: t.Start, End: t.End}
		switch t.Kind {
		case tokVariable:
			out[i].Variable = true
		case tokWord:
			out[i].Identifier = t.Text
		case tokQuotedIdent:
			out[i].Identifier = unquote(t)
		}
		if t.Literal() && !t.Unterminated {
			if l, ok := literalFromTokens(toks[i:i+1], text); ok {
				out[i].Literal = &l
			}
		}
	}
	return out
}

// HasParam reports whether a batch of the script sends a parameter of that
// name (an annotation or an sp_executesql argument) or declares one in its
// sp_executesql parameter list.
func (s *Script) HasParam(name string) bool {
	for _, b := range s.Batches {
		if b.hasParam(name) {
			return true
		}
	}
	return false
}
