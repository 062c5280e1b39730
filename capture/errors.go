package capture

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// ErrorKind classifies why a capture failed.
type ErrorKind int

// Error kinds.
const (
	ErrConnect        ErrorKind = iota + 1 // the server could not be reached
	ErrLogin                               // the server refused the login
	ErrPermission                          // SHOWPLAN permission denied (error 262)
	ErrTimeout                             // --connect-timeout or --query-timeout expired
	ErrCanceled                            // interrupted (Ctrl-C)
	ErrServer                              // the server answered with an error
	ErrConnectionLost                      // the connection broke while waiting for a reply
	ErrNoPlan                              // the server returned no plan
	ErrStatement                           // the statement cannot be captured as asked
)

func (k ErrorKind) String() string {
	switch k {
	case ErrConnect:
		return "cannot reach the server"
	case ErrLogin:
		return "login failed"
	case ErrPermission:
		return "permission denied"
	case ErrTimeout:
		return "timeout"
	case ErrCanceled:
		return "interrupted"
	case ErrServer:
		return "server error"
	case ErrConnectionLost:
		return "connection lost"
	case ErrNoPlan:
		return "no plan"
	case ErrStatement:
		return "cannot capture"
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a capture failure. Its message names the step that failed and,
// for server errors, the error number and the server's text; it never
// contains a password or other secret.
type Error struct {
	Kind ErrorKind
	// Step is what planlint was doing, e.g. "connecting", "SET SHOWPLAN_XML ON",
	// "compiling the statement".
	Step string
	// Number is the server's error number, 0 when the failure is not a
	// server error.
	Number int32
	// Message says what went wrong; Hint, when set, what to do about it.
	Message string
	Hint    string
	// Err is the underlying error. Its text may contain secrets; print
	// Error() instead.
	Err error
}

func (e *Error) Error() string {
	s := e.Step + ": " + e.Message
	if e.Hint != "" {
		s = strings.TrimSuffix(s, ".") + "; " + e.Hint
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// classify turns a driver error into an *Error. timedOut says that the
// query timeout cancelled the request; limit is that timeout.
func classify(err error, step string, timedOut bool, limit time.Duration, c *Connection) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	e := &Error{Step: step, Err: err}
	var me mssql.Error
	var se mssql.ServerError
	var ne net.Error
	var oe *net.OpError
	switch {
	case timedOut:
		e.Kind = ErrTimeout
		e.Message = fmt.Sprintf("no complete answer within %s; the request was cancelled", limit)
		e.Hint = "raise --query-timeout if the statement needs longer"
	case errors.Is(err, context.Canceled):
		e.Kind = ErrCanceled
		e.Message = "interrupted; the request was cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = ErrTimeout
		e.Message = fmt.Sprintf("no answer within %s", limit)
		e.Hint = "check the server name and port, or raise --connect-timeout"
	case errors.As(err, &se):
		e.Kind = ErrConnectionLost
		e.Message = "the server hit a fatal error and closed the connection"
		if errors.As(se.Unwrap(), &me) {
			e.Number = me.Number
			e.Message += ": " + serverMessage(me)
		}
	case errors.As(err, &me):
		e.Number = me.Number
		e.Message = serverMessage(me)
		switch {
		case me.Number == 18456 || me.Number == 18452 || me.Number == 18486 || me.Number == 18487 || me.Number == 18488:
			e.Kind = ErrLogin
			e.Hint = "check the user name and password (-U, -P, SQLCMDPASSWORD, --password-stdin) or the connection string"
		case me.Number == 4060:
			e.Kind = ErrLogin
			e.Hint = "check the database name (-d) and that the login may use it"
		case me.Number == 262:
			e.Kind = ErrPermission
			e.Hint = fmt.Sprintf("ask an administrator to run GRANT SHOWPLAN TO %s in that database", quoteName(c.userName()))
		case strings.HasPrefix(me.Message, "login error: "):
			e.Kind = ErrLogin
		default:
			e.Kind = ErrServer
		}
	case isDialError(err, &oe):
		e.Kind = ErrConnect
		e.Message = "cannot open a TCP connection: " + dialMessage(err, oe)
		e.Hint = "check the server name and port (-S host,port) and that SQL Server accepts TCP connections"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), isStreamError(err) && strings.HasSuffix(err.Error(), "EOF"):
		e.Kind = ErrConnectionLost
		e.Message = "the server closed the connection in the middle of its reply (" + err.Error() + ")"
	case errors.Is(err, driver.ErrBadConn), errors.As(err, &ne), isStreamError(err):
		e.Kind = ErrConnectionLost
		e.Message = "the connection to the server broke: " + err.Error()
	default:
		e.Kind = ErrServer
		e.Message = err.Error()
	}
	if c != nil {
		e.Message = c.scrub.scrub(e.Message)
	}
	return e
}

// serverMessage renders a server error with its number, severity, state
// and line, listing every error the server sent.
func serverMessage(me mssql.Error) string {
	all := me.All
	if len(all) == 0 {
		all = []mssql.Error{me}
	}
	parts := make([]string, len(all))
	for i, m := range all {
		text := strings.TrimPrefix(m.Message, "login error: ")
		parts[i] = fmt.Sprintf("error %d (severity %d, state %d", m.Number, m.Class, m.State)
		if m.LineNo > 0 {
			parts[i] += fmt.Sprintf(", line %d", m.LineNo)
		}
		if m.ProcName != "" {
			parts[i] += ", procedure " + m.ProcName
		}
		parts[i] += "): " + text
	}
	return strings.Join(parts, "; ")
}

func isDialError(err error, oe **net.OpError) bool {
	if errors.As(err, oe) && (*oe).Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	return strings.Contains(err.Error(), "unable to open tcp connection")
}

func dialMessage(err error, oe *net.OpError) string {
	if oe != nil && oe.Op == "dial" {
		return oe.Error()
	}
	return err.Error()
}

func isStreamError(err error) bool {
	var se mssql.StreamError
	return errors.As(err, &se)
}

// quoteName brackets an identifier as QUOTENAME does.
func quoteName(s string) string {
	return "[" + strings.ReplaceAll(s, "]", "]]") + "]"
}

func (c *Connection) userName() string {
	if c == nil || c.User == "" {
		return "<your login>"
	}
	return c.User
}
