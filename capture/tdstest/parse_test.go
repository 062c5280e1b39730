package tdstest

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"
)

// allHeaders is the ALL_HEADERS block go-mssqldb sends outside a transaction.
func allHeaders(tranID uint64) []byte {
	var w writer
	w.u32(22)
	w.u32(18)
	w.u16(2)
	w.u64(tranID)
	w.u32(1)
	return w.buf
}

// rpcByName builds an RPC body calling proc with raw parameter bytes.
func rpcByName(proc string, params ...[]byte) []byte {
	var w writer
	w.raw(allHeaders(0))
	w.usVarChar(proc)
	w.u16(0)
	for _, p := range params {
		w.raw(p)
	}
	return w.buf
}

// param builds one parameter: name, status, then TYPE_INFO and value bytes.
func param(name string, status byte, typeAndValue ...byte) []byte {
	var w writer
	w.bVarChar(name)
	w.u8(status)
	w.raw(typeAndValue)
	return w.buf
}

func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var collation = []byte{0x09, 0x04, 0xD0, 0x00, 0x34}

func TestParseParamTypes(t *testing.T) {
	nv := func(maxBytes uint16) []byte { return cat([]byte{0xE7}, le16(maxBytes), collation) }
	tests := []struct {
		name      string
		raw       []byte
		wantType  string
		wantValue any
	}{
		{"INT1", []byte{0x30, 200}, "tinyint", int64(200)},
		{"INT2", cat([]byte{0x34}, le16(0xFFFE)), "smallint", int64(-2)},
		{"INT4", cat([]byte{0x38}, le32(0xFFFFFFFF)), "int", int64(-1)},
		{"INT8", cat([]byte{0x7F}, le64(1<<62)), "bigint", int64(1 << 62)},
		{"BIT", []byte{0x32, 1}, "bit", true},
		{"FLT4", cat([]byte{0x3B}, le32(math.Float32bits(2.5))), "real", 2.5},
		{"FLT8", cat([]byte{0x3E}, le64(math.Float64bits(-0.125))), "float", -0.125},
		{"MONEY4", cat([]byte{0x7A}, le32(12345)), "smallmoney", "1.2345"},
		{"MONEY negative", cat([]byte{0x3C}, le32(0xFFFFFFFF), le32(0xFFFFFFFF-9999)), "money", "-1.0000"},
		{"SMALLDATETIME", cat([]byte{0x3A}, le16(1), le16(61)), "smalldatetime", time.Date(1900, 1, 2, 1, 1, 0, 0, time.UTC)},
		{"DATETIME", cat([]byte{0x3D}, le32(0), le32(300*3600+1)), "datetime", time.Date(1900, 1, 1, 1, 0, 0, 3333300, time.UTC)},
		{"INTN 2", cat([]byte{0x26, 2, 2}, le16(7)), "smallint", int64(7)},
		{"INTN NULL", []byte{0x26, 4, 0}, "int", nil},
		{"BITN", []byte{0x68, 1, 1, 0}, "bit", false},
		{"FLTN 4", cat([]byte{0x6D, 4, 4}, le32(math.Float32bits(1))), "real", 1.0},
		{"DECIMALN", cat([]byte{0x6A, 5, 5, 2, 5, 1}, le32(12345)), "decimal(5,2)", "123.45"},
		{"DECIMALN negative small", cat([]byte{0x6A, 9, 18, 4, 9, 0}, le64(5)), "decimal(18,4)", "-0.0005"},
		{"NUMERICN", cat([]byte{0x6C, 17, 38, 0, 17, 1}, le64(math.MaxUint64), le64(1)), "numeric(38,0)", "36893488147419103231"},
		{"DECIMALN NULL", []byte{0x6A, 5, 9, 0, 0}, "decimal(9,0)", nil},
		{"MONEYN 8", cat([]byte{0x6E, 8, 8}, le32(0), le32(10000)), "money", "1.0000"},
		{"DATETIMN 4", cat([]byte{0x6F, 4, 4}, le16(0), le16(0)), "smalldatetime", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"GUID", cat([]byte{0x24, 16, 16}, []byte{0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}),
			"uniqueidentifier", "6F9619FF-8B86-11D0-B42D-00C04FC964FF"},
		{"GUID NULL", []byte{0x24, 16, 0}, "uniqueidentifier", nil},
		{"DATEN", []byte{0x28, 3, 1, 0, 0}, "date", time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"TIMEN 3", cat([]byte{0x29, 3, 4}, le32(1500)), "time(3)", time.Date(1, 1, 1, 0, 0, 1, 500_000_000, time.UTC)},
		{"DATETIME2N 0", []byte{0x2A, 0, 6, 10, 0, 0, 0, 0, 0}, "datetime2(0)", time.Date(1, 1, 1, 0, 0, 10, 0, time.UTC)},
		{"DATETIMEOFFSETN 0", cat([]byte{0x2B, 0, 8, 0, 0, 0, 1, 0, 0}, le16(0xFFFF-299)), "datetimeoffset(0)",
			time.Date(1, 1, 1, 19, 0, 0, 0, time.FixedZone("", -5*3600))},
		{"NVARCHAR", cat(nv(8), le16(4), []byte{'h', 0, 'i', 0}), "nvarchar(4)", "hi"},
		{"NVARCHAR NULL", cat(nv(8), le16(0xFFFF)), "nvarchar(4)", nil},
		{"NVARCHAR(MAX) chunks", cat(nv(0xFFFF), le64(6), le32(2), []byte{'a', 0}, le32(4), []byte{'b', 0, 'c', 0}, le32(0)), "nvarchar(max)", "abc"},
		{"NVARCHAR(MAX) unknown length", cat(nv(0xFFFF), le64(math.MaxUint64-1), le32(2), []byte{'z', 0}, le32(0)), "nvarchar(max)", "z"},
		{"NVARCHAR(MAX) NULL", cat(nv(0xFFFF), le64(math.MaxUint64)), "nvarchar(max)", nil},
		{"NCHAR", cat([]byte{0xEF}, le16(2), collation, le16(2), []byte{'x', 0}), "nchar(1)", "x"},
		{"BIGVARCHAR", cat([]byte{0xA7}, le16(10), collation, le16(3), []byte("abc")), "varchar(10)", "abc"},
		{"BIGCHAR", cat([]byte{0xAF}, le16(2), collation, le16(2), []byte("ab")), "char(2)", "ab"},
		{"VARCHAR(MAX)", cat([]byte{0xA7}, le16(0xFFFF), collation, le64(1), le32(1), []byte("q"), le32(0)), "varchar(max)", "q"},
		{"BIGVARBIN", cat([]byte{0xA5}, le16(4), le16(2), []byte{1, 2}), "varbinary(4)", []byte{1, 2}},
		{"VARBINARY(MAX)", cat([]byte{0xA5}, le16(0xFFFF), le64(0), le32(0)), "varbinary(max)", []byte{}},
		{"BIGBINARY", cat([]byte{0xAD}, le16(1), le16(1), []byte{9}), "binary(1)", []byte{9}},
		{"NULLTYPE", []byte{0x1F}, "null", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := parseRPC(rpcByName("dbo.p", param("@v", 0, tt.raw...)))
			if err != nil {
				t.Fatal(err)
			}
			if len(call.params) != 1 {
				t.Fatalf("got %d parameters", len(call.params))
			}
			p := call.params[0]
			if p.Name != "@v" || p.Type != tt.wantType || !equalValue(p.Value, tt.wantValue) {
				t.Errorf("got %s %s = %#v, want %s = %#v", p.Name, p.Type, p.Value, tt.wantType, tt.wantValue)
			}
		})
	}
}

func TestParseRPCErrors(t *testing.T) {
	nvMax := cat([]byte{0xE7}, le16(0xFFFF), collation)
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{"empty", nil, "ALL_HEADERS TotalLength needs 4 bytes"},
		{"headers longer than message", cat(le32(1000), le32(0)), "TotalLength 1000 does not fit"},
		{"header length zero", cat(le32(10), le32(0), le16(2)), "has length 0"},
		{"proc name cut", cat(allHeaders(0), le16(5), []byte{'a', 0}), "procedure name needs 10 bytes"},
		{"no option flags", cat(allHeaders(0), le16(0xFFFF), le16(10)), "option flags needs 2 bytes"},
		{"unsupported type", rpcByName("p", param("@x", 0, 0xF1, 0)), "@x: unsupported TDS type 0xF1"},
		{"bad INTN length", rpcByName("p", param("@x", 0, 0x26, 3, 3, 1, 2, 3)), "invalid length 3"},
		{"bad INTN value length", rpcByName("p", param("@x", 0, 0x26, 4, 2, 1, 2)), "value length 2 is invalid"},
		{"bad decimal precision", rpcByName("p", param("@x", 0, 0x6A, 5, 0, 0, 0)), "precision 0, scale 0 is invalid"},
		{"scale too big", rpcByName("p", param("@x", 0, 0x2A, 8)), "scale 8 is above 7"},
		{"value longer than max", rpcByName("p", param("@x", 0, cat([]byte{0xE7}, le16(2), collation, le16(4), []byte("abcd"))...)), "exceeds the declared maximum 2"},
		{"odd UCS-2", rpcByName("p", param("@x", 0, cat([]byte{0xE7}, le16(4), collation, le16(3), []byte("abc"))...)), "odd number of bytes"},
		{"truncated value", rpcByName("p", param("@x", 0, 0x38, 1, 2)), "value needs 4 bytes, 2 left"},
		{"truncated INTN value", rpcByName("p", param("@x", 0, 0x26, 8, 8, 1)), "value needs 8 bytes, 1 left"},
		{"encrypted", rpcByName("p", param("@x", 0x08, 0x38, 1, 2, 3, 4)), "Always Encrypted"},
		{"PLP total mismatch", rpcByName("p", param("@x", 0, cat(nvMax, le64(1<<30), le32(2), []byte{'a', 0}, le32(0))...)), "says 1073741824 bytes, chunks hold 2"},
		{"PLP chunk beyond end", rpcByName("p", param("@x", 0, cat(nvMax, le64(math.MaxUint64-1), le32(1<<30), []byte{'a', 0})...)), "PLP chunk needs 1073741824 bytes"},
		{"PLP without terminator", rpcByName("p", param("@x", 0, cat(nvMax, le64(2), le32(2), []byte{'a', 0})...)), "PLP chunk length needs 4 bytes"},
		{"NCHAR as PLP", rpcByName("p", param("@x", 0, cat([]byte{0xEF}, le16(0xFFFF), collation)...)), "cannot be PLP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseRPC(tt.body)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseRPCProcedures(t *testing.T) {
	byID := cat(allHeaders(7), le16(0xFFFF), le16(10), le16(0),
		param("", 0, cat([]byte{0xE7}, le16(2), collation, le16(2), []byte{'x', 0})...),
		param("", 0, cat([]byte{0xE7}, le16(2), collation, le16(2), []byte{'y', 0})...))
	call, err := parseRPC(byID)
	if err != nil {
		t.Fatal(err)
	}
	if call.proc != "sp_executesql" || call.procID != 10 || call.tranID != 7 || !isExecuteSQL(call) {
		t.Errorf("by id: %+v", call)
	}
	if stmt, decl, bad := executeSQLText(call.params); stmt != "x" || decl != "y" || bad != "" {
		t.Errorf("by position: stmt %q decl %q", stmt, decl)
	}
	for name, want := range map[string]bool{"sp_executesql": true, "SP_EXECUTESQL": true, "sys.sp_executesql": true,
		"[sys].[sp_executesql]": true, "sp_get_query_template": false, "dbo.sp_executesql_x": false} {
		if got := isExecuteSQL(rpcCall{proc: name}); got != want {
			t.Errorf("isExecuteSQL(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestParseBatch(t *testing.T) {
	sql, tran, err := parseBatch(cat(allHeaders(9), toUCS2("select 1; -- 𝔘")))
	if err != nil || sql != "select 1; -- 𝔘" || tran != 9 {
		t.Fatalf("got %q, %d, %v", sql, tran, err)
	}
	if _, _, err := parseBatch(cat(allHeaders(0), []byte{'a'})); err == nil || !strings.Contains(err.Error(), "odd number of bytes") {
		t.Fatalf("odd batch: err = %v", err)
	}
}

func TestParseTransMgr(t *testing.T) {
	var name writer
	name.bVarChar("")
	// tedious names transactions; the length byte counts bytes of UCS-2.
	named := cat([]byte{6}, toUCS2("abc"))
	tests := []struct {
		name string
		body []byte
		want Transaction
		err  string
	}{
		{"begin", cat(allHeaders(0), le16(5), []byte{2}, name.buf), Transaction{Op: "begin", Type: 5, Isolation: 2}, ""},
		{"commit", cat(allHeaders(3), le16(7), name.buf, []byte{0}), Transaction{Op: "commit", Type: 7}, ""},
		{"rollback and begin", cat(allHeaders(3), le16(8), name.buf, []byte{1, 4}, name.buf), Transaction{Op: "rollback", Type: 8, Isolation: 4, BeginNew: true}, ""},
		{"save", cat(allHeaders(3), le16(9), name.buf), Transaction{Op: "save", Type: 9}, ""},
		{"other", cat(allHeaders(3), le16(1)), Transaction{Op: "other", Type: 1}, ""},
		{"named begin", cat(allHeaders(0), le16(5), []byte{0}, named), Transaction{Op: "begin", Type: 5, Name: "abc"}, ""},
		{"named commit", cat(allHeaders(3), le16(7), named, []byte{0}), Transaction{Op: "commit", Type: 7, Name: "abc"}, ""},
		{"named rollback and begin", cat(allHeaders(3), le16(8), named, []byte{1, 0}, named), Transaction{Op: "rollback", Type: 8, Name: "abc", BeginNew: true}, ""},
		{"named save", cat(allHeaders(3), le16(9), named), Transaction{Op: "save", Type: 9, Name: "abc"}, ""},
		{"odd name length", cat(allHeaders(3), le16(9), []byte{3, 'a', 0, 'b'}), Transaction{}, "odd byte length 3"},
		{"cut short", cat(allHeaders(3), le16(5)), Transaction{}, "isolation level needs 1 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseTransMgr(tt.body)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// login7 builds a LOGIN7 record the way go-mssqldb lays it out.
func login7(user, password, db string, flags2 byte) []byte {
	fields := [][]byte{toUCS2("host"), toUCS2(user), obfuscate(toUCS2(password)), toUCS2("app"), toUCS2("srv"),
		nil, toUCS2("go-mssqldb"), nil, toUCS2(db)}
	hdr := make([]byte, login7FixedSize)
	binary.LittleEndian.PutUint32(hdr[4:], 0x74000004)
	binary.LittleEndian.PutUint32(hdr[8:], 512)
	hdr[24], hdr[25] = 0xA0, flags2
	off := login7FixedSize
	var data []byte
	for i, f := range fields {
		binary.LittleEndian.PutUint16(hdr[36+4*i:], uint16(off))
		binary.LittleEndian.PutUint16(hdr[38+4*i:], uint16(len(f)/2))
		off += len(f)
		data = append(data, f...)
	}
	out := append(hdr, data...)
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}

func TestParseLogin7(t *testing.T) {
	l, err := parseLogin7(login7("sa", "pä$$wörd", "Queues", flag2ODBC))
	if err != nil {
		t.Fatal(err)
	}
	if l.UserName != "sa" || l.Password != "pä$$wörd" || l.Database != "Queues" || l.HostName != "host" ||
		l.AppName != "app" || l.ServerName != "srv" || l.Library != "go-mssqldb" || !l.ODBC || l.IntegratedSecurity || l.PacketSize != 512 {
		t.Errorf("login = %+v", l)
	}
	tests := []struct {
		name  string
		patch func([]byte) []byte
		want  string
	}{
		{"short", func(b []byte) []byte { return b[:50] }, "the fixed header alone is 94"},
		{"length beyond message", func(b []byte) []byte { binary.LittleEndian.PutUint32(b, 1<<30); return b }, "Length field says 1073741824"},
		{"field outside record", func(b []byte) []byte { binary.LittleEndian.PutUint16(b[42:], 0xFFFF); return b }, "UserName at offset"},
		{"field inside header", func(b []byte) []byte { binary.LittleEndian.PutUint16(b[40:], 10); return b }, "UserName at offset 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseLogin7(tt.patch(login7("sa", "pw", "db", 0)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParsePrelogin(t *testing.T) {
	p, err := parsePrelogin(preloginReply(EncryptNotSup))
	if err != nil || p.Encryption != EncryptNotSup || len(p.Options) != 5 {
		t.Fatalf("own reply: %+v, %v", p, err)
	}
	for name, body := range map[string][]byte{
		"no terminator":   {0x01, 0, 5, 0, 1},
		"cut option":      {0x01, 0, 5},
		"value past end":  {0x01, 0, 6, 0, 4, 0xFF},
		"long ENCRYPTION": {0x01, 0, 6, 0, 2, 0xFF, 0, 0},
	} {
		if _, err := parsePrelogin(body); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReadMessage(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 200)
	wire := packetize(packetSQLBatch, body, 512)
	wire[1] |= statusResetConnection
	m, err := readMessage(bytes.NewReader(wire))
	if err != nil || m.typ != packetSQLBatch || m.status&statusResetConnection == 0 || !bytes.Equal(m.body, body) {
		t.Fatalf("multi-packet message: type %x status %x %d bytes, %v", m.typ, m.status, len(m.body), err)
	}
	mixed := append(packetize(packetSQLBatch, body, 512)[:512], packetize(packetRPC, []byte{1}, 512)...)
	mixed[1] = 0
	if _, err := readMessage(bytes.NewReader(mixed)); err == nil || !strings.Contains(err.Error(), "type 0x03 inside a message of type 0x01") {
		t.Errorf("mixed types: err = %v", err)
	}
	short := []byte{0x01, 0x01, 0x00, 0x04, 0, 0, 1, 0}
	if _, err := readMessage(bytes.NewReader(short)); err == nil || !strings.Contains(err.Error(), "shorter than the 8-byte header") {
		t.Errorf("short length: err = %v", err)
	}
	cut := []byte{0x01, 0x01, 0xFF, 0xFF, 0, 0, 1, 0, 'x'}
	if _, err := readMessage(bytes.NewReader(cut)); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Errorf("cut payload: err = %v", err)
	}
}

// allocated reports the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeDeclaredLengthsAllocateLittle checks that lengths taken from the
// wire are validated against the bytes present before any allocation.
func TestHugeDeclaredLengthsAllocateLittle(t *testing.T) {
	const gig = 1 << 30
	nvMax := cat([]byte{0xE7}, le16(0xFFFF), collation)
	tests := []struct {
		name  string
		parse func() error
	}{
		{"PLP total 1 GB", func() error {
			_, err := parseRPC(rpcByName("p", param("@x", 0, cat(nvMax, le64(gig), le32(2), []byte{'a', 0}, le32(0))...)))
			return err
		}},
		{"PLP chunk 1 GB", func() error {
			_, err := parseRPC(rpcByName("p", param("@x", 0, cat(nvMax, le64(math.MaxUint64-1), le32(gig), []byte{'a', 0})...)))
			return err
		}},
		{"PLP chunk 4 GB", func() error {
			_, err := parseRPC(rpcByName("p", param("@x", 0, cat(nvMax, le64(math.MaxUint64-1), le32(math.MaxUint32))...)))
			return err
		}},
		{"ALL_HEADERS 1 GB", func() error { _, err := parseRPC(cat(le32(gig), le32(0))); return err }},
		{"LOGIN7 length 1 GB", func() error {
			b := login7("sa", "pw", "db", 0)
			binary.LittleEndian.PutUint32(b, gig)
			_, err := parseLogin7(b)
			return err
		}},
		{"packet claims 64 KB", func() error {
			_, err := readMessage(bytes.NewReader([]byte{0x01, 0x01, 0xFF, 0xFF, 0, 0, 1, 0}))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			n := allocated(func() { err = tt.parse() })
			if err == nil {
				t.Error("no error for a length that does not fit")
			}
			if n > 1<<20 {
				t.Errorf("allocated %d bytes for a tiny input", n)
			}
		})
	}
}
