package tdstest

import (
	"encoding/binary"
	"fmt"
)

// PRELOGIN option tokens (MS-TDS 2.2.6.5).
const (
	preloginVersion    = 0x00
	preloginEncryption = 0x01
	preloginInstance   = 0x02
	preloginThreadID   = 0x03
	preloginMARS       = 0x04
	preloginTerminator = 0xFF
)

// Encryption values a client may put in PRELOGIN.
const (
	EncryptOff    byte = 0x00
	EncryptOn     byte = 0x01
	EncryptNotSup byte = 0x02
	EncryptReq    byte = 0x03
	EncryptStrict byte = 0x04
)

// Prelogin is what a client said in its PRELOGIN message.
type Prelogin struct {
	Encryption byte   // requested encryption, one of the Encrypt* values
	Instance   string // INSTOPT without its terminating NUL
	MARS       bool
	Options    []byte // option tokens in the order sent
}

// parsePrelogin reads the option table and the values it points to.
func parsePrelogin(b []byte) (Prelogin, error) {
	var p Prelogin
	for i := 0; ; i++ {
		at := 5 * i
		if at >= len(b) {
			return p, fmt.Errorf("PRELOGIN: option table has no 0xFF terminator (%d bytes)", len(b))
		}
		token := b[at]
		if token == preloginTerminator {
			return p, nil
		}
		if at+5 > len(b) {
			return p, fmt.Errorf("PRELOGIN: option %d (token 0x%02X) at offset %d is cut short", i+1, token, at)
		}
		off := int(binary.BigEndian.Uint16(b[at+1:]))
		n := int(binary.BigEndian.Uint16(b[at+3:]))
		if off+n > len(b) {
			return p, fmt.Errorf("PRELOGIN: option 0x%02X points at bytes %d..%d beyond the %d-byte message", token, off, off+n, len(b))
		}
		val := b[off : off+n]
		p.Options = append(p.Options, token)
		switch token {
		case preloginEncryption:
			if n != 1 {
				return p, fmt.Errorf("PRELOGIN: ENCRYPTION has %d bytes, want 1", n)
			}
			p.Encryption = val[0]
		case preloginInstance:
			if n > 0 && val[n-1] == 0 {
				val = val[:n-1]
			}
			p.Instance = string(val)
		case preloginMARS:
			p.MARS = n > 0 && val[0] != 0
		}
	}
}

// preloginReply is the server's PRELOGIN answer: VERSION, ENCRYPTION,
// INSTOPT, THREADID (empty) and MARS off, values after the option table as
// SQL Server lays them out.
func preloginReply(encryption byte) []byte {
	type opt struct {
		token byte
		val   []byte
	}
	opts := []opt{
		{preloginVersion, []byte{16, 0, 0x10, 0x8D, 0, 0}}, // 16.0.4237
		{preloginEncryption, []byte{encryption}},
		{preloginInstance, []byte{0}},
		{preloginThreadID, nil},
		{preloginMARS, []byte{0}},
	}
	off := 5*len(opts) + 1
	var table, data []byte
	for _, o := range opts {
		table = append(table, o.token)
		table = binary.BigEndian.AppendUint16(table, uint16(off+len(data)))
		table = binary.BigEndian.AppendUint16(table, uint16(len(o.val)))
		data = append(data, o.val...)
	}
	table = append(table, preloginTerminator)
	return append(table, data...)
}

// LOGIN7 option flags (MS-TDS 2.2.6.4).
const (
	login7FixedSize       = 94
	flag2ODBC             = 0x02
	flag2IntegratedSecure = 0x80
	flag3ChangePassword   = 0x01
	flag3Extension        = 0x10
	typeFlagReadOnly      = 0x20
)

// Login is a parsed LOGIN7 message. Password is de-obfuscated.
type Login struct {
	TDSVersion    uint32
	PacketSize    uint32
	ClientProgVer uint32
	ClientPID     uint32
	OptionFlags1  byte
	OptionFlags2  byte
	TypeFlags     byte
	OptionFlags3  byte
	HostName      string
	UserName      string
	Password      string
	AppName       string
	ServerName    string
	Library       string // CltIntName, "go-mssqldb" for that driver
	Language      string
	Database      string
	SSPILength    int
	// ODBC is fODBC: the server applies the ANSI session defaults.
	ODBC bool
	// IntegratedSecurity is set when the client asks for SSPI/Windows auth.
	IntegratedSecurity bool
	// FeatureExt is set when the client sent a FeatureExt block; Features
	// are its entries in the order sent.
	FeatureExt bool
	Features   []Feature
	// ReadOnlyIntent is ApplicationIntent=ReadOnly.
	ReadOnlyIntent bool
}

// parseLogin7 parses the fixed header and the variable fields it points to.
// Offsets are relative to the start of the LOGIN7 record.
func parseLogin7(b []byte) (Login, error) {
	var l Login
	if len(b) < login7FixedSize {
		return l, fmt.Errorf("LOGIN7: %d bytes, the fixed header alone is %d", len(b), login7FixedSize)
	}
	declared := binary.LittleEndian.Uint32(b)
	if int64(declared) > int64(len(b)) {
		return l, fmt.Errorf("LOGIN7: Length field says %d bytes, message has %d", declared, len(b))
	}
	u32 := func(at int) uint32 { return binary.LittleEndian.Uint32(b[at:]) }
	l.TDSVersion = u32(4)
	l.PacketSize = u32(8)
	l.ClientProgVer = u32(12)
	l.ClientPID = u32(16)
	l.OptionFlags1, l.OptionFlags2, l.TypeFlags, l.OptionFlags3 = b[24], b[25], b[26], b[27]
	l.ODBC = l.OptionFlags2&flag2ODBC != 0
	l.IntegratedSecurity = l.OptionFlags2&flag2IntegratedSecure != 0
	l.FeatureExt = l.OptionFlags3&flag3Extension != 0
	l.ReadOnlyIntent = l.TypeFlags&typeFlagReadOnly != 0

	// field reads an offset/length pair whose length counts UCS-2 characters.
	field := func(name string, at int) ([]byte, error) {
		off := int(binary.LittleEndian.Uint16(b[at:]))
		n := 2 * int(binary.LittleEndian.Uint16(b[at+2:]))
		if n == 0 {
			return nil, nil
		}
		if off < login7FixedSize || off+n > len(b) {
			return nil, fmt.Errorf("LOGIN7: %s at offset %d with %d bytes lies outside the %d-byte record", name, off, n, len(b))
		}
		return b[off : off+n], nil
	}
	fields := []struct {
		name string
		at   int
		dst  *string
	}{
		{"HostName", 36, &l.HostName},
		{"UserName", 40, &l.UserName},
		{"AppName", 48, &l.AppName},
		{"ServerName", 52, &l.ServerName},
		{"CltIntName", 60, &l.Library},
		{"Language", 64, &l.Language},
		{"Database", 68, &l.Database},
	}
	for _, f := range fields {
		raw, err := field(f.name, f.at)
		if err != nil {
			return l, err
		}
		*f.dst = fromUCS2(raw)
	}
	pw, err := field("Password", 44)
	if err != nil {
		return l, err
	}
	l.Password = fromUCS2(deobfuscate(pw))
	if l.FeatureExt {
		if l.Features, err = parseFeatureExt(b); err != nil {
			return l, err
		}
	}
	sspiOff := int(binary.LittleEndian.Uint16(b[78:]))
	l.SSPILength = int(binary.LittleEndian.Uint16(b[80:]))
	if l.SSPILength > 0 && sspiOff+l.SSPILength > len(b) {
		return l, fmt.Errorf("LOGIN7: SSPI at offset %d with %d bytes lies outside the %d-byte record", sspiOff, l.SSPILength, len(b))
	}
	return l, nil
}

// deobfuscate undoes the LOGIN7 password scrambling: XOR 0xA5, then swap nibbles.
func deobfuscate(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		c ^= 0xA5
		out[i] = c<<4 | c>>4
	}
	return out
}

// LOGIN7 FeatureExt feature ids (MS-TDS 2.2.6.4).
const (
	FeatureSessionRecovery    byte = 0x01
	FeatureFedAuth            byte = 0x02
	FeatureColumnEncryption   byte = 0x04
	FeatureGlobalTransaction  byte = 0x05
	FeatureAzureSQLSupport    byte = 0x08
	FeatureDataClassification byte = 0x09
	FeatureUTF8Support        byte = 0x0A
	featureTerminator         byte = 0xFF
)

// Feature is one entry of a LOGIN7 FeatureExt block.
type Feature struct {
	ID   byte
	Data []byte
}

// parseFeatureExt reads the FeatureExt block: ibExtension (offset 56)
// points at a DWORD holding the offset of the feature list, which is a
// sequence of FeatureId, DWORD length, data, ended by 0xFF.
func parseFeatureExt(b []byte) ([]Feature, error) {
	ib := int(binary.LittleEndian.Uint16(b[56:]))
	cb := int(binary.LittleEndian.Uint16(b[58:]))
	if cb < 4 || ib < login7FixedSize || ib+4 > len(b) {
		return nil, fmt.Errorf("LOGIN7: fExtension is set but ibExtension %d / cbExtension %d do not point at a 4-byte offset inside the %d-byte record", ib, cb, len(b))
	}
	r := &reader{buf: b, off: int(binary.LittleEndian.Uint32(b[ib:]))}
	if r.off < login7FixedSize || r.off >= len(b) {
		return nil, fmt.Errorf("LOGIN7: FeatureExt offset %d lies outside the %d-byte record", r.off, len(b))
	}
	var out []Feature
	for {
		id, err := r.u8("FeatureId")
		if err != nil {
			return nil, fmt.Errorf("LOGIN7 FeatureExt: %w (no 0xFF terminator)", err)
		}
		if id == featureTerminator {
			return out, nil
		}
		n, err := r.u32("FeatureDataLen")
		if err != nil {
			return nil, fmt.Errorf("LOGIN7 FeatureExt: feature 0x%02X: %w", id, err)
		}
		if int64(n) > int64(r.remaining()) {
			return nil, fmt.Errorf("LOGIN7 FeatureExt: feature 0x%02X says %d bytes, %d left", id, n, r.remaining())
		}
		data, _ := r.bytes(int(n), "FeatureData")
		out = append(out, Feature{ID: id, Data: append([]byte(nil), data...)})
	}
}

// featureAcks are the FEATUREEXTACK entries for the features this server
// knows, as SQL Server 2019 and later answer them: UTF8_SUPPORT with 1
// (UTF-8 collations supported) and GLOBALTRANSACTIONS with 0 (not
// enabled). Session recovery, column encryption and data classification
// are not acknowledged, which tells the client they are off.
func featureAcks(fs []Feature) []Feature {
	var out []Feature
	for _, f := range fs {
		switch f.ID {
		case FeatureUTF8Support:
			out = append(out, Feature{ID: f.ID, Data: []byte{1}})
		case FeatureGlobalTransaction:
			out = append(out, Feature{ID: f.ID, Data: []byte{0}})
		}
	}
	return out
}

// knownTDSVersions are the LOGIN7 TDSVersion values SQL Server accepts and
// echoes in LOGINACK.
var knownTDSVersions = map[uint32]bool{
	0x70000000: true, 0x71000000: true, 0x71000001: true, 0x72090002: true,
	0x730A0003: true, 0x730B0003: true, 0x74000004: true, 0x08000000: true,
}

// ackVersion is the TDS version LOGINACK answers a client that asked for v:
// the client's own version when it is a known one, else 7.4.
func ackVersion(v uint32) uint32 {
	if knownTDSVersions[v] {
		return v
	}
	return 0x74000004
}
