package tdstest

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Handler decides the response to a batch or RPC the server does not run
// itself. s is the session state the request runs under. Returning nil
// leaves the request unhandled: the client gets an error and the request is
// recorded in Unhandled. Handlers run on connection goroutines and must be
// safe for concurrent use when several connections are open.
type Handler func(s Session, r *Request) *Response

// Config configures a Server.
type Config struct {
	// Handler answers requests; nil leaves every non-session request unhandled.
	Handler Handler
	// User and Password are what DSN puts in the connection string
	// (User defaults to "sa"). A non-empty Password is also enforced: a login
	// with another password fails with error 18456.
	User     string
	Password string
	// RejectLogin, when set, fails the logins for which it returns true
	// (error 18456), after the password check.
	RejectLogin func(Login) bool
	// Database is the database a login lands in when it names none
	// (default "master").
	Database string
	// Databases, when non-empty, lists the databases that exist; USE or a
	// login naming another fails as SQL Server does (911, 4060).
	Databases []string
	// ServerName appears in ERROR and INFO tokens (default "tdstest").
	ServerName string
	// NoTLS makes the server answer PRELOGIN with ENCRYPTION=NOT_SUP
	// whatever the client asks, as a server without a certificate. By
	// default it answers as SQL Server does and performs the TLS handshake
	// (encrypt=false encrypts the login only, encrypt=true everything,
	// encrypt=strict is TLS first).
	NoTLS bool
	// Certificate is the server certificate; nil uses one generated once
	// per process (NewCertificate).
	Certificate *Certificate
	// PlanForRPC passes an sp_executesql RPC under SHOWPLAN_XML ON to the
	// Handler, which may answer it with a plan ("variant A"). By default the
	// server answers it itself as SQL Server does: no result set, only
	// RETURNSTATUS and DONEPROC.
	PlanForRPC bool
	// Misbehave, when set, is asked first about every batch and RPC after
	// login, the session's own SET and transaction batches included: a
	// request it returns a misbehaviour for gets that instead of an answer
	// (its session state stays as it was).
	Misbehave func(Request) *Misbehaviour
}

// ProtocolError is a malformed or unexpected client message, or a response
// the server could not send as built.
type ProtocolError struct {
	Conn int
	Seq  int // recorded request it belongs to, 0 if none
	Err  string
}

func (e ProtocolError) Error() string {
	if e.Seq > 0 {
		return fmt.Sprintf("conn %d, request %d: %s", e.Conn, e.Seq, e.Err)
	}
	return fmt.Sprintf("conn %d: %s", e.Conn, e.Err)
}

// Server is an in-process SQL Server impostor speaking TDS 7.4 over
// loopback TCP.
type Server struct {
	cfg    Config
	cert   *Certificate
	ln     net.Listener
	wg     sync.WaitGroup
	closed chan struct{}
	once   sync.Once

	mu        sync.Mutex
	conns     map[int]*conn
	nextConn  int
	nextTran  uint64
	requests  []Request
	unhandled []int // indexes into requests
	protoErrs []ProtocolError
}

// NewServer starts a server listening on 127.0.0.1 at a free port.
func NewServer(cfg Config) (*Server, error) {
	if cfg.User == "" {
		cfg.User = "sa"
	}
	if cfg.Database == "" {
		cfg.Database = "master"
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "tdstest"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tdstest: listen: %w", err)
	}
	cert := cfg.Certificate
	if cert == nil {
		if cert, err = defaultCertificate(); err != nil {
			ln.Close()
			return nil, err
		}
	}
	s := &Server{cfg: cfg, cert: cert, ln: ln, closed: make(chan struct{}), conns: map[int]*conn{}, nextTran: 0x1_0000_0000}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Start starts a server for a test and closes it at cleanup, failing the
// test if any protocol error or unhandled request was recorded.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		for _, e := range s.ProtocolErrors() {
			t.Errorf("tdstest protocol error: %v", e)
		}
		for _, r := range s.Unhandled() {
			t.Errorf("tdstest unhandled request: conn %d, request %d: %s", r.Conn, r.Seq, r.Describe())
		}
	})
	return s
}

// CertificatePEM is the server's certificate, PEM-encoded, for clients
// that validate it (go-mssqldb's certificate or serverCertificate
// parameters).
func (s *Server) CertificatePEM() []byte { return append([]byte(nil), s.cert.PEM...) }

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// DSN returns a sqlserver:// connection string for go-mssqldb with the
// configured user and password and the given extra parameters, e.g.
// url.Values{"encrypt": {"disable"}, "packet size": {"512"}}.
func (s *Server) DSN(params url.Values) string {
	u := url.URL{Scheme: "sqlserver", Host: s.Addr(), RawQuery: params.Encode()}
	if s.cfg.Password != "" {
		u.User = url.UserPassword(s.cfg.User, s.cfg.Password)
	} else {
		u.User = url.User(s.cfg.User)
	}
	return u.String()
}

// Close stops accepting, closes every connection and waits for all server
// goroutines to finish. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		close(s.closed)
		err = s.ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return err
}

// Requests returns a copy of every recorded message, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// Unhandled returns copies of the requests no handler answered.
func (s *Server) Unhandled() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.unhandled))
	for i, idx := range s.unhandled {
		out[i] = s.requests[idx].clone()
	}
	return out
}

// ProtocolErrors returns the protocol errors recorded so far.
func (s *Server) ProtocolErrors() []ProtocolError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ProtocolError(nil), s.protoErrs...)
}

// Session returns the current state of an open connection.
func (s *Server) Session(connID int) (Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.conns[connID]
	if !ok {
		return Session{}, false
	}
	return c.sess, true
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.closed:
			default:
				s.protocolError(0, 0, fmt.Sprintf("accept: %v", err))
			}
			return
		}
		s.mu.Lock()
		select {
		case <-s.closed:
			s.mu.Unlock()
			nc.Close()
			return
		default:
		}
		s.nextConn++
		c := newConn(s, nc, s.nextConn)
		s.conns[c.id] = c
		s.wg.Add(1)
		s.mu.Unlock()
		go c.serve()
	}
}

func (s *Server) protocolError(connID, seq int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.protoErrs = append(s.protoErrs, ProtocolError{Conn: connID, Seq: seq, Err: msg})
}

// record appends a request, numbering it, and returns its sequence number.
func (s *Server) record(r *Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.requests) + 1
	s.requests = append(s.requests, r.clone())
	return r.Seq
}

// recordAfter stores the session state a request left behind.
func (s *Server) recordAfter(seq int, after Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[seq-1].After = after
}

func (s *Server) markUnhandled(seq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unhandled = append(s.unhandled, seq-1)
}

func (s *Server) newTranID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextTran++
	return s.nextTran
}

func (s *Server) databaseExists(name string) bool {
	if len(s.cfg.Databases) == 0 {
		return true
	}
	for _, d := range s.cfg.Databases {
		if strings.EqualFold(d, name) {
			return true
		}
	}
	return false
}

// readResult is one message (or the read error that ended the stream).
type readResult struct {
	msg message
	err error
}

// conn is one client connection. serve owns the session; readLoop feeds it
// messages so that an ATTENTION can arrive while a reply is delayed.
type conn struct {
	srv        *Server
	nc         net.Conn
	rw         io.ReadWriter // the transport: nc, or a TLS session over it
	encryption string        // one of the Encryption* modes
	id         int
	msgs       chan readResult
	done       chan struct{}
	closeOnce  sync.Once
	packetSize int
	loginSess  Session // state right after login, restored by RESETCONNECTION
	tranID     uint64
	sess       Session // guarded by srv.mu for readers outside serve
}

func newConn(s *Server, nc net.Conn, id int) *conn {
	return &conn{srv: s, nc: nc, rw: nc, id: id, msgs: make(chan readResult), done: make(chan struct{}), packetSize: 4096}
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.nc.Close()
	})
}

func (c *conn) readLoop() {
	defer c.srv.wg.Done()
	for {
		m, err := readMessage(c.rw)
		select {
		case c.msgs <- readResult{m, err}:
		case <-c.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// next waits for the next message; ok is false when the connection is over.
func (c *conn) next() (message, bool) {
	select {
	case rr := <-c.msgs:
		if rr.err != nil {
			c.readFailed(rr.err)
			return message{}, false
		}
		return rr.msg, true
	case <-c.done:
		return message{}, false
	}
}

// readFailed records read errors that are the client's fault; a client that
// simply hangs up, or a connection the server closed, is not an error.
func (c *conn) readFailed(err error) {
	select {
	case <-c.done:
		return
	default:
	}
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) {
		return
	}
	c.srv.protocolError(c.id, 0, err.Error())
}

func (c *conn) serve() {
	defer c.srv.wg.Done()
	defer func() {
		c.close()
		c.srv.mu.Lock()
		delete(c.srv.conns, c.id)
		c.srv.mu.Unlock()
	}()
	if !c.open() {
		return
	}
	c.srv.wg.Add(1)
	go c.readLoop()
	for {
		m, ok := c.next()
		if !ok {
			return
		}
		if !c.handle(m) {
			return
		}
	}
}

// write sends a reply body split into packets.
func (c *conn) write(body []byte) bool {
	_, err := c.rw.Write(packetize(packetReply, body, c.packetSize))
	return err == nil
}

func (c *conn) setSession(s Session) {
	c.srv.mu.Lock()
	c.sess = s
	c.srv.mu.Unlock()
}

// handle processes one message after login; false ends the connection.
func (c *conn) handle(m message) bool {
	switch m.typ {
	case packetSQLBatch, packetRPC, packetTransMgr:
		return c.request(m)
	case packetAttention:
		req := Request{Conn: c.id, Kind: KindAttention, Session: c.sess, After: c.sess, Raw: m.body}
		c.srv.record(&req)
		var w writer
		w.done(tokenDone, doneAttn, CmdNone, 0)
		return c.write(w.buf)
	}
	c.srv.protocolError(c.id, 0, fmt.Sprintf("unexpected packet type 0x%02X after login", m.typ))
	return false
}

// readDirect reads one message on the serving goroutine, before readLoop
// starts; ok is false when the connection is over.
func (c *conn) readDirect() (message, bool) {
	m, err := readMessage(c.rw)
	if err != nil {
		c.readFailed(err)
		return message{}, false
	}
	return m, true
}

// open runs PRELOGIN, the TLS handshake the negotiated encryption calls
// for, and LOGIN7; false ends the connection.
func (c *conn) open() bool {
	br := bufio.NewReader(c.nc)
	first, err := br.Peek(1)
	if err != nil {
		c.readFailed(err)
		return false
	}
	raw := bufferedConn{Conn: c.nc, r: br}
	c.rw = raw
	c.encryption = EncryptionNone
	if first[0] == tlsHandshakeRecord {
		// TDS 8.0 (encrypt=strict): TLS before PRELOGIN.
		tc := tls.Server(raw, c.tlsConfig(true))
		if err := tc.Handshake(); err != nil {
			c.srv.protocolError(c.id, 0, "TLS handshake (TDS 8.0): "+err.Error())
			return false
		}
		c.rw, c.encryption = tc, EncryptionStrict
	}
	m, ok := c.readDirect()
	if !ok {
		return false
	}
	if m.typ != packetPrelogin {
		c.srv.protocolError(c.id, 0, fmt.Sprintf("expected PRELOGIN (0x12), got packet type 0x%02X", m.typ))
		return false
	}
	p, err := parsePrelogin(m.body)
	req := Request{Conn: c.id, Kind: KindPrelogin, Raw: m.body}
	if err == nil {
		req.Prelogin = &p
	}
	seq := c.srv.record(&req)
	if err != nil {
		c.srv.protocolError(c.id, seq, err.Error())
		return false
	}
	answer := c.encryptionAnswer(p.Encryption)
	if !c.write(preloginReply(answer)) {
		return false
	}
	if m, ok = c.readDirect(); !ok {
		return false
	}
	if c.encryption != EncryptionStrict && m.typ == packetPrelogin && (answer == EncryptOff || answer == EncryptOn) {
		// The TLS handshake, carried in PRELOGIN packets.
		wrapped := &preloginTransport{Conn: c.nc, rw: raw, packetSize: handshakePacketSize, in: m.body}
		sw := &switchConn{Conn: wrapped}
		tc := tls.Server(sw, c.tlsConfig(false))
		if err := tc.Handshake(); err != nil {
			c.srv.protocolError(c.id, seq, "TLS handshake in PRELOGIN packets: "+err.Error())
			return false
		}
		if err := wrapped.flush(); err != nil {
			return false
		}
		sw.Conn = raw
		c.rw = tc
		if m, ok = c.readDirect(); !ok {
			return false
		}
		c.encryption = EncryptionFull
		if answer == EncryptOff {
			// Only the login is encrypted; the rest of the connection is plain.
			c.rw, c.encryption = raw, EncryptionLogin
		}
	}
	if m.typ != packetLogin7 {
		c.srv.protocolError(c.id, 0, fmt.Sprintf("expected LOGIN7 (0x10) after PRELOGIN, got packet type 0x%02X", m.typ))
		return false
	}
	return c.loginRequest(m)
}

// handshakePacketSize bounds the PRELOGIN packets of the TLS handshake.
// The packet size is not negotiated yet and go-mssqldb already sizes its
// buffer to the DSN's packet size (512 at the least), so the handshake
// uses the smallest one.
const handshakePacketSize = 512

// tlsHandshakeRecord is the first byte of a TLS handshake record.
const tlsHandshakeRecord = 0x16

// encryptionAnswer is the ENCRYPTION value of the PRELOGIN reply, as a
// SQL Server with a certificate and without forced encryption answers:
// NOT_SUP to NOT_SUP, OFF to OFF (login-only TLS), ON to ON or REQ. Config
// NoTLS makes it answer NOT_SUP to everything, as a server without TLS.
func (c *conn) encryptionAnswer(asked byte) byte {
	switch {
	case c.encryption == EncryptionStrict:
		return EncryptOn
	case c.srv.cfg.NoTLS, asked == EncryptNotSup:
		return EncryptNotSup
	case asked == EncryptOff:
		return EncryptOff
	}
	return EncryptOn
}

func (c *conn) loginRequest(m message) bool {
	l, err := parseLogin7(m.body)
	req := Request{Conn: c.id, Kind: KindLogin, Raw: m.body}
	if err == nil {
		req.Login = &l
	}
	seq := c.srv.record(&req)
	if err != nil {
		c.srv.protocolError(c.id, seq, err.Error())
		return false
	}
	cfg := &c.srv.cfg
	fail := func(msg Message) bool {
		var w writer
		w.message(tokenError, msg, cfg.ServerName)
		w.done(tokenDone, doneError, CmdNone, 0)
		c.write(w.buf)
		return false
	}
	switch {
	case l.IntegratedSecurity || l.SSPILength > 0:
		msg := ErrLoginFailed(l.UserName)
		msg.Text += " This server accepts SQL authentication only."
		return fail(msg)
	case hasFeature(l.Features, FeatureFedAuth):
		msg := ErrLoginFailed(l.UserName)
		msg.Text += " This server does not support federated (Azure AD) authentication."
		return fail(msg)
	case cfg.Password != "" && l.Password != cfg.Password:
		return fail(ErrLoginFailed(l.UserName))
	case cfg.RejectLogin != nil && cfg.RejectLogin(l):
		return fail(ErrLoginFailed(l.UserName))
	}
	db := l.Database
	if db == "" {
		db = cfg.Database
	}
	if !c.srv.databaseExists(db) {
		return fail(errCannotOpenDatabase(db))
	}
	size := int(l.PacketSize)
	switch {
	case size == 0:
		size = 4096
	case size < 512:
		size = 512
	case size > 32767:
		size = 32767
	}
	sess := Session{Conn: c.id, User: l.UserName, AppName: l.AppName, HostName: l.HostName, PacketSize: size, Database: db,
		Encryption: c.encryption}
	if l.ODBC {
		sess.Options = ODBCDefaults
	}
	c.loginSess = sess
	c.setSession(sess)
	c.srv.recordAfter(seq, sess)

	var w writer
	w.envChangeStrings(envDatabase, db, "master")
	w.message(tokenInfo, changedDatabase(db), cfg.ServerName)
	w.envCollationChange()
	w.envChangeStrings(envLanguage, "us_english", "")
	w.message(tokenInfo, changedLanguage(), cfg.ServerName)
	w.loginAck(ackVersion(l.TDSVersion))
	if acks := featureAcks(l.Features); l.FeatureExt {
		w.featureExtAck(acks)
	}
	w.envPacketSizeChange(size)
	w.done(tokenDone, 0, CmdNone, 0)
	ok := c.write(w.buf)
	c.packetSize = size
	return ok
}

// request handles a batch, RPC or Transaction Manager request.
func (c *conn) request(m message) bool {
	req := Request{Conn: c.id, Reset: m.status&(statusResetConnection|statusResetConnectionSkip) != 0, Raw: m.body}
	var prefix writer
	if req.Reset {
		c.reset(&prefix, m.status&statusResetConnectionSkip != 0)
	}
	req.Session = c.sess
	var parseErr error
	var badParam string // sp_executesql parameter of the wrong type
	switch m.typ {
	case packetSQLBatch:
		req.Kind = KindBatch
		req.SQL, req.TransactionID, parseErr = parseBatch(m.body)
	case packetRPC:
		req.Kind = KindRPC
		var call rpcCall
		call, parseErr = parseRPC(m.body)
		req.Proc, req.ProcID, req.Params, req.TransactionID = call.proc, call.procID, call.params, call.tranID
		if isExecuteSQL(call) {
			req.SQL, req.ParamDecl, badParam = executeSQLText(call.params)
		}
	case packetTransMgr:
		req.Kind = KindTransaction
		var t Transaction
		t, req.TransactionID, parseErr = parseTransMgr(m.body)
		req.Transaction = &t
	}
	req.After = req.Session
	seq := c.srv.record(&req)
	if parseErr != nil {
		c.srv.protocolError(c.id, seq, parseErr.Error())
		return false
	}

	// The state left behind is recorded before the reply is written, so a
	// client that has its answer sees it in the record.
	w := prefix
	if mis := c.srv.cfg.Misbehave; mis != nil {
		if m := mis(req.clone()); m != nil {
			return c.respond(w, &req, NewResponse().Misbehave(*m))
		}
	}
	switch req.Kind {
	case KindTransaction:
		c.transaction(&w, &req)
		c.srv.recordAfter(seq, c.sess)
		return c.write(w.buf)
	case KindBatch:
		answered, after := c.batch(&w, &req)
		if answered {
			c.srv.recordAfter(seq, c.sess)
			return c.write(w.buf)
		}
		resp := c.callHandler(&req)
		c.setSession(after)
		c.srv.recordAfter(seq, after)
		return c.respond(w, &req, resp)
	case KindRPC:
		if badParam != "" {
			return c.respond(w, &req, NewResponse().Error(errParamType(badParam)))
		}
		if req.Session.ShowplanXML && isExecuteSQL(rpcCall{proc: req.Proc, procID: req.ProcID}) && !c.srv.cfg.PlanForRPC {
			// SQL Server returns no plan for sp_executesql under SHOWPLAN_XML
			// and runs nothing.
			return c.respond(w, &req, NoPlan())
		}
	}
	resp := c.callHandler(&req)
	return c.respond(w, &req, resp)
}

// callHandler asks the test's handler, turning a panic into a recorded
// protocol error and nil into an unhandled request.
func (c *conn) callHandler(req *Request) (resp *Response) {
	h := c.srv.cfg.Handler
	if h != nil {
		func() {
			defer func() {
				if p := recover(); p != nil {
					c.srv.protocolError(c.id, req.Seq, fmt.Sprintf("handler panicked on %s: %v", req.Describe(), p))
					resp = NewResponse().Error(errBadResponse(fmt.Errorf("handler panicked: %v", p)))
				}
			}()
			arg := req.clone()
			resp = h(req.Session, &arg)
		}()
	}
	if resp == nil {
		c.srv.markUnhandled(req.Seq)
		resp = NewResponse().Error(errUnhandled(req.Describe()))
	}
	return resp
}

// respond sends a handler's response, applying its behaviours.
func (c *conn) respond(w writer, req *Request, resp *Response) bool {
	if resp.delay > 0 {
		timer := time.NewTimer(resp.delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-c.done:
			return false
		case rr := <-c.msgs:
			if rr.err != nil {
				c.readFailed(rr.err)
				return false
			}
			if rr.msg.typ != packetAttention {
				c.srv.protocolError(c.id, req.Seq, fmt.Sprintf("packet type 0x%02X arrived while the reply to request %d was pending", rr.msg.typ, req.Seq))
				return false
			}
			att := Request{Conn: c.id, Kind: KindAttention, Session: c.sess, After: c.sess, Raw: rr.msg.body}
			c.srv.record(&att)
			// SQL Server ends the interrupted response, then acknowledges the
			// attention in a message of its own (tedious waits for it).
			w.done(tokenDone, 0, CmdNone, 0)
			if !c.write(w.buf) {
				return false
			}
			var ack writer
			ack.done(tokenDone, doneAttn, CmdNone, 0)
			return c.write(ack.buf)
		}
	}
	if resp.misbehave != nil { // misbehave.go
		return c.streamForever(resp.misbehave)
	}
	start := len(w.buf)
	ec := encodeContext{rpc: req.Kind == KindRPC, inXact: req.Session.TranCount > 0, noCount: req.Session.NoCount,
		server: c.srv.cfg.ServerName, params: req.Params}
	metaEnd, err := resp.encode(&w, ec)
	if err != nil {
		c.srv.protocolError(c.id, req.Seq, fmt.Sprintf("response to %s: %v", req.Describe(), err))
		w.buf = w.buf[:start]
		resp = NewResponse().Error(errBadResponse(err))
		if _, err := resp.encode(&w, ec); err != nil {
			return false
		}
		return c.write(w.buf)
	}
	switch {
	case resp.closeAfterMetadata && metaEnd >= 0:
		out := packetize(packetReply, w.buf[:start+metaEnd], c.packetSize)
		out[len(out)-c.lastPacketLen(start+metaEnd)+1] = 0 // not the end of the message
		c.rw.Write(out)
		return false
	case resp.closeAfterBytes >= 0:
		out := packetize(packetReply, w.buf, c.packetSize)
		c.rw.Write(out[:min(resp.closeAfterBytes, len(out))])
		return false
	}
	return c.write(w.buf)
}

// lastPacketLen is the size of the last packet packetize makes for n body bytes.
func (c *conn) lastPacketLen(n int) int {
	payload := c.packetSize - packetHeaderSize
	last := n % payload
	if last == 0 && n > 0 {
		last = payload
	}
	return last + packetHeaderSize
}

// reset applies RESETCONNECTION: the session goes back to its state right
// after login and the reply starts with the reset acknowledgement.
func (c *conn) reset(w *writer, keepTran bool) {
	w.envResetAck()
	s := c.loginSess
	if keepTran {
		s.TranCount = c.sess.TranCount
	} else if c.sess.TranCount > 0 {
		w.envChangeBytes(envRollback, nil, tranIDBytes(c.tranID))
		c.tranID = 0
	}
	if !strings.EqualFold(c.sess.Database, s.Database) {
		w.envChangeStrings(envDatabase, s.Database, c.sess.Database)
	}
	c.setSession(s)
}

func hasFeature(fs []Feature, id byte) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
}

func isExecuteSQL(call rpcCall) bool {
	if call.procID == ProcExecuteSQL {
		return true
	}
	name := strings.ToLower(call.proc)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return strings.Trim(name, "[]") == "sp_executesql"
}

// executeSQLText finds sp_executesql's statement and declaration: the
// parameters named @statement and @parameters (SQL Server's names; @stmt
// and @params as documented), else the first two when unnamed. bad is the name of the
// first of them that is not a Unicode string (error 214).
func executeSQLText(params []Param) (stmt, decl, bad string) {
	si, di := -1, -1
	for i, p := range params {
		switch {
		case strings.EqualFold(p.Name, "@statement"), strings.EqualFold(p.Name, "@stmt"):
			si = i
		case strings.EqualFold(p.Name, "@parameters"), strings.EqualFold(p.Name, "@params"):
			di = i
		}
	}
	if si < 0 && len(params) > 0 && params[0].Name == "" {
		si = 0
	}
	if di < 0 && len(params) > 1 && params[1].Name == "" {
		di = 1
	}
	for _, x := range []struct {
		at   int
		name string
		dst  *string
	}{{si, "@statement", &stmt}, {di, "@parameters", &decl}} {
		if x.at < 0 {
			continue
		}
		p := params[x.at]
		if p.Value != nil && !isUnicodeType(p.TypeID) && bad == "" {
			bad = x.name
		}
		*x.dst, _ = p.Value.(string)
	}
	return stmt, decl, bad
}

func isUnicodeType(id byte) bool { return id == tNVarChar || id == tNChar || id == 0x63 }

// doneList writes statement DONE tokens with DONE_MORE and clears it on
// the last one when the batch ends.
type doneList struct{ at []int }

func (d *doneList) add(w *writer, status, cmd uint16, rows uint64, inXact bool) {
	if inXact {
		status |= doneInXact
	}
	d.at = append(d.at, len(w.buf))
	w.done(tokenDone, status|doneMore, cmd, rows)
}

func (d *doneList) finish(w *writer) {
	if len(d.at) == 0 {
		w.done(tokenDone, 0, CmdNone, 0)
		return
	}
	at := d.at[len(d.at)-1] + 1
	w.buf[at] &^= byte(doneMore)
}

func (c *conn) begin(w *writer, s *Session) {
	if s.TranCount == 0 {
		c.tranID = c.srv.newTranID()
		w.envChangeBytes(envBeginTran, tranIDBytes(c.tranID), nil)
	}
	s.TranCount++
}

func (c *conn) commit(w *writer, s *Session) {
	s.TranCount--
	if s.TranCount == 0 {
		w.envChangeBytes(envCommitTran, nil, tranIDBytes(c.tranID))
		c.tranID = 0
	}
}

func (c *conn) rollback(w *writer, s *Session) {
	s.TranCount = 0
	w.envChangeBytes(envRollback, nil, tranIDBytes(c.tranID))
	c.tranID = 0
}

// transaction answers a Transaction Manager request as SQL Server does:
// ENVCHANGE 8 for a begin, 9 for a commit, 10 for a rollback, then DONE.
func (c *conn) transaction(w *writer, req *Request) {
	s := c.sess
	t := req.Transaction
	server := c.srv.cfg.ServerName
	ok := true
	switch t.Op {
	case "begin":
		c.begin(w, &s)
	case "commit", "rollback":
		switch {
		case s.TranCount == 0 && t.Op == "commit":
			w.message(tokenError, errNoBeginCommit(), server)
			ok = false
		case s.TranCount == 0:
			w.message(tokenError, errNoBeginRollback(), server)
			ok = false
		case t.Op == "commit":
			c.commit(w, &s)
		default:
			c.rollback(w, &s)
		}
		if ok && t.BeginNew {
			c.begin(w, &s)
		}
	case "save":
	default:
		c.srv.markUnhandled(req.Seq)
		w.message(tokenError, errUnhandled(fmt.Sprintf("transaction manager request type %d", t.Type)), server)
		ok = false
	}
	status := uint16(0)
	if !ok {
		status |= doneError
	}
	if s.TranCount > 0 {
		status |= doneInXact
	}
	w.done(tokenDone, status, CmdNone, 0)
	c.setSession(s)
}
