package capture

import (
	"net/url"
	"sort"
	"strings"
	"unicode"

	"github.com/microsoft/go-mssqldb/msdsn"
)

// Redacted replaces every secret in connection strings and messages.
const Redacted = "xxxxx"

// secretKeys are the connection string keys whose values are secrets
// (lower case, single spaces).
var secretKeys = map[string]bool{
	"password":           true,
	"pwd":                true,
	"clientassertion":    true,
	"systemtoken":        true,
	"userassertion":      true,
	"clientsecret":       true,
	"client secret":      true,
	"clientcertpassword": true,
	"accesstoken":        true,
	"access token":       true,
	"change password":    true, // go-mssqldb sets the login's new password from it
	"changepassword":     true,
	"newpassword":        true,
	"new password":       true,
}

func isSecretKey(k string) bool {
	return secretKeys[strings.ToLower(strings.Join(strings.Fields(k), " "))]
}

// span is a byte range [start, end) of a connection string.
type span struct{ start, end int }

// Redact returns the connection string with its secrets replaced by
// Redacted: the password of a URL's user information and the values of the
// password, pwd, clientassertion, systemtoken, userassertion, clientsecret,
// clientcertpassword and accesstoken keys in URL query, ADO
// (key=value;...) and ODBC (odbc:key={value};...) forms. Values are found
// the way go-mssqldb splits them, and malformed strings are redacted
// generously rather than parsed exactly. Everything else is kept as
// written.
func Redact(dsn string) string {
	spans := secretSpans(dsn)
	if len(spans) == 0 {
		return dsn
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(dsn[last:s.start])
		b.WriteString(Redacted)
		last = s.end
	}
	b.WriteString(dsn[last:])
	return b.String()
}

// secretSpans returns the sorted, non-overlapping byte ranges of the secret
// values in dsn.
func secretSpans(dsn string) []span {
	var spans []span
	switch {
	case len(dsn) >= 5 && strings.EqualFold(dsn[:5], "odbc:"):
		// go-mssqldb reads only a lower-case "odbc:" prefix as ODBC; take
		// both readings so that neither can show a secret.
		spans = append(odbcSecrets(dsn, 5), adoSecrets(dsn)...)
	case urlScheme(dsn) > 0:
		spans = urlSecrets(dsn, urlScheme(dsn))
	case looseScheme(dsn) > 0:
		// "sqlserver:/sa:pw@host" is no URL to go-mssqldb, which reads it
		// as ADO; take both readings so that neither can show a secret.
		spans = append(urlSecrets(dsn, looseScheme(dsn)), adoSecrets(dsn)...)
	default:
		spans = adoSecrets(dsn)
	}
	return mergeSpans(spans)
}

// urlScheme returns the length of a leading "scheme://", or 0.
func urlScheme(s string) int {
	i := strings.Index(s, "://")
	if i <= 0 {
		return 0
	}
	for k, r := range s[:i] {
		if !(r < 0x80 && (unicode.IsLetter(r) || k > 0 && (unicode.IsDigit(r) || r == '+' || r == '-' || r == '.'))) {
			return 0
		}
	}
	return i + 3
}

// looseScheme returns the length of a leading "scheme:" and the slashes
// after it, for a string written like a URL without "://", or 0.
func looseScheme(s string) int {
	i := strings.IndexByte(s, ':')
	if i <= 0 || urlScheme(s) > 0 {
		return 0
	}
	for k, r := range s[:i] {
		if !(r < 0x80 && (unicode.IsLetter(r) || k > 0 && (unicode.IsDigit(r) || r == '+' || r == '-' || r == '.'))) {
			return 0
		}
	}
	i++
	for i < len(s) && s[i] == '/' {
		i++
	}
	return i
}

// urlSecrets finds the password of the user information and secret query
// values of a URL whose authority starts at from.
func urlSecrets(s string, from int) []span {
	var spans []span
	rest := s[from:]
	authEnd := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authEnd = i
	}
	at := strings.LastIndexByte(rest[:authEnd], '@')
	if _, err := url.Parse(s); err != nil {
		// A malformed URL (a password with an unescaped /, ? or #) hides
		// where the user information ends: take everything up to the last @.
		if k := strings.LastIndexByte(rest, '@'); k > at {
			at = k
		}
	}
	queryFrom := 0
	if at >= 0 {
		user := rest[:at]
		if c := strings.IndexByte(user, ':'); c >= 0 {
			spans = append(spans, span{from + c + 1, from + at})
		}
		queryFrom = at + 1
	}
	q := strings.IndexByte(rest[queryFrom:], '?')
	if q < 0 {
		return spans
	}
	start := from + queryFrom + q + 1
	for start <= len(s) {
		end := strings.IndexByte(s[start:], '&')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		pair := s[start:end]
		if eq := strings.IndexByte(pair, '='); eq >= 0 {
			key, err := url.QueryUnescape(pair[:eq])
			if err != nil {
				key = pair[:eq]
			}
			if isSecretKey(key) {
				spans = append(spans, span{start + eq + 1, end})
			}
		}
		start = end + 1
	}
	return spans
}

// adoSecrets finds secret values of an ADO connection string. Parts are
// split at semicolons outside double quotes, as go-mssqldb does (a quote
// anywhere toggles quoting). A secret written in single quotes, which
// go-mssqldb does not understand, is redacted up to its closing quote.
func adoSecrets(s string) []span {
	var spans []span
	parts := splitADO(s)
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		part := s[p.start:p.end]
		eq := strings.IndexByte(part, '=')
		if eq < 0 || !isSecretKey(part[:eq]) {
			continue
		}
		vs := p.start + eq + 1
		for vs < p.end && (s[vs] == ' ' || s[vs] == '\t') {
			vs++
		}
		end := p.end
		if vs < p.end && s[vs] == '\'' && !closesQuote(s[vs+1:p.end], '\'') {
			for i+1 < len(parts) {
				i++
				end = parts[i].end
				if strings.IndexByte(s[parts[i].start:parts[i].end], '\'') >= 0 {
					break
				}
			}
		}
		spans = append(spans, span{vs, end})
	}
	return spans
}

// closesQuote reports whether s holds a closing quote q that is not doubled.
func closesQuote(s string, q byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return true
		}
	}
	return false
}

// splitADO returns the byte ranges of the semicolon-separated parts.
func splitADO(s string) []span {
	var parts []span
	start, inQuotes := 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			if inQuotes && i+1 < len(s) && s[i+1] == '"' {
				i++
				continue
			}
			inQuotes = !inQuotes
		case ';':
			if !inQuotes {
				parts = append(parts, span{start, i})
				start = i + 1
			}
		}
	}
	return append(parts, span{start, len(s)})
}

// odbcSecrets finds secret values of an ODBC connection string whose
// key=value list starts at from: bare values run to the next semicolon,
// braced ones to the closing brace ("}}" is an escaped brace). An
// unterminated brace runs to the end.
func odbcSecrets(s string, from int) []span {
	var spans []span
	i := from
	for i < len(s) {
		for i < len(s) && (s[i] == ';' || s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
		ks := i
		for i < len(s) && s[i] != '=' && s[i] != ';' {
			i++
		}
		if i >= len(s) || s[i] == ';' {
			continue
		}
		key := s[ks:i]
		i++ // '='
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		vs := i
		if i < len(s) && s[i] == '{' {
			i++
			for i < len(s) {
				if s[i] == '}' {
					if i+1 < len(s) && s[i+1] == '}' {
						i += 2
						continue
					}
					i++
					break
				}
				i++
			}
			if isSecretKey(key) {
				spans = append(spans, span{vs, i})
			}
			// go-mssqldb rejects anything but spaces before the next
			// semicolon; treat it as part of the value when redacting.
			for i < len(s) && s[i] != ';' {
				i++
			}
			if isSecretKey(key) {
				spans[len(spans)-1].end = i
			}
			continue
		}
		for i < len(s) && s[i] != ';' {
			i++
		}
		if isSecretKey(key) {
			spans = append(spans, span{vs, i})
		}
	}
	return spans
}

func mergeSpans(spans []span) []span {
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var out []span
	for _, s := range spans {
		if s.end <= s.start {
			continue
		}
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// minScrubLength is the shortest secret scrubbed from free text; shorter
// ones would turn every message into noise and are refused by any sensible
// password policy anyway.
const minScrubLength = 4

// scrubber removes known secret values from free text such as driver
// error messages.
type scrubber struct{ secrets []string }

// newScrubber collects the secrets of a connection string (as written and
// URL-decoded) and any extra secret values.
func newScrubber(dsn string, extra ...string) *scrubber {
	sc := &scrubber{}
	add := func(v string) {
		if len(v) >= minScrubLength {
			sc.secrets = append(sc.secrets, v)
		}
	}
	for _, s := range secretSpans(dsn) {
		raw := dsn[s.start:s.end]
		add(raw)
		if dec, err := url.QueryUnescape(raw); err == nil {
			add(dec)
		}
		if dec, err := url.PathUnescape(raw); err == nil {
			add(dec)
		}
		add(strings.Trim(raw, `{}"'`))
	}
	// The values as the driver reads them: unquoted ("" is "), unbraced.
	if p, err := msdsn.Parse(dsn); err == nil {
		add(p.Password)
		add(p.ChangePassword)
		for k, v := range p.Parameters {
			if isSecretKey(k) {
				add(v)
			}
		}
	}
	for _, v := range extra {
		add(v)
	}
	// longest first, so a secret containing another is replaced whole
	sort.Slice(sc.secrets, func(i, j int) bool { return len(sc.secrets[i]) > len(sc.secrets[j]) })
	return sc
}

// scrub replaces every known secret in s.
func (sc *scrubber) scrub(s string) string {
	if sc == nil {
		return s
	}
	for _, v := range sc.secrets {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	return s
}
