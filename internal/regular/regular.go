// Package regular opens input files that must be regular files. A FIFO
// with no writer, a terminal or a device like /dev/zero would block a run
// or never end, so they are refused without waiting on them.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the error Open returns for a FIFO, device,
// socket or directory.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading. The open does not block on a FIFO, and the
// file's own mode (not the name's, which could change in between) decides.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, Kind(st.Mode()))
	}
	return f, nil
}

// Kind names a file mode that is not a regular file's, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "is a directory"
	case m&fs.ModeNamedPipe != 0:
		return "is a named pipe (FIFO); pass its content on standard input (-) instead"
	case m&fs.ModeSocket != 0:
		return "is a socket"
	case m&fs.ModeCharDevice != 0:
		return "is a character device"
	case m&fs.ModeDevice != 0:
		return "is a device"
	}
	return "is not a regular file"
}

// ReadFile reads the regular file at path; more than max bytes is an error.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := ReadAll(f, max+1)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return b, nil
}

// ReadAll reads r to its end, or up to limit bytes when limit > 0. For a
// file it allocates the file's size once, where io.ReadAll would grow a
// buffer step by step and allocate several times the size on the way.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	size := int64(512)
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size() + 1 // + 1: the read that sees the end
		}
	}
	if limit > 0 {
		r = io.LimitReader(r, limit)
		size = min(size, limit)
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: append grows the buffer
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
