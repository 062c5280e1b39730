package tdstest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf16"
	"unicode/utf8"
)

// TDS packet types (MS-TDS 2.2.3.1.1).
const (
	packetSQLBatch   byte = 0x01
	packetRPC        byte = 0x03
	packetReply      byte = 0x04
	packetAttention  byte = 0x06
	packetTransMgr   byte = 0x0E
	packetLogin7     byte = 0x10
	packetPrelogin   byte = 0x12
	packetHeaderSize      = 8
)

// Packet status bits (MS-TDS 2.2.3.1.2).
const (
	statusEOM                 byte = 0x01
	statusResetConnection     byte = 0x08
	statusResetConnectionSkip byte = 0x10
)

// maxMessageSize bounds one client message so that a hostile length field
// cannot make the server buffer without limit.
const maxMessageSize = 32 << 20

// message is one complete client message: the packets up to and including
// the one with end-of-message status, concatenated without headers.
type message struct {
	typ    byte
	status byte // status of the first packet (reset flags live here)
	body   []byte
}

// readMessage reads packets until end of message. All packets must share
// the first packet's type.
func readMessage(r io.Reader) (message, error) {
	var m message
	var hdr [packetHeaderSize]byte
	for n := 0; ; n++ {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if n > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return m, err
		}
		typ, status := hdr[0], hdr[1]
		size := int(binary.BigEndian.Uint16(hdr[2:4]))
		if size < packetHeaderSize {
			return m, fmt.Errorf("packet %d: length %d is shorter than the 8-byte header", n+1, size)
		}
		if n == 0 {
			m.typ, m.status = typ, status
		} else if typ != m.typ {
			return m, fmt.Errorf("packet %d: type 0x%02X inside a message of type 0x%02X", n+1, typ, m.typ)
		}
		if len(m.body)+size-packetHeaderSize > maxMessageSize {
			return m, fmt.Errorf("packet %d: message exceeds %d bytes", n+1, maxMessageSize)
		}
		start := len(m.body)
		m.body = append(m.body, make([]byte, size-packetHeaderSize)...)
		if _, err := io.ReadFull(r, m.body[start:]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return m, fmt.Errorf("packet %d: reading %d-byte payload: %w", n+1, size-packetHeaderSize, err)
		}
		if status&statusEOM != 0 {
			return m, nil
		}
	}
}

// packetize splits a reply body into packets of at most packetSize bytes:
// status 0x00 on every packet but the last, which has end-of-message.
// go-mssqldb treats any non-zero status as final, so this matters.
func packetize(typ byte, body []byte, packetSize int) []byte {
	payload := packetSize - packetHeaderSize
	n := (len(body) + payload - 1) / payload
	if n == 0 {
		n = 1
	}
	out := make([]byte, 0, len(body)+n*packetHeaderSize)
	for i := 0; i < n; i++ {
		chunk := body[min(i*payload, len(body)):min((i+1)*payload, len(body))]
		status := byte(0)
		if i == n-1 {
			status = statusEOM
		}
		out = append(out, typ, status)
		out = binary.BigEndian.AppendUint16(out, uint16(len(chunk)+packetHeaderSize))
		out = append(out, 0, 0, byte(i+1), 0) // SPID, packet id, window
		out = append(out, chunk...)
	}
	return out
}

// reader is a bounds-checked cursor over a message body. Every method
// returns an error naming the offset instead of panicking.
type reader struct {
	buf []byte
	off int
}

var errShort = errors.New("unexpected end of data")

func (r *reader) remaining() int { return len(r.buf) - r.off }

func (r *reader) fail(what string, need int) error {
	return fmt.Errorf("offset %d: %s needs %d bytes, %d left: %w", r.off, what, need, r.remaining(), errShort)
}

func (r *reader) bytes(n int, what string) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, r.fail(what, n)
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b, nil
}

func (r *reader) u8(what string) (byte, error) {
	b, err := r.bytes(1, what)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (r *reader) u16(what string) (uint16, error) {
	b, err := r.bytes(2, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

func (r *reader) u32(what string) (uint32, error) {
	b, err := r.bytes(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64(what string) (uint64, error) {
	b, err := r.bytes(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// bVarChar reads a B_VARCHAR: a byte count of UCS-2 code units, then the text.
func (r *reader) bVarChar(what string) (string, error) {
	n, err := r.u8(what + " length")
	if err != nil {
		return "", err
	}
	b, err := r.bytes(2*int(n), what)
	if err != nil {
		return "", err
	}
	return fromUCS2(b), nil
}

// bVarCharBytes reads a B_VARCHAR whose length byte counts bytes of UCS-2,
// as Transaction Manager names are sent (tedious, SqlClient).
func (r *reader) bVarCharBytes(what string) (string, error) {
	n, err := r.u8(what + " length")
	if err != nil {
		return "", err
	}
	if n%2 != 0 {
		return "", fmt.Errorf("offset %d: %s has an odd byte length %d", r.off-1, what, n)
	}
	b, err := r.bytes(int(n), what)
	if err != nil {
		return "", err
	}
	return fromUCS2(b), nil
}

// fromUCS2 decodes little-endian UTF-16. An odd trailing byte is dropped and
// unpaired surrogates become U+FFFD.
func fromUCS2(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// toUCS2 encodes s as little-endian UTF-16.
func toUCS2(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for _, r := range s {
		if r >= 0x10000 && r <= utf8.MaxRune {
			r1, r2 := utf16.EncodeRune(r)
			out = binary.LittleEndian.AppendUint16(out, uint16(r1))
			out = binary.LittleEndian.AppendUint16(out, uint16(r2))
			continue
		}
		out = binary.LittleEndian.AppendUint16(out, uint16(r))
	}
	return out
}

// ucs2Len is the number of UTF-16 code units in s.
func ucs2Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// writer accumulates a little-endian token stream.
type writer struct{ buf []byte }

func (w *writer) u8(v byte)    { w.buf = append(w.buf, v) }
func (w *writer) u16(v uint16) { w.buf = binary.LittleEndian.AppendUint16(w.buf, v) }
func (w *writer) u32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }
func (w *writer) u64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }
func (w *writer) raw(b []byte) { w.buf = append(w.buf, b...) }

// bVarChar writes a B_VARCHAR, truncating to 255 code units.
func (w *writer) bVarChar(s string) {
	b := toUCS2(s)
	if len(b) > 2*math.MaxUint8 {
		b = b[:2*math.MaxUint8]
	}
	w.u8(byte(len(b) / 2))
	w.raw(b)
}

// usVarChar writes a US_VARCHAR, truncating to 65535 code units.
func (w *writer) usVarChar(s string) {
	b := toUCS2(s)
	if len(b) > 2*math.MaxUint16 {
		b = b[:2*math.MaxUint16]
	}
	w.u16(uint16(len(b) / 2))
	w.raw(b)
}
