package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// createOutput opens path for writing a report, a baseline or a saved plan
// without ever writing through a symbolic link: a checkout may commit one
// where an output file is expected, pointing at a file the user cares
// about. A missing file is created exclusively (a dangling link fails), an
// existing regular file is truncated with O_NOFOLLOW, and a link is
// refused unless it leads to a device or pipe (/dev/stdout, /dev/null).
func createOutput(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s appeared while it was being created; not writing through it", path)
		}
		return f, err
	case err != nil:
		return nil, err
	case st.Mode().IsRegular():
		return os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|oNoFollow, 0)
	case st.Mode()&fs.ModeSymlink != 0:
		target, terr := os.Stat(path)
		if terr == nil && (target.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0 || isStdStream(path)) {
			return os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		}
		dest, _ := os.Readlink(path)
		return nil, fmt.Errorf("%s is a symbolic link (to %s); refusing to write through it: remove the link or name another file", path, dest)
	case st.IsDir():
		return nil, fmt.Errorf("%s is a directory", path)
	}
	return os.OpenFile(path, os.O_WRONLY, 0) // a device or pipe named directly
}

// isStdStream reports whether path names the process's own output, as
// /dev/stdout does when the shell redirected it to a file.
func isStdStream(path string) bool {
	p := filepath.Clean(path)
	return p == "/dev/stdout" || p == "/dev/stderr" || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/")
}

// writeOutput writes b to path as createOutput opens it.
func writeOutput(path string, b []byte) error {
	f, err := createOutput(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
