package plan

import (
	"errors"
	"fmt"
	"io"
)

// parser is a recursive-descent decoder over the tokens of scanner. Every
// element method is called right after child returned the element's start
// tag and returns after its end tag, so the stack of open elements is always
// exact; end tags are checked against it here and nowhere else.
type parser struct {
	s        *scanner
	maxDepth int
	maxBytes int64
	emit     func(*Statement) error
	header   Header
	stack    []openElem
	batch    int        // 1-based index of the current Batch
	ordinal  int        // statements started so far in the document
	plan     *QueryPlan // plan whose Nodes receive the RelOps being read
	owner    *RelOp     // RelOp being read; RelOps found below it are its children
	pastRoot bool       // the root element has been closed
	strs     *interner
}

type openElem struct {
	name  string // qualified name as written
	local string
	line  int // line of the start tag's '<'
}

// element is a start tag. Its attributes alias the scanner's buffers: read
// them before asking for the next token.
type element struct {
	local string
	attrs []attribute
}

// Interning limits for attribute values the model keeps.
const (
	maxInternLen    = 48
	maxInternedStrs = 8192
)

// str returns v as a string the model may keep. Short values repeat a lot
// (operator names, "[dbo]", data types), so they are shared.
func (p *parser) str(v value) string {
	if len(v) == 0 {
		return ""
	}
	if len(v) > maxInternLen {
		return string(v)
	}
	return p.strs.get(v)
}

// next returns the next start or end tag, skipping text, comments and
// processing instructions. It returns io.EOF only at the end of the input
// with no element open.
func (p *parser) next() (tokenKind, error) {
	for {
		k, err := p.s.next()
		if err != nil {
			return 0, p.readError(err)
		}
		switch k {
		case tokStart, tokEnd:
			return k, nil
		case tokText:
			if len(p.stack) == 0 && !p.s.blank {
				where := "before"
				if p.pastRoot {
					where = "after"
				}
				return 0, p.errorf("unexpected text %s the root element", where)
			}
		}
	}
}

// child returns the next child element of the innermost open element and
// pushes it, or reports ok == false after popping the innermost element at
// its end tag.
func (p *parser) child() (se element, ok bool, err error) {
	k, err := p.next() // with an element open, EOF comes back as truncation
	if err != nil {
		return se, false, err
	}
	if k == tokEnd {
		return se, false, p.pop()
	}
	if err := p.push(); err != nil {
		return se, false, err
	}
	return element{local: p.s.local, attrs: p.s.attrs}, true, nil
}

// push opens the start tag just read.
func (p *parser) push() error {
	if len(p.stack) >= p.maxDepth {
		line, col := p.s.position(p.s.offset())
		return &LimitError{Limit: LimitDepth, Max: int64(p.maxDepth), Line: line, Column: col, Element: p.s.local}
	}
	line := p.s.lineAt(p.s.tokenOffset())
	p.stack = append(p.stack, openElem{name: p.s.name, local: p.s.local, line: line})
	return nil
}

// startPos is the position of the start tag just read.
func (p *parser) startPos() Pos {
	line, col := p.s.position(p.s.tokenOffset())
	return Pos{Line: line, Column: col}
}

// pop closes the innermost element at the end tag just read.
func (p *parser) pop() error {
	top := p.stack[len(p.stack)-1]
	if string(p.s.qname) != top.name {
		return p.errorf("malformed XML: end tag </%s> does not match start tag <%s> at line %d",
			p.s.qname, top.name, top.line)
	}
	p.stack = p.stack[:len(p.stack)-1]
	return nil
}

// skip reads the element child just returned through its end tag. RelOps
// inside it still become children of the RelOp being read, so no operator
// is lost whatever element it hides in, and the scalar functions it calls
// are recorded on that RelOp.
func (p *parser) skip() error {
	base := len(p.stack)
	for len(p.stack) >= base {
		se, ok, err := p.child()
		if err != nil {
			return err
		}
		if ok && p.owner != nil {
			switch se.local {
			case "RelOp":
				if _, err := p.relOp(se, p.owner); err != nil {
					return err
				}
			case "UserDefinedFunction": // in DefinedValues and other skipped expressions
				p.owner.UDFs = append(p.owner.UDFs, p.udfCall(se))
			}
		}
	}
	return nil
}

// errorf returns an *Error at the end of the last token read.
func (p *parser) errorf(format string, args ...any) error {
	line, col := p.s.position(p.s.offset())
	return &Error{Line: line, Column: col, Element: p.current(), Msg: fmt.Sprintf(format, args...)}
}

// current is the name of the innermost open element.
func (p *parser) current() string {
	if len(p.stack) == 0 {
		return ""
	}
	return p.stack[len(p.stack)-1].local
}

// readError turns an error from the scanner into an *Error or *LimitError.
func (p *parser) readError(err error) error {
	if err == io.EOF {
		if len(p.stack) == 0 {
			return io.EOF
		}
		return p.truncated()
	}
	var syn *syntaxError
	var in *inputError
	switch {
	case errors.As(err, &syn):
		if syn.truncated {
			return p.truncated()
		}
		line, col := p.s.position(syn.off)
		return &Error{Line: line, Column: col, Element: p.current(), Msg: syn.msg, Err: err}
	case errors.Is(err, errSizeLimit):
		line, col := p.s.position(p.s.inputEnd())
		return &LimitError{Limit: LimitFileSize, Max: p.maxBytes, Line: line, Column: col, Element: p.current()}
	case errors.As(err, &in):
		line, col := p.s.position(p.s.inputEnd())
		return &Error{Line: line, Column: col, Element: p.current(), Msg: in.msg}
	}
	line, col := p.s.position(p.s.inputEnd())
	return &Error{Line: line, Column: col, Element: p.current(), Msg: "read error: " + err.Error(), Err: err}
}

func (p *parser) truncated() error {
	msg := "unexpected EOF: the file is truncated"
	if n := len(p.stack); n > 0 {
		top := p.stack[n-1]
		msg += fmt.Sprintf(" (<%s> from line %d is not closed)", top.name, top.line)
	} else if !p.pastRoot {
		msg += " (no root element)"
	}
	line, col := p.s.position(p.s.inputEnd())
	return &Error{Line: line, Column: col, Element: p.current(), Msg: msg}
}

// document reads the whole input: prologue, root element, epilogue.
func (p *parser) document() error {
	if err := p.rootElement(); err != nil {
		return err
	}
	for {
		se, ok, err := p.child()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if se.local == "BatchSequence" {
			err = p.batchSequence()
		} else {
			err = p.skip()
		}
		if err != nil {
			return err
		}
	}
	p.pastRoot = true
	// After the root only white space, comments and processing instructions
	// may follow; next skips those, so any token is an error.
	k, err := p.next()
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return err
	case k == tokStart:
		return p.errorf("malformed XML: element <%s> after the end of the root element; a document has one root", p.s.name)
	}
	return p.errorf("malformed XML: end tag </%s> after the end of the root element", p.s.qname)
}

// rootElement reads up to the root start tag, checks that it is a showplan
// root, reads its attributes and pushes it.
func (p *parser) rootElement() error {
	k, err := p.next()
	if err == io.EOF {
		return p.errorf("no root element: the input holds no element")
	}
	if err != nil {
		return err
	}
	if k == tokEnd {
		return p.errorf("malformed XML: end tag </%s> before any start tag", p.s.qname)
	}
	prefix := p.s.prefix
	ns := ""
	for _, a := range p.s.attrs {
		if (prefix == "" && len(a.prefix) == 0 && string(a.local) == "xmlns") ||
			(prefix != "" && string(a.prefix) == "xmlns" && string(a.local) == prefix) {
			ns = string(a.value)
		}
	}
	if p.s.local != "ShowPlanXML" || ns != Namespace {
		found := "without a namespace"
		if ns != "" {
			found = fmt.Sprintf("in namespace %q", ns)
		}
		return p.errorf("not a showplan: root element <%s> %s; expected <ShowPlanXML> in namespace %q",
			p.s.name, found, Namespace)
	}
	p.readRoot(p.s.attrs)
	return p.push()
}
