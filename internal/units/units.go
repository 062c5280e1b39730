// Package units formats the counts, durations and sizes that findings and
// reports print, so that a figure reads the same in a rule's message, the
// operator tree and the HTML page.
package units

import (
	"math"
	"strconv"
	"strings"
)

// Count formats a row or execution count with thousands separators,
// rounding fractional estimates (one decimal below 10); "?" for NaN and
// infinities, three significant digits past what int64 groups exactly.
func Count(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "?"
	}
	if v > 0 && v < 10 && v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	if math.Abs(v) >= 1e18 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Ms renders milliseconds as ms below a second, seconds with one decimal
// below ten seconds, and whole seconds (grouped) from there.
func Ms(v float64) string {
	if v >= 10000 {
		return Count(v/1000) + " s"
	}
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + " s"
	}
	return Count(v) + " ms"
}

// KB renders a size given in KB as KB, MB (whole) or GB (one decimal).
func KB(v float64) string {
	switch {
	case v >= 1024*1024:
		return strconv.FormatFloat(v/1024/1024, 'f', 1, 64) + " GB"
	case v >= 1024:
		return strconv.FormatFloat(v/1024, 'f', 0, 64) + " MB"
	}
	return Count(v) + " KB"
}
