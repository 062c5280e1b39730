package plan

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/planlint/planlint/internal/regular"
)

// Header is what Stream reports about the document besides its statements.
type Header struct {
	Version string // ShowPlanXML/@Version
	Build   string // ShowPlanXML/@Build
	Batches int    // number of Batch elements
}

// Parse decodes a whole showplan document. It is Stream collecting every
// statement into its batch.
func Parse(r io.Reader, opts Options) (*Document, error) {
	doc := &Document{}
	h, err := Stream(r, opts, func(s *Statement) error {
		doc.addStatement(s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	doc.Version, doc.Build = h.Version, h.Build
	for len(doc.Batches) < h.Batches { // batches without statements
		doc.Batches = append(doc.Batches, &Batch{Index: len(doc.Batches) + 1})
	}
	return doc, nil
}

func (d *Document) addStatement(s *Statement) {
	for len(d.Batches) < s.Batch {
		d.Batches = append(d.Batches, &Batch{Index: len(d.Batches) + 1})
	}
	b := d.Batches[s.Batch-1]
	b.Statements = append(b.Statements, s)
}

// Stream decodes a showplan document and calls fn with each top-level
// statement as soon as its end tag has been read; statements nested in it
// (IF branches, procedure and function bodies) arrive as its Children.
// Stream keeps no reference to a statement after fn returns, so memory is
// bounded by the largest statement rather than the document. An error from
// fn stops decoding and is returned as is.
//
// Decoding errors are *Error or *LimitError values.
func Stream(r io.Reader, opts Options, fn func(*Statement) error) (Header, error) {
	in, err := openInput(r, opts.maxBytes())
	if err != nil {
		return Header{}, err
	}
	p := parsers.Get().(*parser)
	defer p.release()
	p.reset(in, opts, fn)
	if err := checkStart(p.s); err != nil {
		return Header{}, err
	}
	err = p.document()
	return p.header, err
}

// parsers keeps parsers with their scanner buffers and interned strings
// for reuse: checking a folder decodes many files. Once Stream returns, a
// pooled parser holds neither the caller's callback nor its input.
var parsers = sync.Pool{New: func() any {
	return &parser{s: newScanner(nil), strs: newInterner(maxInternedStrs)}
}}

func (p *parser) reset(r io.Reader, opts Options, fn func(*Statement) error) {
	p.s.reset(r)
	p.strs.trim()
	*p = parser{s: p.s, strs: p.strs, stack: p.stack[:0],
		maxDepth: opts.maxDepth(), maxBytes: opts.maxBytes(), emit: fn}
}

// release returns p to the pool without the caller's callback and input.
func (p *parser) release() {
	p.s.release()
	*p = parser{s: p.s, strs: p.strs, stack: p.stack[:0]}
	parsers.Put(p)
}

// ParseFile decodes the showplan file at path. Errors start with the path.
func ParseFile(path string, opts Options) (*Document, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	doc, err := Parse(f, opts)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return doc, nil
}

// StreamFile is Stream on the file at path. Every error, including one
// returned by fn, is a *FileError starting with the path; errors.Is and
// errors.As see through it.
func StreamFile(path string, opts Options, fn func(*Statement) error) (Header, error) {
	f, err := openFile(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	h, err := Stream(f, opts, fn)
	if err != nil {
		return h, &FileError{Path: path, Err: err}
	}
	return h, nil
}

// FileError is an error about a file; it renders as "path: error".
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *FileError) Unwrap() error { return e.Err }

// openFile opens a regular, non-empty file, or says what is wrong with it.
func openFile(path string) (*os.File, error) {
	f, err := regular.Open(path)
	if err != nil && errors.Is(err, regular.ErrNotRegular) {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, &FileError{Path: path, Err: errors.New("is a directory, not a showplan file")}
		}
		return nil, &FileError{Path: path, Err: err}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &FileError{Path: path, Err: fmt.Errorf("no such file: %w", err)}
		case errors.Is(err, fs.ErrPermission):
			return nil, &FileError{Path: path, Err: fmt.Errorf("cannot open, permission denied: %w", err)}
		}
		return nil, &FileError{Path: path, Err: fmt.Errorf("cannot open: %w", err)}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, &FileError{Path: path, Err: fmt.Errorf("cannot stat: %w", err)}
	}
	if st.IsDir() {
		f.Close()
		return nil, &FileError{Path: path, Err: errors.New("is a directory, not a showplan file")}
	}
	if st.Mode().IsRegular() && st.Size() == 0 {
		f.Close()
		return nil, &FileError{Path: path, Err: errors.New("the file is empty")}
	}
	return f, nil
}
