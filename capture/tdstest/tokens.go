package tdstest

import (
	"encoding/binary"
	"strconv"
)

// Token types the server emits. go-mssqldb panics on tokens it does not
// know, so nothing else is ever written.
const (
	tokenReturnStatus  byte = 0x79
	tokenReturnValue   byte = 0xAC
	tokenColMetadata   byte = 0x81
	tokenError         byte = 0xAA
	tokenInfo          byte = 0xAB
	tokenLoginAck      byte = 0xAD
	tokenFeatureExtAck byte = 0xAE
	tokenRow           byte = 0xD1
	tokenNBCRow        byte = 0xD2
	tokenEnvChange     byte = 0xE3
	tokenDone          byte = 0xFD
	tokenDoneProc      byte = 0xFE
	tokenDoneInProc    byte = 0xFF
)

// DONE status bits (MS-TDS 2.2.7.6).
const (
	doneMore   uint16 = 0x0001
	doneError  uint16 = 0x0002
	doneInXact uint16 = 0x0004
	doneCount  uint16 = 0x0010
	doneAttn   uint16 = 0x0020
)

// CurCmd values for DONE tokens. They are undocumented; these are the values
// seen from real servers by other TDS implementations. go-mssqldb only looks at
// CmdSelect.
const (
	CmdNone      uint16 = 0x00
	CmdSetOn     uint16 = 0xB9
	CmdSetOff    uint16 = 0xBA
	CmdSelect    uint16 = 0xC1
	CmdInsert    uint16 = 0xC3
	CmdDelete    uint16 = 0xC4
	CmdUpdate    uint16 = 0xC5
	CmdAbortTran uint16 = 0xD2
	CmdBeginTran uint16 = 0xD4
	CmdEndTran   uint16 = 0xD5
	CmdExecute   uint16 = 0xE0
	CmdMerge     uint16 = 0x117
)

// ENVCHANGE types the server emits; all are ones go-mssqldb parses fully.
const (
	envDatabase   byte = 1
	envLanguage   byte = 2
	envPacketSize byte = 4
	envCollation  byte = 7
	envBeginTran  byte = 8
	envCommitTran byte = 9
	envRollback   byte = 10
	envResetAck   byte = 18
)

// serverCollation is SQL_Latin1_General_CP1_CI_AS as SQL Server sends it
// (LCID 0x0409, flags 0xD0, version 0, sort id 0x34), in the login
// ENVCHANGE and in string column metadata.
var serverCollation = []byte{0x09, 0x04, 0xD0, 0x00, 0x34}

func (w *writer) envChangeStrings(typ byte, newVal, oldVal string) {
	var body writer
	body.u8(typ)
	body.bVarChar(newVal)
	body.bVarChar(oldVal)
	w.u8(tokenEnvChange)
	w.u16(uint16(len(body.buf)))
	w.raw(body.buf)
}

func (w *writer) envChangeBytes(typ byte, newVal, oldVal []byte) {
	w.u8(tokenEnvChange)
	w.u16(uint16(3 + len(newVal) + len(oldVal)))
	w.u8(typ)
	w.u8(byte(len(newVal)))
	w.raw(newVal)
	w.u8(byte(len(oldVal)))
	w.raw(oldVal)
}

// envCollationChange writes the collation ENVCHANGE: exactly 5 bytes of new
// value and an empty old value, the only shape go-mssqldb accepts.
func (w *writer) envCollationChange() {
	w.envChangeBytes(envCollation, serverCollation, nil)
}

// envResetAck acknowledges RESETCONNECTION: E3 03 00 12 00 00.
func (w *writer) envResetAck() { w.envChangeBytes(envResetAck, nil, nil) }

// defaultPacketSize is the server's network packet size before login: the
// old value of the login's packet-size ENVCHANGE.
const defaultPacketSize = 4096

// envPacketSizeChange announces the negotiated packet size; the old value
// is the server default, as SQL Server sends it ("8000" from "4096").
func (w *writer) envPacketSizeChange(size int) {
	w.envChangeStrings(envPacketSize, strconv.Itoa(size), strconv.Itoa(defaultPacketSize))
}

func tranIDBytes(id uint64) []byte {
	var b writer
	b.u64(id)
	return b.buf
}

// message writes an ERROR or INFO token.
func (w *writer) message(token byte, m Message, server string) {
	var body writer
	body.u32(uint32(m.Number))
	body.u8(m.State)
	body.u8(m.Class)
	body.usVarChar(m.Text)
	body.bVarChar(server)
	body.bVarChar(m.Proc)
	body.u32(uint32(m.Line))
	w.u8(token)
	w.u16(uint16(len(body.buf)))
	w.raw(body.buf)
}

// progName is LOGINACK's ProgName as SQL Server sends it: 22 characters,
// the name and two NULs.
const progName = "Microsoft SQL Server\x00\x00"

// loginAck writes LOGINACK with the given TDS version (big-endian on the wire).
func (w *writer) loginAck(version uint32) {
	var body writer
	body.u8(1) // interface: SQL_TSQL
	body.raw(binary.BigEndian.AppendUint32(nil, version))
	body.bVarChar(progName)
	body.raw([]byte{16, 0, 0x10, 0x8D}) // 16.0.4237
	w.u8(tokenLoginAck)
	w.u16(uint16(len(body.buf)))
	w.raw(body.buf)
}

// featureExtAck writes FEATUREEXTACK: each feature's id, DWORD length and
// data, then the 0xFF terminator.
func (w *writer) featureExtAck(acks []Feature) {
	w.u8(tokenFeatureExtAck)
	for _, a := range acks {
		w.u8(a.ID)
		w.u32(uint32(len(a.Data)))
		w.raw(a.Data)
	}
	w.u8(featureTerminator)
}

func (w *writer) done(token byte, status, curCmd uint16, rows uint64) {
	w.u8(token)
	w.u16(status)
	w.u16(curCmd)
	w.u64(rows)
}

// returnValue writes a RETURNVALUE token for an OUTPUT parameter.
func (w *writer) returnValue(ordinal int, rv returnValue) error {
	w.u8(tokenReturnValue)
	w.u16(uint16(ordinal))
	w.bVarChar(rv.name)
	w.u8(0x01)                      // status: output parameter
	rv.col.writeTypeInfoFlags(w, 0) // real servers send flags 0x0000 here
	if rv.value == nil {
		return rv.col.writeNull(w)
	}
	return rv.col.writeValue(w, rv.value)
}

func (w *writer) returnStatus(v int32) {
	w.u8(tokenReturnStatus)
	w.u32(uint32(v))
}
