package cli

import "testing"

func TestByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1048576", 1 << 20}, {"1 GiB", 1 << 30}, {"1GiB", 1 << 30}, {"500KB", 500000}, {"10MiB", 10 << 20},
		{"2g", 2 << 30}, {"1.5 MiB", 3 << 19}, {"100b", 100},
	}
	for _, tt := range tests {
		var s byteSize
		if err := s.Set(tt.in); err != nil || int64(s) != tt.want {
			t.Errorf("Set(%q) = %d, %v; want %d", tt.in, s, err, tt.want)
		}
	}
	for _, tt := range []struct {
		size int64
		want string
	}{{1 << 30, "1GiB"}, {64 << 20, "64MiB"}, {3 << 19, "1536KiB"}, {1500, "1500"}, {1, "1"}, {5 << 40, "5TiB"}} {
		if got := (*byteSize)(&tt.size).String(); got != tt.want {
			t.Errorf("byteSize(%d).String() = %q, want %q", tt.size, got, tt.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "lots", "1 parsec", "1e30 GiB", "NaN"} {
		var s byteSize
		if err := s.Set(bad); err == nil {
			t.Errorf("Set(%q) = %d, want an error", bad, s)
		}
	}
}

// FuzzByteSize: any text either parses to a positive size or is refused.
func FuzzByteSize(f *testing.F) {
	for _, s := range []string{"1GiB", "500 KB", "12", "x", "1.5m", "-3k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var s byteSize
		if err := s.Set(in); err == nil && s <= 0 {
			t.Errorf("Set(%q) accepted %d", in, s)
		} else if err == nil {
			var back byteSize
			if err := back.Set(s.String()); err != nil || back != s {
				t.Errorf("Set(%q) = %d, but its String %q reads back as %d (%v)", in, s, s.String(), back, err)
			}
		}
	})
}
