package regular

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadAll: a file, a reader that is not one and a limit give what
// io.ReadAll of the same (limited) reader would; a file is read into one
// buffer of its size.
func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 511, 512, 513, 100000} {
		data := bytes.Repeat([]byte("0123456789"), size/10+1)[:size]
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int64{0, 1, int64(size), int64(size) + 1, 1 << 30} {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadAll(f, limit)
			f.Close()
			want := data
			if limit > 0 && int64(len(want)) > limit {
				want = want[:limit]
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("size %d, limit %d: read %d bytes (%v), want %d", size, limit, len(got), err, len(want))
			}
			if limit == 0 && cap(got) != size+1 {
				t.Errorf("size %d: buffer of %d bytes, want one of %d", size, cap(got), size+1)
			}
		}
		got, err := ReadAll(strings.NewReader(string(data)), 0)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d from a reader: %d bytes (%v)", size, len(got), err)
		}
	}
}
