package plan

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// parser is a recursive-descent decoder over encoding/xml raw tokens. Every
// element method is called right after child returned the element's start
// tag and returns after its end tag, so the stack of open elements is always
// exact; end tags are checked against it because RawToken does not.
type parser struct {
	d        *xml.Decoder
	input    *sizeLimiter
	maxDepth int
	maxBytes int64
	emit     func(*Statement) error
	header   Header
	stack    []openElem
	batch    int        // 1-based index of the current Batch
	plan     *QueryPlan // plan whose Nodes receive the RelOps being read
	owner    *RelOp     // RelOp being read; RelOps found below it are its children
	pastRoot bool       // the root element has been closed
}

type openElem struct {
	name xml.Name
	line int
}

// next returns the next start or end tag, skipping text, comments and
// processing instructions. It returns io.EOF only at the end of the input
// with no element open.
func (p *parser) next() (xml.Token, error) {
	for {
		tok, err := p.d.RawToken()
		if err != nil {
			return nil, p.readError(err)
		}
		switch t := tok.(type) {
		case xml.StartElement, xml.EndElement:
			return t, nil
		case xml.CharData:
			if len(p.stack) == 0 && len(bytes.TrimLeft(t, " \t\r\n")) > 0 {
				where := "before"
				if p.pastRoot {
					where = "after"
				}
				return nil, p.errorf("unexpected text %q %s the root element", sample(t), where)
			}
		case xml.Directive:
			if bytes.HasPrefix(t, []byte("DOCTYPE")) {
				return nil, p.errorf("DOCTYPE declarations are not allowed in showplan XML")
			}
			return nil, p.errorf("unexpected markup declaration <!%s>: not allowed in showplan XML", sample(t))
		}
	}
}

// child returns the next child element of the innermost open element and
// pushes it, or reports ok == false after popping the innermost element at
// its end tag.
func (p *parser) child() (se xml.StartElement, ok bool, err error) {
	tok, err := p.next() // with an element open, EOF comes back as truncation
	if err != nil {
		return se, false, err
	}
	switch t := tok.(type) {
	case xml.StartElement:
		if err := p.push(t.Name); err != nil {
			return se, false, err
		}
		return t, true, nil
	case xml.EndElement:
		return se, false, p.pop(t.Name)
	}
	return se, false, nil
}

func (p *parser) push(name xml.Name) error {
	if len(p.stack) >= p.maxDepth {
		line, col := p.d.InputPos()
		return &LimitError{Limit: LimitDepth, Max: int64(p.maxDepth), Line: line, Column: col, Element: name.Local}
	}
	line, _ := p.d.InputPos()
	p.stack = append(p.stack, openElem{name: name, line: line})
	return nil
}

func (p *parser) pop(name xml.Name) error {
	top := p.stack[len(p.stack)-1]
	if name != top.name {
		return p.errorf("malformed XML: end tag </%s> does not match start tag <%s> at line %d",
			qname(name), qname(top.name), top.line)
	}
	p.stack = p.stack[:len(p.stack)-1]
	return nil
}

// skip reads the element child just returned through its end tag. RelOps
// inside it still become children of the RelOp being read, so no operator
// is lost whatever element it hides in.
func (p *parser) skip() error {
	base := len(p.stack)
	for len(p.stack) >= base {
		se, ok, err := p.child()
		if err != nil {
			return err
		}
		if ok && p.owner != nil && se.Name.Local == "RelOp" {
			if _, err := p.relOp(se, p.owner); err != nil {
				return err
			}
		}
	}
	return nil
}

// errorf returns an *Error at the current position.
func (p *parser) errorf(format string, args ...any) error {
	line, col := p.d.InputPos()
	return &Error{Line: line, Column: col, Element: p.current(), Msg: fmt.Sprintf(format, args...)}
}

// current is the name of the innermost open element.
func (p *parser) current() string {
	if len(p.stack) == 0 {
		return ""
	}
	return p.stack[len(p.stack)-1].name.Local
}

// readError turns an error from RawToken into an *Error or *LimitError.
func (p *parser) readError(err error) error {
	if err == io.EOF {
		if len(p.stack) == 0 {
			return io.EOF
		}
		return p.truncated()
	}
	line, col := p.d.InputPos()
	var syn *xml.SyntaxError
	var in *inputError
	switch {
	case errors.Is(err, errSizeLimit):
		return &LimitError{Limit: LimitFileSize, Max: p.maxBytes, Line: line, Column: col, Element: p.current()}
	case errors.As(err, &in):
		return &Error{Line: line, Column: col, Element: p.current(), Msg: in.msg}
	case errors.As(err, &syn):
		if strings.HasPrefix(syn.Msg, "unexpected EOF") || (syn.Msg == "invalid UTF-8" && p.input.endsMidRune()) {
			return p.truncated()
		}
		return &Error{Line: syn.Line, Column: col, Element: p.current(), Msg: "malformed XML: " + syn.Msg, Err: err}
	case strings.HasPrefix(err.Error(), "xml: "):
		return &Error{Line: line, Column: col, Element: p.current(), Msg: "malformed XML: " + strings.TrimPrefix(err.Error(), "xml: "), Err: err}
	}
	return &Error{Line: line, Column: col, Element: p.current(), Msg: "read error: " + err.Error(), Err: err}
}

func (p *parser) truncated() error {
	msg := "unexpected EOF: the file is truncated"
	if n := len(p.stack); n > 0 {
		top := p.stack[n-1]
		msg += fmt.Sprintf(" (<%s> from line %d is not closed)", qname(top.name), top.line)
	} else if !p.pastRoot {
		msg += " (no root element)"
	}
	line, col := p.d.InputPos()
	return &Error{Line: line, Column: col, Element: p.current(), Msg: msg}
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// sample is the start of b, for messages.
func sample(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// document reads the whole input: prologue, root element, epilogue.
func (p *parser) document() error {
	root, err := p.rootElement()
	if err != nil {
		return err
	}
	p.readRoot(root)
	for {
		se, ok, err := p.child()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if se.Name.Local == "BatchSequence" {
			err = p.batchSequence()
		} else {
			err = p.skip()
		}
		if err != nil {
			return err
		}
	}
	p.pastRoot = true
	for {
		tok, err := p.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return p.errorf("malformed XML: element <%s> after the end of the root element; a document has one root", qname(t.Name))
		case xml.EndElement:
			return p.errorf("malformed XML: end tag </%s> after the end of the root element", qname(t.Name))
		}
	}
}

// rootElement reads up to the root start tag, pushes it and checks that it
// is a showplan root.
func (p *parser) rootElement() (xml.StartElement, error) {
	tok, err := p.next()
	if err == io.EOF {
		return xml.StartElement{}, p.errorf("no root element: the input holds no element")
	}
	if err != nil {
		return xml.StartElement{}, err
	}
	root, ok := tok.(xml.StartElement)
	if !ok {
		return root, p.errorf("malformed XML: end tag </%s> before any start tag", qname(tok.(xml.EndElement).Name))
	}
	ns := ""
	for _, a := range root.Attr {
		if (root.Name.Space == "" && a.Name.Space == "" && a.Name.Local == "xmlns") ||
			(root.Name.Space != "" && a.Name.Space == "xmlns" && a.Name.Local == root.Name.Space) {
			ns = a.Value
		}
	}
	if root.Name.Local != "ShowPlanXML" || ns != Namespace {
		found := "without a namespace"
		if ns != "" {
			found = fmt.Sprintf("in namespace %q", ns)
		}
		return root, p.errorf("not a showplan: root element <%s> %s; expected <ShowPlanXML> in namespace %q",
			qname(root.Name), found, Namespace)
	}
	return root, p.push(root.Name)
}
