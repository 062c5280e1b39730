package tdstest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"
)

type columnKind int

const (
	kindNVarChar columnKind = iota
	kindNVarCharMax
	kindXML
	kindNText
	kindInt
	kindBigInt
	kindSmallInt
	kindTinyInt
	kindBit
	kindFloat
	kindDateTime2
	kindDecimal
	kindVariant
)

// Column describes one result-set column. Build it with a type constructor
// such as Int or NVarCharMax; the zero value is not usable.
type Column struct {
	Name       string
	kind       columnKind
	length     int  // characters for nvarchar(n)
	notNull    bool // fixed-length TDS type, NULL not allowed
	prec       byte
	scale      byte
	chunk      int  // PLP chunk size in bytes; 0 means one chunk
	unknownLen bool // PLP total length sent as UNKNOWN_PLP_LEN
	expression bool // computed from an expression, not a table column
	valid      bool
}

// Column flags in COLMETADATA (MS-TDS 2.2.7.4). Real servers send
// 0x0008/0x0009 for table columns (updatability unknown, nullable) and
// 0x0020/0x0021 for expressions.
const (
	colNullable        uint16 = 0x0001
	colUpdatableUnknwn uint16 = 0x0008
	colComputed        uint16 = 0x0020
)

func newColumn(name string, k columnKind) Column {
	return Column{Name: name, kind: k, valid: true}
}

// NVarChar is an nvarchar(n) column, 1 <= n <= 4000.
func NVarChar(name string, n int) Column {
	c := newColumn(name, kindNVarChar)
	c.length = n
	return c
}

// NVarCharMax is an nvarchar(max) column; values are sent as PLP.
func NVarCharMax(name string) Column { return newColumn(name, kindNVarCharMax) }

// XML is an xml column (no schema collection); values are sent as PLP.
func XML(name string) Column { return newColumn(name, kindXML) }

// NText is a legacy ntext column.
func NText(name string) Column { return newColumn(name, kindNText) }

// Int is a nullable int column (INTN); NotNull makes it the fixed INT4 type.
func Int(name string) Column { return newColumn(name, kindInt) }

// BigInt is a nullable bigint column.
func BigInt(name string) Column { return newColumn(name, kindBigInt) }

// SmallInt is a nullable smallint column.
func SmallInt(name string) Column { return newColumn(name, kindSmallInt) }

// TinyInt is a nullable tinyint column.
func TinyInt(name string) Column { return newColumn(name, kindTinyInt) }

// Bit is a nullable bit column.
func Bit(name string) Column { return newColumn(name, kindBit) }

// Float is a nullable float (8-byte) column.
func Float(name string) Column { return newColumn(name, kindFloat) }

// DateTime2 is a datetime2(scale) column, 0 <= scale <= 7.
func DateTime2(name string, scale int) Column {
	c := newColumn(name, kindDateTime2)
	c.scale = byte(scale)
	if scale < 0 || scale > 7 {
		c.valid = false
	}
	return c
}

// Decimal is a decimal(prec, scale) column, 1 <= prec <= 38, 0 <= scale <= prec.
func Decimal(name string, prec, scale int) Column {
	c := newColumn(name, kindDecimal)
	c.prec, c.scale = byte(prec), byte(scale)
	if prec < 1 || prec > 38 || scale < 0 || scale > prec {
		c.valid = false
	}
	return c
}

// SQLVariant is a sql_variant column; it carries int values (as SESSIONPROPERTY does).
func SQLVariant(name string) Column { return newColumn(name, kindVariant) }

// NotNull makes an integer, bit or float column use its fixed-length TDS type
// and clears the nullable flag. NULL values are then rejected.
func (c Column) NotNull() Column {
	c.notNull = true
	return c
}

// Chunked sets the PLP chunk size in bytes for nvarchar(max) and xml values.
func (c Column) Chunked(bytes int) Column {
	c.chunk = bytes
	return c
}

// UnknownLength sends nvarchar(max) and xml values with UNKNOWN_PLP_LEN
// instead of their total length.
func (c Column) UnknownLength() Column {
	c.unknownLen = true
	return c
}

// TypeName renders the column type as T-SQL, e.g. "nvarchar(max)".
func (c Column) TypeName() string {
	switch c.kind {
	case kindNVarChar:
		return fmt.Sprintf("nvarchar(%d)", c.length)
	case kindNVarCharMax:
		return "nvarchar(max)"
	case kindXML:
		return "xml"
	case kindNText:
		return "ntext"
	case kindInt:
		return "int"
	case kindBigInt:
		return "bigint"
	case kindSmallInt:
		return "smallint"
	case kindTinyInt:
		return "tinyint"
	case kindBit:
		return "bit"
	case kindFloat:
		return "float"
	case kindDateTime2:
		return fmt.Sprintf("datetime2(%d)", c.scale)
	case kindDecimal:
		return fmt.Sprintf("decimal(%d,%d)", c.prec, c.scale)
	case kindVariant:
		return "sql_variant"
	}
	return "unknown"
}

func (c Column) check() error {
	if !c.valid {
		return fmt.Errorf("column %q: invalid type parameters for %s", c.Name, c.TypeName())
	}
	if c.kind == kindNVarChar && (c.length < 1 || c.length > 4000) {
		return fmt.Errorf("column %q: nvarchar length %d is outside 1..4000", c.Name, c.length)
	}
	if c.chunk < 0 {
		return fmt.Errorf("column %q: negative PLP chunk size %d", c.Name, c.chunk)
	}
	if c.notNull && !c.hasFixedType() {
		return fmt.Errorf("column %q: %s has no fixed-length NOT NULL form", c.Name, c.TypeName())
	}
	return nil
}

func (c Column) hasFixedType() bool {
	switch c.kind {
	case kindInt, kindBigInt, kindSmallInt, kindTinyInt, kindBit, kindFloat:
		return true
	}
	return false
}

// intSize is the byte width of the integer kinds.
func (c Column) intSize() int {
	switch c.kind {
	case kindTinyInt:
		return 1
	case kindSmallInt:
		return 2
	case kindInt:
		return 4
	}
	return 8
}

// decimalSize is the DECIMALN value length for the column's precision.
func (c Column) decimalSize() int {
	switch {
	case c.prec <= 9:
		return 5
	case c.prec <= 19:
		return 9
	case c.prec <= 28:
		return 13
	}
	return 17
}

// timeSize is the byte width of the time part of datetime2 at the column's scale.
func (c Column) timeSize() int {
	switch {
	case c.scale <= 2:
		return 3
	case c.scale <= 4:
		return 4
	}
	return 5
}

// writeMeta writes a COLMETADATA column: UserType, Flags, TYPE_INFO, name.
func (c Column) writeMeta(w *writer) {
	c.writeTypeInfo(w)
	w.bVarChar(c.Name)
}

// Expression marks a column computed from an expression (flags 0x0021, or
// 0x0020 when NOT NULL) rather than read from a table (0x0009 / 0x0008).
func (c Column) Expression() Column {
	c.expression = true
	return c
}

// metaFlags are the COLMETADATA flags of the column.
func (c Column) metaFlags() uint16 {
	flags := colUpdatableUnknwn
	if c.expression {
		flags = colComputed
	}
	if !c.notNull {
		flags |= colNullable
	}
	return flags
}

// writeTypeInfo writes UserType, Flags and TYPE_INFO.
func (c Column) writeTypeInfo(w *writer) { c.writeTypeInfoFlags(w, c.metaFlags()) }

// writeTypeInfoFlags writes UserType, the given Flags and TYPE_INFO.
func (c Column) writeTypeInfoFlags(w *writer, flags uint16) {
	w.u32(0)
	w.u16(flags)
	fixed := map[columnKind]byte{kindTinyInt: 0x30, kindSmallInt: 0x34, kindInt: 0x38, kindBigInt: 0x7F, kindBit: 0x32, kindFloat: 0x3E}
	switch {
	case c.notNull && c.hasFixedType():
		w.u8(fixed[c.kind])
	case c.kind == kindNVarChar:
		w.u8(0xE7)
		w.u16(uint16(2 * c.length))
		w.raw(serverCollation)
	case c.kind == kindNVarCharMax:
		w.u8(0xE7)
		w.u16(0xFFFF)
		w.raw(serverCollation)
	case c.kind == kindXML:
		w.u8(0xF1)
		w.u8(0) // no schema
	case c.kind == kindNText:
		w.u8(0x63)
		w.u32(0x7FFFFFFF)
		w.raw(serverCollation)
		w.u8(0) // no table name parts
	case c.kind == kindBit:
		w.u8(0x68)
		w.u8(1)
	case c.kind == kindFloat:
		w.u8(0x6D)
		w.u8(8)
	case c.kind == kindDateTime2:
		w.u8(0x2A)
		w.u8(c.scale)
	case c.kind == kindDecimal:
		w.u8(0x6A)
		w.u8(byte(c.decimalSize()))
		w.u8(c.prec)
		w.u8(c.scale)
	case c.kind == kindVariant:
		w.u8(0x62)
		w.u32(8016)
	default: // nullable integers
		w.u8(0x26)
		w.u8(byte(c.intSize()))
	}
}

// writeNull writes the in-row NULL form of the column (for plain ROW tokens).
func (c Column) writeNull(w *writer) error {
	switch c.kind {
	case kindNVarChar:
		w.u16(0xFFFF)
	case kindNVarCharMax, kindXML:
		w.u64(math.MaxUint64)
	case kindNText:
		w.u8(0) // no text pointer
	case kindVariant:
		w.u32(0)
	default:
		if c.notNull {
			return fmt.Errorf("column %q is NOT NULL (%s) but the value is nil", c.Name, c.TypeName())
		}
		w.u8(0)
	}
	return nil
}

// writeValue writes a non-NULL value in the column's wire form.
func (c Column) writeValue(w *writer, v any) error {
	switch c.kind {
	case kindNVarChar:
		s, ok := v.(string)
		if !ok {
			return c.typeErr(v)
		}
		if n := ucs2Len(s); n > c.length {
			return fmt.Errorf("column %q: value has %d UTF-16 units, %s holds %d", c.Name, n, c.TypeName(), c.length)
		}
		b := toUCS2(s)
		w.u16(uint16(len(b)))
		w.raw(b)
	case kindNVarCharMax, kindXML:
		s, ok := v.(string)
		if !ok {
			return c.typeErr(v)
		}
		c.writePLP(w, toUCS2(s))
	case kindNText:
		s, ok := v.(string)
		if !ok {
			return c.typeErr(v)
		}
		b := toUCS2(s)
		if len(b) > math.MaxInt32 {
			return fmt.Errorf("column %q: ntext value of %d bytes is too long", c.Name, len(b))
		}
		w.u8(16)
		w.raw(make([]byte, 16)) // text pointer
		w.raw(make([]byte, 8))  // timestamp
		w.u32(uint32(len(b)))
		w.raw(b)
	case kindInt, kindBigInt, kindSmallInt, kindTinyInt:
		n, ok := toInt64(v)
		if !ok {
			return c.typeErr(v)
		}
		size := c.intSize()
		if !intFits(n, size) {
			return fmt.Errorf("column %q: %d is out of range for %s", c.Name, n, c.TypeName())
		}
		if !c.notNull {
			w.u8(byte(size))
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(n))
		w.raw(b[:size])
	case kindBit:
		b, ok := v.(bool)
		if !ok {
			return c.typeErr(v)
		}
		if !c.notNull {
			w.u8(1)
		}
		if b {
			w.u8(1)
		} else {
			w.u8(0)
		}
	case kindFloat:
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case float32:
			f = float64(x)
		default:
			return c.typeErr(v)
		}
		if !c.notNull {
			w.u8(8)
		}
		w.u64(math.Float64bits(f))
	case kindDateTime2:
		t, ok := v.(time.Time)
		if !ok {
			return c.typeErr(v)
		}
		if t.Year() < 1 || t.Year() > 9999 {
			return fmt.Errorf("column %q: year %d is outside datetime2's 1..9999", c.Name, t.Year())
		}
		ts := c.timeSize()
		w.u8(byte(ts + 3))
		writeTime(w, t, int(c.scale), ts)
		writeDate(w, t)
	case kindDecimal:
		mag, neg, err := decimalMagnitude(v, int(c.prec), int(c.scale))
		if err != nil {
			return fmt.Errorf("column %q (%s): %w", c.Name, c.TypeName(), err)
		}
		size := c.decimalSize()
		w.u8(byte(size))
		if neg {
			w.u8(0)
		} else {
			w.u8(1)
		}
		le := make([]byte, size-1)
		be := mag.Bytes()
		for i := range be {
			le[i] = be[len(be)-1-i]
		}
		w.raw(le)
	case kindVariant:
		n, ok := toInt64(v)
		if !ok {
			return c.typeErr(v)
		}
		if !intFits(n, 4) {
			return fmt.Errorf("column %q: sql_variant carries int values; %d does not fit", c.Name, n)
		}
		w.u32(6)   // base type + prop bytes + 4-byte int
		w.u8(0x38) // INT4
		w.u8(0)    // no properties
		w.u32(uint32(int32(n)))
	}
	return nil
}

func (c Column) typeErr(v any) error {
	return fmt.Errorf("column %q (%s): cannot send a %T value", c.Name, c.TypeName(), v)
}

// writePLP writes a PLP value in chunks of c.chunk bytes (one chunk if 0).
func (c Column) writePLP(w *writer, b []byte) {
	if c.unknownLen {
		w.u64(math.MaxUint64 - 1)
	} else {
		w.u64(uint64(len(b)))
	}
	chunk := c.chunk
	if chunk <= 0 {
		chunk = len(b)
	}
	for len(b) > 0 {
		n := min(chunk, len(b))
		w.u32(uint32(n))
		w.raw(b[:n])
		b = b[n:]
	}
	w.u32(0)
}

func toInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

func intFits(n int64, size int) bool {
	switch size {
	case 1:
		return n >= 0 && n <= math.MaxUint8
	case 2:
		return n >= math.MinInt16 && n <= math.MaxInt16
	case 4:
		return n >= math.MinInt32 && n <= math.MaxInt32
	}
	return true
}

// epochDays is the Unix time of 0001-01-01, the TDS date origin.
const epochDays = -62135596800

// writeDate writes the 3-byte day count since 0001-01-01 of t's wall date.
func writeDate(w *writer, t time.Time) {
	y, m, d := t.Date()
	days := (time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() - epochDays) / 86400
	w.u8(byte(days))
	w.u8(byte(days >> 8))
	w.u8(byte(days >> 16))
}

// writeTime writes t's wall-clock time of day in units of 10^-scale seconds.
func writeTime(w *writer, t time.Time, scale, size int) {
	h, m, s := t.Clock()
	units := uint64(h*3600+m*60+s) * pow10(scale)
	units += uint64(t.Nanosecond()) / pow10(9-scale)
	for i := 0; i < size; i++ {
		w.u8(byte(units >> (8 * i)))
	}
}

func pow10(n int) uint64 {
	p := uint64(1)
	for ; n > 0; n-- {
		p *= 10
	}
	return p
}

// decimalMagnitude turns an integer or a decimal string such as "-12.50"
// into the unscaled magnitude at the given scale. Digits beyond the scale
// are an error rather than silently rounded.
func decimalMagnitude(v any, prec, scale int) (*big.Int, bool, error) {
	var s string
	if n, ok := toInt64(v); ok {
		s = fmt.Sprint(n)
	} else if str, ok := v.(string); ok {
		s = str
	} else {
		return nil, false, fmt.Errorf("cannot send a %T value; use a string such as \"12.50\" or an integer", v)
	}
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	intPart, frac, _ := strings.Cut(digits, ".")
	if intPart == "" && frac == "" || strings.Trim(intPart+frac, "0123456789") != "" {
		return nil, false, fmt.Errorf("%q is not a decimal number", s)
	}
	if len(frac) > scale {
		return nil, false, fmt.Errorf("%q has %d fraction digits, scale is %d", s, len(frac), scale)
	}
	frac += strings.Repeat("0", scale-len(frac))
	all := strings.TrimLeft(intPart+frac, "0")
	if len(all) > prec {
		return nil, false, fmt.Errorf("%q needs %d digits, precision is %d", s, len(all), prec)
	}
	mag, ok := new(big.Int).SetString("0"+all, 10)
	if !ok {
		return nil, false, fmt.Errorf("%q is not a decimal number", s)
	}
	return mag, neg && mag.Sign() != 0, nil
}
