package tdstest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

// Kind is the kind of a recorded client message.
type Kind int

// Request kinds.
const (
	KindPrelogin Kind = iota + 1
	KindLogin
	KindBatch
	KindRPC
	KindTransaction
	KindAttention
)

func (k Kind) String() string {
	switch k {
	case KindPrelogin:
		return "prelogin"
	case KindLogin:
		return "login"
	case KindBatch:
		return "batch"
	case KindRPC:
		return "rpc"
	case KindTransaction:
		return "transaction"
	case KindAttention:
		return "attention"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Well-known RPC procedure ids (MS-TDS 2.2.6.6).
const (
	ProcExecuteSQL = 10
	ProcPrepare    = 11
	ProcExecute    = 12
	ProcPrepExec   = 13
	ProcUnprepare  = 15
)

var procNames = map[int]string{
	1: "sp_cursor", 2: "sp_cursoropen", 3: "sp_cursorprepare", 4: "sp_cursorexecute",
	5: "sp_cursorprepexec", 6: "sp_cursorunprepare", 7: "sp_cursorfetch", 8: "sp_cursoroption",
	9: "sp_cursorclose", 10: "sp_executesql", 11: "sp_prepare", 12: "sp_execute",
	13: "sp_prepexec", 14: "sp_prepexecrpc", 15: "sp_unprepare",
}

// Param is one RPC parameter as sent.
type Param struct {
	Name    string // with its leading @, empty when sent by position
	Output  bool   // fByRefValue: OUTPUT parameter
	Default bool   // fDefaultValue: use the procedure's default
	TypeID  byte   // TDS type token, e.g. 0x26 for INTN
	Type    string // the declared type as T-SQL, e.g. "bigint", "nvarchar(max)"
	// Value is nil for NULL, else int64, bool, float64, string (character
	// types; decimal, numeric and money as exact decimal text; uniqueidentifier
	// in its usual 8-4-4-4-12 form), []byte, or time.Time (date, time,
	// datetime*, datetimeoffset; time of day on 0001-01-01).
	Value any
}

// Transaction is a Transaction Manager request.
type Transaction struct {
	Op        string // "begin", "commit", "rollback", "save" or "other"
	Type      uint16 // request type code (5 begin, 7 commit, 8 rollback, 9 save)
	Isolation byte   // isolation level byte of a begin (0 = unchanged)
	Name      string
	// BeginNew is set for a commit or rollback that also begins a new transaction.
	BeginNew bool
}

// Request is one recorded client message.
type Request struct {
	Conn  int  // connection number, from 1
	Seq   int  // position in the server-wide record, from 1
	Kind  Kind //
	Reset bool // RESETCONNECTION or RESETCONNECTIONSKIPTRAN was set
	// SQL is the batch text, or for sp_executesql the statement.
	SQL string
	// Proc is the procedure name: as sent for an RPC by name, or the
	// well-known name of a procedure id. ProcID is 0 for RPCs by name.
	Proc   string
	ProcID int
	Params []Param
	// ParamDecl is sp_executesql's parameter declaration string.
	ParamDecl string
	// TransactionID is the transaction descriptor from ALL_HEADERS.
	TransactionID uint64
	Transaction   *Transaction
	Prelogin      *Prelogin
	Login         *Login
	// Session is the connection state when the request arrived, after any
	// RESETCONNECTION it asked for: the state it ran under.
	Session Session
	// After is the connection state once the request was answered; it
	// differs from Session for SET, USE and transaction requests.
	After Session
	// Raw is the message body as received, without packet headers.
	Raw []byte
}

func (r Request) clone() Request {
	r.Params = append([]Param(nil), r.Params...)
	for i, p := range r.Params {
		if b, ok := p.Value.([]byte); ok {
			r.Params[i].Value = append([]byte(nil), b...)
		}
	}
	if r.Transaction != nil {
		t := *r.Transaction
		r.Transaction = &t
	}
	if r.Prelogin != nil {
		p := *r.Prelogin
		p.Options = append([]byte(nil), p.Options...)
		r.Prelogin = &p
	}
	if r.Login != nil {
		l := *r.Login
		r.Login = &l
	}
	r.Raw = append([]byte(nil), r.Raw...)
	return r
}

// Describe is a one-line summary used in error messages.
func (r Request) Describe() string {
	switch r.Kind {
	case KindBatch:
		return fmt.Sprintf("batch %q", shorten(r.SQL))
	case KindRPC:
		s := "rpc " + r.Proc
		if r.SQL != "" {
			s += fmt.Sprintf(" %q", shorten(r.SQL))
		}
		if r.ParamDecl != "" {
			s += fmt.Sprintf(" (%s)", r.ParamDecl)
		}
		return s
	case KindTransaction:
		if r.Transaction != nil {
			return "transaction " + r.Transaction.Op
		}
	}
	return r.Kind.String()
}

func shorten(s string) string {
	r := []rune(s)
	if len(r) > 120 {
		return string(r[:120]) + "…"
	}
	return s
}

// skipAllHeaders reads ALL_HEADERS and returns the transaction descriptor.
func skipAllHeaders(r *reader) (uint64, error) {
	total, err := r.u32("ALL_HEADERS TotalLength")
	if err != nil {
		return 0, err
	}
	if total < 4 || int64(total)-4 > int64(r.remaining()) {
		return 0, fmt.Errorf("ALL_HEADERS: TotalLength %d does not fit the %d-byte message", total, len(r.buf))
	}
	h := &reader{buf: r.buf[:r.off+int(total)-4], off: r.off}
	r.off += int(total) - 4
	var tranID uint64
	for h.remaining() > 0 {
		start := h.off
		n, err := h.u32("header length")
		if err != nil {
			return 0, fmt.Errorf("ALL_HEADERS: %w", err)
		}
		if n < 6 || int64(n)-4 > int64(h.remaining()) {
			return 0, fmt.Errorf("ALL_HEADERS: header at offset %d has length %d", start, n)
		}
		typ, _ := h.u16("header type")
		data, _ := h.bytes(int(n)-6, "header data")
		if typ == 2 && len(data) >= 8 { // transaction descriptor
			tranID = binary.LittleEndian.Uint64(data)
		}
	}
	return tranID, nil
}

// parseBatch parses a SQLBatch body: ALL_HEADERS, then UCS-2 text.
func parseBatch(b []byte) (sql string, tranID uint64, err error) {
	r := &reader{buf: b}
	if tranID, err = skipAllHeaders(r); err != nil {
		return "", 0, fmt.Errorf("SQL batch: %w", err)
	}
	if r.remaining()%2 != 0 {
		return "", 0, fmt.Errorf("SQL batch: text has an odd number of bytes (%d)", r.remaining())
	}
	return fromUCS2(r.buf[r.off:]), tranID, nil
}

// rpcCall is a parsed RPC request body.
type rpcCall struct {
	proc   string
	procID int
	params []Param
	tranID uint64
}

// parseRPC parses an RPC body. Only one call per message is supported
// (go-mssqldb never batches RPCs).
func parseRPC(b []byte) (rpcCall, error) {
	var c rpcCall
	r := &reader{buf: b}
	var err error
	if c.tranID, err = skipAllHeaders(r); err != nil {
		return c, fmt.Errorf("RPC: %w", err)
	}
	n, err := r.u16("procedure name length")
	if err != nil {
		return c, fmt.Errorf("RPC: %w", err)
	}
	if n == 0xFFFF {
		id, err := r.u16("procedure id")
		if err != nil {
			return c, fmt.Errorf("RPC: %w", err)
		}
		c.procID = int(id)
		c.proc = procNames[c.procID]
		if c.proc == "" {
			c.proc = fmt.Sprintf("proc id %d", id)
		}
	} else {
		name, err := r.bytes(2*int(n), "procedure name")
		if err != nil {
			return c, fmt.Errorf("RPC: %w", err)
		}
		c.proc = fromUCS2(name)
	}
	if _, err := r.u16("option flags"); err != nil {
		return c, fmt.Errorf("RPC %s: %w", c.proc, err)
	}
	for r.remaining() > 0 {
		p, err := parseParam(r)
		if err != nil {
			return c, fmt.Errorf("RPC %s: parameter %d: %w", c.proc, len(c.params)+1, err)
		}
		c.params = append(c.params, p)
	}
	return c, nil
}

// Parameter status flags.
const (
	paramByRef     = 0x01
	paramDefault   = 0x02
	paramEncrypted = 0x08
)

// parseParam reads name, status, TYPE_INFO and value of one parameter.
func parseParam(r *reader) (Param, error) {
	var p Param
	var err error
	if p.Name, err = r.bVarChar("name"); err != nil {
		return p, err
	}
	status, err := r.u8("status flags")
	if err != nil {
		return p, err
	}
	p.Output = status&paramByRef != 0
	p.Default = status&paramDefault != 0
	if status&paramEncrypted != 0 {
		return p, fmt.Errorf("%s: encrypted parameters (Always Encrypted) are not supported", nameOr(p.Name))
	}
	ti, err := parseTypeInfo(r)
	if err != nil {
		return p, fmt.Errorf("%s: %w", nameOr(p.Name), err)
	}
	p.TypeID, p.Type = ti.id, ti.sqlType()
	if p.Value, err = ti.readValue(r); err != nil {
		return p, fmt.Errorf("%s (%s): %w", nameOr(p.Name), p.Type, err)
	}
	return p, nil
}

func nameOr(name string) string {
	if name == "" {
		return "unnamed"
	}
	return name
}

// TDS type tokens of parameters (MS-TDS 2.2.5.4).
const (
	tNull       = 0x1F
	tInt1       = 0x30
	tBit        = 0x32
	tInt2       = 0x34
	tInt4       = 0x38
	tDateTim4   = 0x3A
	tFlt4       = 0x3B
	tMoney      = 0x3C
	tDateTime   = 0x3D
	tFlt8       = 0x3E
	tMoney4     = 0x7A
	tInt8       = 0x7F
	tGUID       = 0x24
	tIntN       = 0x26
	tBitN       = 0x68
	tDecimalN   = 0x6A
	tNumericN   = 0x6C
	tFltN       = 0x6D
	tMoneyN     = 0x6E
	tDateTimeN  = 0x6F
	tDateN      = 0x28
	tTimeN      = 0x29
	tDateTime2N = 0x2A
	tDTOffsetN  = 0x2B
	tBigVarBin  = 0xA5
	tBigVarChar = 0xA7
	tBigBinary  = 0xAD
	tBigChar    = 0xAF
	tNVarChar   = 0xE7
	tNChar      = 0xEF
)

// typeInfo is a parsed TYPE_INFO.
type typeInfo struct {
	id    byte
	size  int // fixed size, BYTELEN max, or USHORTLEN max (0xFFFF = PLP)
	prec  byte
	scale byte
	fixed bool
	plp   bool
}

var fixedSizes = map[byte]int{
	tNull: 0, tInt1: 1, tBit: 1, tInt2: 2, tInt4: 4, tDateTim4: 4, tFlt4: 4,
	tMoney4: 4, tMoney: 8, tDateTime: 8, tFlt8: 8, tInt8: 8,
}

func parseTypeInfo(r *reader) (typeInfo, error) {
	id, err := r.u8("type")
	if err != nil {
		return typeInfo{}, err
	}
	ti := typeInfo{id: id}
	if n, ok := fixedSizes[id]; ok {
		ti.fixed, ti.size = true, n
		return ti, nil
	}
	switch id {
	case tIntN, tBitN, tFltN, tMoneyN, tDateTimeN, tGUID, tDecimalN, tNumericN:
		n, err := r.u8("max length")
		if err != nil {
			return ti, err
		}
		ti.size = int(n)
		if !validByteLen(id, ti.size) {
			return ti, fmt.Errorf("type 0x%02X: invalid length %d", id, n)
		}
		if id == tDecimalN || id == tNumericN {
			if ti.prec, err = r.u8("precision"); err != nil {
				return ti, err
			}
			if ti.scale, err = r.u8("scale"); err != nil {
				return ti, err
			}
			if ti.prec < 1 || ti.prec > 38 || ti.scale > ti.prec {
				return ti, fmt.Errorf("decimal precision %d, scale %d is invalid", ti.prec, ti.scale)
			}
		}
	case tDateN:
		ti.size = 3
	case tTimeN, tDateTime2N, tDTOffsetN:
		if ti.scale, err = r.u8("scale"); err != nil {
			return ti, err
		}
		if ti.scale > 7 {
			return ti, fmt.Errorf("type 0x%02X: scale %d is above 7", id, ti.scale)
		}
	case tNVarChar, tNChar, tBigVarChar, tBigChar, tBigVarBin, tBigBinary:
		n, err := r.u16("max length")
		if err != nil {
			return ti, err
		}
		ti.size = int(n)
		ti.plp = n == 0xFFFF
		if ti.plp && (id == tNChar || id == tBigChar || id == tBigBinary) {
			return ti, fmt.Errorf("type 0x%02X cannot be PLP (max)", id)
		}
		if id != tBigVarBin && id != tBigBinary {
			if _, err := r.bytes(5, "collation"); err != nil {
				return ti, err
			}
		}
	default:
		return ti, fmt.Errorf("unsupported TDS type 0x%02X", id)
	}
	return ti, nil
}

func validByteLen(id byte, n int) bool {
	switch id {
	case tIntN:
		return n == 1 || n == 2 || n == 4 || n == 8
	case tBitN:
		return n == 1
	case tFltN, tMoneyN, tDateTimeN:
		return n == 4 || n == 8
	case tGUID:
		return n == 16 || n == 0
	case tDecimalN, tNumericN:
		return n >= 5 && n <= 17
	}
	return false
}

// timeSizeFor is the time part's byte width at a scale.
func timeSizeFor(scale byte) int {
	switch {
	case scale <= 2:
		return 3
	case scale <= 4:
		return 4
	}
	return 5
}

// sqlType renders the declared type as T-SQL.
func (t typeInfo) sqlType() string {
	intName := map[int]string{1: "tinyint", 2: "smallint", 4: "int", 8: "bigint"}
	switch t.id {
	case tNull:
		return "null"
	case tInt1, tInt2, tInt4, tInt8, tIntN:
		return intName[t.size]
	case tBit, tBitN:
		return "bit"
	case tFlt4:
		return "real"
	case tFlt8:
		return "float"
	case tFltN:
		if t.size == 4 {
			return "real"
		}
		return "float"
	case tMoney4:
		return "smallmoney"
	case tMoney:
		return "money"
	case tMoneyN:
		if t.size == 4 {
			return "smallmoney"
		}
		return "money"
	case tDateTim4:
		return "smalldatetime"
	case tDateTime:
		return "datetime"
	case tDateTimeN:
		if t.size == 4 {
			return "smalldatetime"
		}
		return "datetime"
	case tGUID:
		return "uniqueidentifier"
	case tDecimalN:
		return fmt.Sprintf("decimal(%d,%d)", t.prec, t.scale)
	case tNumericN:
		return fmt.Sprintf("numeric(%d,%d)", t.prec, t.scale)
	case tDateN:
		return "date"
	case tTimeN:
		return fmt.Sprintf("time(%d)", t.scale)
	case tDateTime2N:
		return fmt.Sprintf("datetime2(%d)", t.scale)
	case tDTOffsetN:
		return fmt.Sprintf("datetimeoffset(%d)", t.scale)
	}
	names := map[byte]string{tNVarChar: "nvarchar", tNChar: "nchar", tBigVarChar: "varchar",
		tBigChar: "char", tBigVarBin: "varbinary", tBigBinary: "binary"}
	name := names[t.id]
	switch {
	case t.plp:
		return name + "(max)"
	case t.id == tNVarChar || t.id == tNChar:
		return fmt.Sprintf("%s(%d)", name, t.size/2)
	}
	return fmt.Sprintf("%s(%d)", name, t.size)
}

// readValue reads one value of this type. Lengths are checked against the
// bytes actually present before anything is allocated.
func (t typeInfo) readValue(r *reader) (any, error) {
	if t.id == tNull {
		return nil, nil
	}
	var b []byte
	var err error
	switch {
	case t.fixed:
		b, err = r.bytes(t.size, "value")
	case t.plp:
		return t.readPLP(r)
	case t.id == tNVarChar || t.id == tNChar || t.id == tBigVarChar || t.id == tBigChar || t.id == tBigVarBin || t.id == tBigBinary:
		n, err := r.u16("value length")
		if err != nil {
			return nil, err
		}
		if n == 0xFFFF {
			return nil, nil
		}
		if int(n) > t.size {
			return nil, fmt.Errorf("value length %d exceeds the declared maximum %d", n, t.size)
		}
		if b, err = r.bytes(int(n), "value"); err != nil {
			return nil, err
		}
		return t.bytesValue(b)
	default:
		var n byte
		if n, err = r.u8("value length"); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, nil
		}
		if !t.validValueLen(int(n)) {
			return nil, fmt.Errorf("value length %d is invalid for this type", n)
		}
		b, err = r.bytes(int(n), "value")
	}
	if err != nil {
		return nil, err
	}
	return t.decode(b)
}

func (t typeInfo) validValueLen(n int) bool {
	switch t.id {
	case tIntN, tBitN, tFltN, tMoneyN, tDateTimeN:
		return n == t.size
	case tGUID:
		return n == 16
	case tDecimalN, tNumericN:
		return n >= 5 && n <= 17 && n <= t.size
	case tDateN:
		return n == 3
	case tTimeN:
		return n == timeSizeFor(t.scale)
	case tDateTime2N:
		return n == timeSizeFor(t.scale)+3
	case tDTOffsetN:
		return n == timeSizeFor(t.scale)+5
	}
	return false
}

// readPLP reads a PARTLENTYPE value. The declared total is checked against
// the chunks but never used to allocate.
func (t typeInfo) readPLP(r *reader) (any, error) {
	total, err := r.u64("PLP total length")
	if err != nil {
		return nil, err
	}
	if total == math.MaxUint64 {
		return nil, nil
	}
	var data []byte
	for {
		n, err := r.u32("PLP chunk length")
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		chunk, err := r.bytes(int(min(n, math.MaxInt32)), "PLP chunk")
		if err != nil {
			return nil, err
		}
		data = append(data, chunk...)
	}
	if total != math.MaxUint64-1 && total != uint64(len(data)) {
		return nil, fmt.Errorf("PLP total length says %d bytes, chunks hold %d", total, len(data))
	}
	return t.bytesValue(data)
}

func (t typeInfo) bytesValue(b []byte) (any, error) {
	switch t.id {
	case tNVarChar, tNChar:
		if len(b)%2 != 0 {
			return nil, fmt.Errorf("UCS-2 value has an odd number of bytes (%d)", len(b))
		}
		return fromUCS2(b), nil
	case tBigVarChar, tBigChar:
		return string(b), nil
	}
	return append([]byte{}, b...), nil
}

// decode turns a fixed or byte-length value into its Go form.
func (t typeInfo) decode(b []byte) (any, error) {
	le := binary.LittleEndian
	switch t.id {
	case tInt1, tInt2, tInt4, tInt8, tIntN:
		switch len(b) {
		case 1:
			return int64(b[0]), nil
		case 2:
			return int64(int16(le.Uint16(b))), nil
		case 4:
			return int64(int32(le.Uint32(b))), nil
		}
		return int64(le.Uint64(b)), nil
	case tBit, tBitN:
		return b[0] != 0, nil
	case tFlt4, tFlt8, tFltN:
		if len(b) == 4 {
			return float64(math.Float32frombits(le.Uint32(b))), nil
		}
		return math.Float64frombits(le.Uint64(b)), nil
	case tMoney4, tMoney, tMoneyN:
		var v int64
		if len(b) == 4 {
			v = int64(int32(le.Uint32(b)))
		} else {
			v = int64(le.Uint32(b))<<32 | int64(le.Uint32(b[4:]))
		}
		return scaledDecimal(big.NewInt(v), 4), nil
	case tDateTim4, tDateTime, tDateTimeN:
		if len(b) == 4 {
			days, mins := int(le.Uint16(b)), int(le.Uint16(b[2:]))
			return time.Date(1900, 1, 1+days, 0, mins, 0, 0, time.UTC), nil
		}
		days, ticks := int(int32(le.Uint32(b))), int64(le.Uint32(b[4:]))
		ns := (ticks*100_000 + 1) / 3 * 100 // 1/300 s, rounded to 100 ns
		return time.Date(1900, 1, 1+days, 0, 0, 0, 0, time.UTC).Add(time.Duration(ns)), nil
	case tGUID:
		return formatGUID(b), nil
	case tDecimalN, tNumericN:
		mag := make([]byte, len(b)-1)
		for i := range mag {
			mag[i] = b[len(b)-1-i]
		}
		v := new(big.Int).SetBytes(mag)
		if b[0] == 0 {
			v.Neg(v)
		}
		return scaledDecimal(v, int(t.scale)), nil
	case tDateN:
		return dateFromDays(b), nil
	case tTimeN:
		return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Add(timeOfDay(b, t.scale)), nil
	case tDateTime2N:
		ts := timeSizeFor(t.scale)
		return dateFromDays(b[ts:]).Add(timeOfDay(b[:ts], t.scale)), nil
	case tDTOffsetN:
		ts := timeSizeFor(t.scale)
		utc := dateFromDays(b[ts : ts+3]).Add(timeOfDay(b[:ts], t.scale))
		offset := int(int16(le.Uint16(b[ts+3:])))
		return utc.In(time.FixedZone("", offset*60)), nil
	}
	return nil, fmt.Errorf("type 0x%02X has no decoder", t.id)
}

func dateFromDays(b []byte) time.Time {
	days := int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16
	return time.Unix(epochDays+days*86400, 0).UTC()
}

// timeOfDay decodes a TIME value in units of 10^-scale seconds. Values past
// 24 hours are left as sent; they cannot overflow a Duration.
func timeOfDay(b []byte, scale byte) time.Duration {
	var units uint64
	for i := len(b) - 1; i >= 0; i-- {
		units = units<<8 | uint64(b[i])
	}
	return time.Duration(units * pow10(9-int(scale)))
}

// scaledDecimal renders v / 10^scale exactly.
func scaledDecimal(v *big.Int, scale int) string {
	s := new(big.Int).Abs(v).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if v.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// formatGUID renders SQL Server's mixed-endian GUID bytes in the usual form.
func formatGUID(b []byte) string {
	le := binary.LittleEndian
	return fmt.Sprintf("%08X-%04X-%04X-%X-%X", le.Uint32(b), le.Uint16(b[4:]), le.Uint16(b[6:]), b[8:10], b[10:16])
}

// Transaction Manager request types (MS-TDS 2.2.6.9).
const (
	tmBegin    = 5
	tmCommit   = 7
	tmRollback = 8
	tmSave     = 9
)

// parseTransMgr parses a Transaction Manager request. Its names are
// B_VARCHARs whose length counts bytes (MS-TDS 2.2.6.9; SqlClient writes
// "number of bytes (unicode string)").
func parseTransMgr(b []byte) (Transaction, uint64, error) {
	var t Transaction
	r := &reader{buf: b}
	tranID, err := skipAllHeaders(r)
	if err != nil {
		return t, 0, fmt.Errorf("transaction request: %w", err)
	}
	if t.Type, err = r.u16("request type"); err != nil {
		return t, 0, fmt.Errorf("transaction request: %w", err)
	}
	wrap := func(err error) error { return fmt.Errorf("transaction request %d: %w", t.Type, err) }
	switch t.Type {
	case tmBegin:
		t.Op = "begin"
		if t.Isolation, err = r.u8("isolation level"); err != nil {
			return t, 0, wrap(err)
		}
		if t.Name, err = r.bVarCharBytes("transaction name"); err != nil {
			return t, 0, wrap(err)
		}
	case tmCommit, tmRollback:
		t.Op = map[uint16]string{tmCommit: "commit", tmRollback: "rollback"}[t.Type]
		if t.Name, err = r.bVarCharBytes("transaction name"); err != nil {
			return t, 0, wrap(err)
		}
		flags, err := r.u8("flags")
		if err != nil {
			return t, 0, wrap(err)
		}
		if flags&0x01 != 0 {
			t.BeginNew = true
			if t.Isolation, err = r.u8("new isolation level"); err != nil {
				return t, 0, wrap(err)
			}
			if _, err = r.bVarCharBytes("new transaction name"); err != nil {
				return t, 0, wrap(err)
			}
		}
	case tmSave:
		t.Op = "save"
		if t.Name, err = r.bVarCharBytes("savepoint name"); err != nil {
			return t, 0, wrap(err)
		}
	default:
		t.Op = "other"
	}
	return t, tranID, nil
}
