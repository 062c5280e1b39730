package sqlscript

import "github.com/planlint/planlint/internal/tsql"

// The package reads T-SQL with the shared lexer under short local names.
type token = tsql.Token

const (
	tokSpace        = tsql.Space
	tokLineComment  = tsql.LineComment
	tokBlockComment = tsql.BlockComment
	tokWord         = tsql.Word
	tokQuotedIdent  = tsql.QuotedIdent
	tokVariable     = tsql.Variable
	tokSysVariable  = tsql.SysVariable
	tokString       = tsql.String
	tokNString      = tsql.NString
	tokNumber       = tsql.Number
	tokMoney        = tsql.Money
	tokBinary       = tsql.Binary
	tokOperator     = tsql.Operator
)

func lex(text string) []token   { return tsql.Lex(text) }
func code(toks []token) []token { return tsql.Code(toks) }
func unquote(t token) string    { return tsql.Unquote(t) }

func isSpace(r rune) bool { return tsql.IsSpace(r) }
func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isHex(r rune) bool {
	return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}
