package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// createOutput opens path for writing a report, a baseline or a saved plan
// without ever writing through a symbolic link: a checkout may commit one
// where an output file is expected, pointing at a file the user cares
// about. A missing file is created exclusively (a dangling link fails), an
// existing regular file is truncated with O_NOFOLLOW, and a link is
// refused unless it leads to a device or pipe (/dev/stdout, /dev/null).
func createOutput(path string) (*os.File, error) {
	f, _, err := openOutput(path, os.O_TRUNC)
	return f, err
}

// openOutput opens path as createOutput says; trunc is os.O_TRUNC or 0 (an
// existing file keeps its content until the caller truncates it). created
// says that the file did not exist before.
func openOutput(path string, trunc int) (f *os.File, created bool, err error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return nil, false, fmt.Errorf("%s appeared while it was being created; not writing through it", path)
		}
		return f, err == nil, err
	case err != nil:
		return nil, false, err
	case st.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY|trunc|oNoFollow, 0)
		return f, false, err
	case st.Mode()&fs.ModeSymlink != 0:
		target, terr := os.Stat(path)
		if terr == nil && (target.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0 || isStdStream(path)) {
			f, err := os.OpenFile(path, os.O_WRONLY|trunc, 0)
			return f, false, err
		}
		dest, _ := os.Readlink(path)
		return nil, false, fmt.Errorf("%s is a symbolic link (to %s); refusing to write through it: remove the link or name another file", path, dest)
	case st.IsDir():
		return nil, false, fmt.Errorf("%s is a directory", path)
	}
	f, err = os.OpenFile(path, os.O_WRONLY, 0) // a device or pipe named directly
	return f, false, err
}

// pendingOutput is an output file opened before a run starts, so that a
// destination that cannot be written fails the run before anything is
// analysed or printed; the content is written when the run ends. A file
// the run created is removed when the run ends without writing it, and an
// existing file keeps its content until then.
type pendingOutput struct {
	path    string
	f       *os.File
	created bool
}

// openPending opens path for a later write as createOutput would, with an
// error that names what is wrong without repeating the path.
func openPending(path string) (*pendingOutput, error) {
	f, created, err := openOutput(path, 0)
	if err != nil {
		return nil, outputProblem(path, err)
	}
	return &pendingOutput{path: path, f: f, created: created}, nil
}

// write truncates the file, writes it with fn and closes it; a file this
// run created is removed when fn fails.
func (p *pendingOutput) write(fn func(w io.Writer) error) error {
	f := p.f
	p.f = nil
	if f == nil {
		return errors.New("written twice")
	}
	err := func() error {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if err := f.Truncate(0); err != nil {
				return err
			}
		}
		return fn(f)
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && p.created {
		os.Remove(p.path)
	}
	return err
}

// abandon closes a file that was never written and removes it when this
// run created it (and it is still the file this run created).
func (p *pendingOutput) abandon() {
	f := p.f
	if f == nil {
		return
	}
	p.f = nil
	if p.created {
		mine, err1 := f.Stat()
		now, err2 := os.Lstat(p.path)
		if err1 == nil && err2 == nil && os.SameFile(mine, now) {
			os.Remove(p.path)
		}
	}
	f.Close()
}

// outputProblem says why an output path cannot be written, without the
// "open PATH:" that the caller's own prefix repeats.
func outputProblem(path string, err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		msg := strings.TrimPrefix(err.Error(), path+" ")
		return errors.New(msg)
	}
	dir := filepath.Dir(path)
	switch {
	case errors.Is(pe.Err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist", dir)
	case errors.Is(pe.Err, fs.ErrPermission):
		return fmt.Errorf("permission denied: cannot write it (or create it in %s)", dir)
	case errors.Is(pe.Err, syscall.ENOTDIR):
		return fmt.Errorf("a part of %s is not a directory", dir)
	}
	return pe.Err
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
