package sqlscript

import (
	"strings"
)

// Suppression is a planlint-ignore comment. The canonical form separates
// the reason with "--", in a line or a block comment alike:
//
//	-- planlint-ignore RULE[,RULE...] -- reason
//	/* planlint-ignore RULE[,RULE...] -- reason */
//	-- planlint-ignore-file RULE[,RULE...] -- reason
//
// ": reason" is accepted in place of " -- reason" in every form (the older
// block form was /* planlint-ignore RULE: reason */). In a block comment
// the reason may run over several lines; a "*" that starts a continuation
// line, and the stars before the closing "*/", are not part of it.
//
// Rules are rule codes or names as written; this package does not check
// that they exist.
type Suppression struct {
	Rules  []string
	Reason string
	File   bool  // planlint-ignore-file: applies to the whole file
	Range  Range // the comment
	Line   int   // the line the comment starts on
}

const (
	directiveIgnore     = "planlint-ignore"
	directiveIgnoreFile = "planlint-ignore-file"
)

// parseSuppression reads the planlint directive of a comment. A directive
// without a rule or without a reason, or one that does not parse, is an
// error: a suppression must say what it silences and why.
func (s *Script) parseSuppression(t token) {
	body := t.Text[2:]
	if t.Kind == tokBlockComment {
		if !t.Unterminated {
			body = body[:len(body)-2]
		}
		body = blockBody(body)
	}
	sup, problem, ok := parseDirective(body)
	if !ok {
		return
	}
	if problem != "" {
		s.diag(t.Start, t.End, SeverityError, "%s", problem)
		return
	}
	sup.Range = s.idx.span(t.Start, t.End)
	sup.Line = sup.Range.Start.Line
	s.Suppressions = append(s.Suppressions, sup)
}

// blockBody drops the decoration of a block comment's body: a "*" that
// starts a continuation line (after white space) and the stars that end
// the body, as in /** ... **/.
func blockBody(body string) string {
	lines := strings.Split(body, "\n")
	for i := 1; i < len(lines); i++ {
		if rest := strings.TrimLeft(lines[i], " \t\r"); strings.HasPrefix(rest, "*") {
			lines[i] = " " + rest[1:]
		}
	}
	return strings.TrimRight(strings.Join(lines, "\n"), " \t\r\n*")
}

// parseDirective parses the body of a comment. ok is false when the comment
// is not a planlint directive; problem describes a malformed one.
func parseDirective(body string) (sup Suppression, problem string, ok bool) {
	rest := strings.TrimLeft(body, " \t\r\n*")
	// the first nine runes decide, and they lie in the first 36 bytes
	if !strings.HasPrefix(strings.ToLower(rest[:min(len(rest), 36)]), "planlint-") {
		return sup, "", false
	}
	word := rest
	if n := strings.IndexFunc(rest, func(r rune) bool { return isSpace(r) || r == ':' || r == ',' }); n >= 0 {
		word = rest[:n]
	}
	directive := strings.ToLower(word)
	switch directive {
	case directiveIgnoreFile:
		sup.File = true
	case directiveIgnore:
	default:
		return sup, "unknown directive " + quote(word) + " (expected " + directiveIgnore + " or " + directiveIgnoreFile + ")", true
	}
	rest = rest[len(word):]
	example := directive + " key-lookup -- reason"
	for {
		rest = strings.TrimLeft(rest, " \t\r\n")
		n := 0
		for n < len(rest) && isRuleChar(rest[n], n) && !strings.HasPrefix(rest[n:], "--") {
			n++
		}
		if n == 0 {
			break
		}
		sup.Rules = append(sup.Rules, rest[:n])
		rest = strings.TrimLeft(rest[n:], " \t\r\n")
		if !strings.HasPrefix(rest, ",") {
			break
		}
		rest = rest[1:]
	}
	rest = strings.TrimSpace(rest)
	if len(sup.Rules) == 0 {
		if rest != "" && !strings.HasPrefix(rest, "--") && !strings.HasPrefix(rest, ":") {
			return sup, directive + ": expected a rule code or name, found " + quote(firstField(rest)) + " (write " + example + ")", true
		}
		return sup, directive + " names no rule (write " + example + ")", true
	}
	switch {
	case strings.HasPrefix(rest, "--"):
		rest = rest[2:]
	case strings.HasPrefix(rest, ":"):
		rest = rest[1:]
	case rest != "":
		return sup, directive + ": expected ',' and another rule, or '--' or ':' before the reason, found " + quote(firstField(rest)), true
	}
	sup.Reason = strings.Join(strings.Fields(rest), " ")
	if sup.Reason == "" {
		return sup, directive + " " + strings.Join(sup.Rules, ",") + " gives no reason (write " +
			directive + " " + strings.Join(sup.Rules, ",") + " -- reason)", true
	}
	return sup, "", true
}

// isRuleChar accepts letters, digits, '_' and '-' (not first).
func isRuleChar(c byte, i int) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	case c == '_' || c == '-' || c == '.':
		return i > 0
	}
	return false
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

func quote(s string) string { return "\"" + s + "\"" }

// StatementSuppressions returns the suppressions that apply to a statement
// at r: those on the lines of r, those in the block of comment-only lines
// directly above it (no blank or code line between), and the file-wide ones.
func (s *Script) StatementSuppressions(r Range) []Suppression {
	top := r.Start.Line
	for l := top - 1; l >= 1 && l < len(s.codeLine) && !s.codeLine[l] && s.commentLine[l]; l-- {
		top = l
	}
	var out []Suppression
	for _, sup := range s.Suppressions {
		if sup.File || (sup.Range.End.Line >= top && sup.Range.Start.Line <= r.End.Line) {
			out = append(out, sup)
		}
	}
	return out
}
