package tdstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// rawClient speaks TDS to the server byte by byte, the way clients other
// than go-mssqldb (tedious, FreeTDS) do.
type rawClient struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, s *Server) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc}
}

func (c *rawClient) send(typ, status byte, body []byte) {
	c.t.Helper()
	out := packetize(typ, body, 4096)
	out[1] |= status
	if _, err := c.nc.Write(out); err != nil {
		c.t.Fatal(err)
	}
}

// readMsg reads one reply message (packets up to end of message).
func (c *rawClient) readMsg() []byte {
	c.t.Helper()
	m, err := readMessage(c.nc)
	if err != nil {
		c.t.Fatalf("reading reply: %v", err)
	}
	if m.typ != packetReply {
		c.t.Fatalf("reply packet type 0x%02X, want 0x04", m.typ)
	}
	return m.body
}

// preloginBody is a PRELOGIN with VERSION and ENCRYPTION=enc.
func preloginBody(enc byte) []byte {
	return []byte{preloginVersion, 0, 11, 0, 6, preloginEncryption, 0, 17, 0, 1, preloginTerminator,
		1, 0, 0, 0, 0, 0, enc}
}

// withFeatures adds a FeatureExt block to a LOGIN7 record.
func withFeatures(b []byte, version uint32, fs ...Feature) []byte {
	b = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(b[4:], version)
	b[27] |= flag3Extension
	binary.LittleEndian.PutUint16(b[56:], uint16(len(b)))
	binary.LittleEndian.PutUint16(b[58:], 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)+4))
	for _, f := range fs {
		b = append(b, f.ID)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f.Data)))
		b = append(b, f.Data...)
	}
	b = append(b, featureTerminator)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// token is one token of a reply, with its body.
type token struct {
	typ  byte
	body []byte
}

// splitTokens walks the tokens the server emits.
func splitTokens(t *testing.T, b []byte) []token {
	t.Helper()
	var out []token
	for len(b) > 0 {
		typ := b[0]
		var n int
		switch typ {
		case tokenDone, tokenDoneProc, tokenDoneInProc:
			n = 1 + 12
		case tokenReturnStatus:
			n = 1 + 4
		case tokenEnvChange, tokenInfo, tokenError, tokenLoginAck:
			n = 3 + int(binary.LittleEndian.Uint16(b[1:]))
		case tokenFeatureExtAck:
			n = 1
			for b[n] != featureTerminator {
				n += 5 + int(binary.LittleEndian.Uint32(b[n+1:]))
			}
			n++
		default:
			t.Fatalf("splitTokens: token 0x%02X not walked (rest % X)", typ, b)
		}
		out = append(out, token{typ, b[:n]})
		b = b[n:]
	}
	return out
}

func tokenTypes(ts []token) string {
	var s []string
	for _, t := range ts {
		s = append(s, fmt.Sprintf("%02X", t.typ))
	}
	return strings.Join(s, " ")
}

// TestLoginWithFeatureExt is a tedious/FreeTDS-style login: TDS 7.3 or 7.4
// with a FeatureExt block holding UTF8_SUPPORT. SQL Server accepts it,
// acknowledges the features it knows and echoes the client's TDS version.
func TestLoginWithFeatureExt(t *testing.T) {
	tests := []struct {
		name     string
		version  uint32
		features []Feature
		wantAck  []byte // FEATUREEXTACK token, nil when none is expected
	}{
		{"tedious TDS 7.4 UTF8_SUPPORT", 0x74000004, []Feature{{ID: FeatureUTF8Support}},
			[]byte{tokenFeatureExtAck, FeatureUTF8Support, 1, 0, 0, 0, 1, featureTerminator}},
		{"FreeTDS TDS 7.3", 0x730B0003, nil, []byte{tokenFeatureExtAck, featureTerminator}},
		{"unknown feature and session recovery not acknowledged", 0x74000004,
			[]Feature{{ID: 0x42, Data: []byte{1, 2}}, {ID: FeatureSessionRecovery}, {ID: FeatureUTF8Support}},
			[]byte{tokenFeatureExtAck, FeatureUTF8Support, 1, 0, 0, 0, 1, featureTerminator}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Config{Database: "Queues"})
			c := dialRaw(t, s)
			c.send(packetPrelogin, 0, preloginBody(EncryptNotSup))
			c.readMsg()
			c.send(packetLogin7, 0, withFeatures(login7("sa", "pw", "", flag2ODBC), tt.version, tt.features...))
			toks := splitTokens(t, c.readMsg())
			if got, want := tokenTypes(toks), "E3 AB E3 E3 AB AD AE E3 FD"; got != want {
				t.Fatalf("login reply tokens = %s, want %s", got, want)
			}
			if !bytes.Equal(toks[6].body, tt.wantAck) {
				t.Errorf("FEATUREEXTACK = % X, want % X", toks[6].body, tt.wantAck)
			}
			ack := toks[5].body
			if v := binary.BigEndian.Uint32(ack[4:]); v != tt.version {
				t.Errorf("LOGINACK TDS version = %08X, want the client's %08X", v, tt.version)
			}
			if n := int(ack[8]); n != 22 || fromUCS2(ack[9:9+2*n]) != "Microsoft SQL Server\x00\x00" {
				t.Errorf("LOGINACK ProgName has %d characters %q, want 22 (name and two NULs)", n, fromUCS2(ack[9:9+2*n]))
			}
			for _, i := range []int{1, 4} { // INFO 5701 and 5703
				if line := binary.LittleEndian.Uint32(toks[i].body[len(toks[i].body)-4:]); line != 1 {
					t.Errorf("INFO token %d line number = %d, want 1", i, line)
				}
			}
			pkt := toks[7].body
			if pkt[3] != envPacketSize {
				t.Fatalf("ENVCHANGE after FEATUREEXTACK has type %d, want packet size", pkt[3])
			}
			if got, want := pkt[4:], append([]byte{3}, append(toUCS2("512"), append([]byte{4}, toUCS2("4096")...)...)...); !bytes.Equal(got, want) {
				t.Errorf("packet-size ENVCHANGE values = % X, want new 512, old 4096", got)
			}
			l := s.Requests()[1].Login
			if !l.FeatureExt || len(l.Features) != len(tt.features) {
				t.Errorf("recorded features = %+v, want %d", l.Features, len(tt.features))
			}
		})
	}
}

// TestFeatureExtParseErrors: a broken FeatureExt block is a protocol error
// with a specific message, not a panic.
func TestFeatureExtParseErrors(t *testing.T) {
	good := withFeatures(login7("sa", "pw", "", 0), 0x74000004, Feature{ID: FeatureUTF8Support, Data: []byte{9}})
	tests := []struct {
		name  string
		patch func([]byte) []byte
		want  string
	}{
		{"no terminator", func(b []byte) []byte {
			b = b[:len(b)-1]
			binary.LittleEndian.PutUint32(b, uint32(len(b)))
			return b
		}, "no 0xFF terminator"},
		{"length beyond record", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[len(b)-6:], 1000)
			return b
		}, "says 1000 bytes"},
		{"offset outside", func(b []byte) []byte { binary.LittleEndian.PutUint16(b[56:], 0xFFF0); return b }, "ibExtension"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseLogin7(tt.patch(append([]byte(nil), good...)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	l, err := parseLogin7(good)
	if err != nil || len(l.Features) != 1 || l.Features[0].ID != FeatureUTF8Support || !bytes.Equal(l.Features[0].Data, []byte{9}) {
		t.Fatalf("parseLogin7 = %+v, %v", l.Features, err)
	}
}

func nvarcharParam(name, v string) []byte {
	b := toUCS2(v)
	return param(name, 0, cat([]byte{tNVarChar}, le16(uint16(len(b))), collation, le16(uint16(len(b))), b)...)
}

func varcharParam(name, v string) []byte {
	return param(name, 0, cat([]byte{tBigVarChar}, le16(uint16(len(v))), collation, le16(uint16(len(v))), []byte(v))...)
}

func intParam(name string, v int32) []byte {
	return param(name, 0, cat([]byte{tIntN, 4, 4}, le32(uint32(v)))...)
}

// TestExecuteSQLParameterNames: SQL Server's names for sp_executesql's
// parameters are @statement and @parameters (tedious sends them), the
// documented @stmt/@params work, unnamed ones go by position.
func TestExecuteSQLParameterNames(t *testing.T) {
	tests := []struct {
		name         string
		params       [][]byte
		stmt, decl   string
		wantBadParam string
	}{
		{"tedious names", [][]byte{nvarcharParam("@statement", "SELECT @a"), nvarcharParam("@params", "@a int"), intParam("@a", 1)}, "SELECT @a", "@a int", ""},
		{"SQL Server names", [][]byte{nvarcharParam("@statement", "SELECT @a"), nvarcharParam("@parameters", "@a int"), intParam("@a", 1)}, "SELECT @a", "@a int", ""},
		{"documented names", [][]byte{nvarcharParam("@stmt", "SELECT @a"), nvarcharParam("@params", "@a int"), intParam("@a", 1)}, "SELECT @a", "@a int", ""},
		{"positional", [][]byte{nvarcharParam("", "SELECT @a"), nvarcharParam("", "@a int"), intParam("@a", 1)}, "SELECT @a", "@a int", ""},
		{"varchar statement", [][]byte{varcharParam("@stmt", "SELECT 1")}, "SELECT 1", "", "@statement"},
		{"varchar declaration", [][]byte{nvarcharParam("", "SELECT @a"), varcharParam("", "@a int"), intParam("@a", 1)}, "SELECT @a", "@a int", "@parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := parseRPC(rpcByName("sp_executesql", tt.params...))
			if err != nil {
				t.Fatal(err)
			}
			stmt, decl, bad := executeSQLText(call.params)
			if stmt != tt.stmt || decl != tt.decl || bad != tt.wantBadParam {
				t.Errorf("executeSQLText = %q, %q, bad %q; want %q, %q, bad %q", stmt, decl, bad, tt.stmt, tt.decl, tt.wantBadParam)
			}
		})
	}
}

// loggedIn is a raw client past PRELOGIN and LOGIN7.
func loggedIn(t *testing.T, s *Server) *rawClient {
	t.Helper()
	c := dialRaw(t, s)
	c.send(packetPrelogin, 0, preloginBody(EncryptNotSup))
	c.readMsg()
	c.send(packetLogin7, 0, login7("sa", "pw", "", flag2ODBC))
	c.readMsg()
	return c
}

// TestVarcharStatementIsError214: SQL Server rejects a varchar statement
// with error 214 without running anything; the handler is not asked.
func TestVarcharStatementIsError214(t *testing.T) {
	s := Start(t, Config{Handler: func(Session, *Request) *Response {
		t.Error("handler called for a varchar @stmt")
		return NewResponse()
	}})
	c := loggedIn(t, s)
	c.send(packetRPC, 0, rpcByName("sp_executesql", varcharParam("@stmt", "SELECT 1")))
	toks := splitTokens(t, c.readMsg())
	if got := tokenTypes(toks); got != "AA 79 FE" {
		t.Fatalf("reply tokens = %s, want ERROR RETURNSTATUS DONEPROC", got)
	}
	if n := binary.LittleEndian.Uint32(toks[0].body[3:]); n != 214 {
		t.Errorf("error number = %d, want 214", n)
	}
	if !strings.Contains(fromUCS2(toks[0].body[11:]), "@statement") {
		t.Errorf("error text does not name @statement")
	}
	if st := binary.LittleEndian.Uint16(toks[2].body[1:]); st&doneError == 0 {
		t.Errorf("DONEPROC status %04X lacks DONE_ERROR", st)
	}
}

// TestNamedTransactionKeepsConnection: a named BEGIN TRANSACTION from the
// Transaction Manager (byte-length name) is answered, not dropped.
func TestNamedTransactionKeepsConnection(t *testing.T) {
	s := Start(t, Config{})
	c := loggedIn(t, s)
	c.send(packetTransMgr, 0, cat(allHeaders(0), le16(tmBegin), []byte{0, 6}, toUCS2("abc")))
	toks := splitTokens(t, c.readMsg())
	if got := tokenTypes(toks); got != "E3 FD" || toks[0].body[3] != envBeginTran {
		t.Fatalf("reply tokens = %s, want ENVCHANGE(begin) DONE", got)
	}
	c.send(packetTransMgr, 0, cat(allHeaders(0), le16(tmRollback), []byte{6}, toUCS2("abc"), []byte{0}))
	if got := tokenTypes(splitTokens(t, c.readMsg())); got != "E3 FD" {
		t.Fatalf("rollback reply tokens = %s", got)
	}
	var names []string
	for _, r := range requestsOf(s.Requests(), 0, KindTransaction) {
		names = append(names, r.Transaction.Op+" "+r.Transaction.Name)
	}
	if strings.Join(names, ",") != "begin abc,rollback abc" {
		t.Errorf("recorded transactions = %q", names)
	}
}

// TestWireDetailsAsRealServers checks the byte-level details real SQL
// Server traffic shows.
func TestWireDetailsAsRealServers(t *testing.T) {
	t.Run("column flags", func(t *testing.T) {
		for _, tt := range []struct {
			col  Column
			want uint16
		}{
			{Int("a"), 0x0009},
			{Int("a").NotNull(), 0x0008},
			{Int("a").Expression(), 0x0021},
			{Int("a").NotNull().Expression(), 0x0020},
			{ShowplanColumn(), 0x0021},
		} {
			var w writer
			tt.col.writeMeta(&w)
			if got := binary.LittleEndian.Uint16(w.buf[4:]); got != tt.want {
				t.Errorf("%s flags = %04X, want %04X", tt.col.Name, got, tt.want)
			}
		}
	})
	t.Run("RETURNVALUE status and flags", func(t *testing.T) {
		var w writer
		if err := w.returnValue(2, returnValue{name: "@x", col: Int(""), value: int64(5)}); err != nil {
			t.Fatal(err)
		}
		// token, ordinal(2), name(1+4), status(1), usertype(4), flags(2)
		if status, flags := w.buf[8], binary.LittleEndian.Uint16(w.buf[13:]); status != 0x01 || flags != 0 {
			t.Errorf("RETURNVALUE status %02X flags %04X, want 01 and 0000", status, flags)
		}
	})
	t.Run("RETURNSTATUS after an error", func(t *testing.T) {
		var w writer
		resp := NewResponse().Error(ErrInvalidObject("dbo.Nope"), Message{Number: 8180, Class: 16, Text: "Statement(s) could not be prepared."})
		if _, err := resp.encode(&w, encodeContext{rpc: true}); err != nil {
			t.Fatal(err)
		}
		toks := splitTokens(t, w.buf)
		if got := tokenTypes(toks); got != "AA AA 79 FE" {
			t.Fatalf("tokens %s", got)
		}
		if v := binary.LittleEndian.Uint32(toks[2].body[1:]); v != 8180 {
			t.Errorf("RETURNSTATUS = %d, want 8180 (the last error)", v)
		}
		w.buf = nil
		if _, err := NewResponse().Error(ErrInvalidObject("x")).ReturnStatus(-6).encode(&w, encodeContext{rpc: true}); err != nil {
			t.Fatal(err)
		}
		if v := int32(binary.LittleEndian.Uint32(splitTokens(t, w.buf)[1].body[1:])); v != -6 {
			t.Errorf("explicit RETURNSTATUS = %d, want -6", v)
		}
	})
	t.Run("NOCOUNT clears DONE_COUNT", func(t *testing.T) {
		for _, noCount := range []bool{false, true} {
			var w writer
			if _, err := NewResponse().RowCount(CmdUpdate, 3).encode(&w, encodeContext{noCount: noCount}); err != nil {
				t.Fatal(err)
			}
			status := binary.LittleEndian.Uint16(w.buf[1:])
			if got := status&doneCount != 0; got == noCount {
				t.Errorf("NOCOUNT %v: DONE status %04X", noCount, status)
			}
		}
	})
}

// TestAttentionReplyIsTwoMessages: after an ATTENTION, SQL Server ends the
// interrupted response and then sends DONE with DONE_ATTN as a message of
// its own.
func TestAttentionReplyIsTwoMessages(t *testing.T) {
	s := Start(t, Config{Handler: func(Session, *Request) *Response {
		return NewResponse().Result(NewResultSet(Int("n")).Row(1)).Delay(time.Minute)
	}})
	c := loggedIn(t, s)
	var batch writer
	batch.raw(allHeaders(0))
	batch.raw(toUCS2("WAITFOR DELAY '00:01:00'"))
	c.send(packetSQLBatch, 0, batch.buf)
	waitForRequest(t, s, "WAITFOR")
	c.send(packetAttention, 0, nil)
	first := splitTokens(t, c.readMsg())
	if got := tokenTypes(first); got != "FD" {
		t.Fatalf("first message tokens = %s, want the DONE ending the interrupted response", got)
	}
	if st := binary.LittleEndian.Uint16(first[0].body[1:]); st&(doneAttn|doneMore) != 0 {
		t.Errorf("interrupted response's DONE status %04X has ATTN or MORE", st)
	}
	second := splitTokens(t, c.readMsg())
	if got := tokenTypes(second); got != "FD" || binary.LittleEndian.Uint16(second[0].body[1:]) != doneAttn {
		t.Fatalf("second message = % X, want DONE with DONE_ATTN only", second)
	}
	// Still usable.
	var ping writer
	ping.raw(allHeaders(0))
	ping.raw(toUCS2("SELECT 1"))
	c.send(packetSQLBatch, 0, ping.buf)
	c.readMsg()
}

// TestEmptyResponseIsBareDone: NewResponse() sent as is ends a batch with
// one DONE (it used to send an empty message, which clients read as EOF).
func TestEmptyResponseIsBareDone(t *testing.T) {
	var w writer
	if _, err := NewResponse().encode(&w, encodeContext{}); err != nil {
		t.Fatal(err)
	}
	toks := splitTokens(t, w.buf)
	if tokenTypes(toks) != "FD" || binary.LittleEndian.Uint16(toks[0].body[1:])&doneMore != 0 {
		t.Fatalf("empty batch response = % X, want one final DONE", w.buf)
	}
}
