package units

import (
	"math"
	"testing"
)

func TestCount(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{2.5, "2.5"},
		{9.96, "10.0"},
		{12.4, "12"},
		{999.6, "1,000"},
		{1234567, "1,234,567"},
		// The report's copy wrote "-,123" and "-,123,456": the comma went
		// before the first digit when the sign made the length a multiple of 3.
		{-123, "-123"},
		{-123456, "-123,456"},
		{-1234, "-1,234"},
		{2e18, "2e+18"},
		// Real estimated plans carry EstimateRows="1.77585e+044"; an int64
		// conversion wrapped it to a negative number.
		{1.77585e44, "1.78e+44"},
		{math.NaN(), "?"},
		{math.Inf(1), "?"},
	} {
		if got := Count(c.in); got != c.want {
			t.Errorf("Count(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMs(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0 ms"},
		{2.5, "2.5 ms"},
		{999, "999 ms"},
		{1000, "1.0 s"},
		{6649, "6.6 s"},
		{9999, "10.0 s"},
		// The report's copy wrote "12.3 s" and "1564.3 s" where the rules
		// wrote "12 s" and "1,564 s" for the same figure.
		{12345, "12 s"},
		{1564321, "1,564 s"},
	} {
		if got := Ms(c.in); got != c.want {
			t.Errorf("Ms(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestKB(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0 KB"},
		{1023, "1,023 KB"},
		{1024, "1 MB"},
		{1536, "2 MB"},
		{1024 * 1024, "1.0 GB"},
		{3.5 * 1024 * 1024, "3.5 GB"},
	} {
		if got := KB(c.in); got != c.want {
			t.Errorf("KB(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
