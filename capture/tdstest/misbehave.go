package tdstest

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// Misbehaviours: replies a real server would not send, for testing that a
// client bounds every wait. A response given one of them ignores ATTENTION
// and ends only when the client closes the connection.

// Endless is the Misbehave value whose reply is rs's metadata followed by
// rs's rows sent over and over. rs needs at least one row.
func Endless(rs *ResultSet) Misbehaviour { return Misbehaviour{kind: misbehaveRows, rs: rs} }

// EndlessPlan is the Misbehave value whose reply is a showplan result set
// whose one value never ends: PLP chunks of XML keep coming.
func EndlessPlan() Misbehaviour {
	return Misbehaviour{kind: misbehavePlan, rs: NewResultSet(ShowplanColumn())}
}

// Hang is the Misbehave value that sends nothing at all: no reply and no
// acknowledgement of an ATTENTION (which is recorded), until the client
// closes the connection.
func Hang() Misbehaviour { return Misbehaviour{kind: misbehaveHang} }

// Misbehaviour is a reply that never ends; see Response.Misbehave.
type Misbehaviour struct {
	kind int
	rs   *ResultSet
}

const (
	misbehaveRows = iota + 1
	misbehavePlan
	misbehaveHang
)

// Misbehave replaces the response with a misbehaviour.
func (r *Response) Misbehave(m Misbehaviour) *Response {
	r.misbehave = &m
	return r
}

// streamForever sends the misbehaving reply until a write fails (the client
// closed the connection) or the server closes. It never reads, so ATTENTION
// packets go unanswered.
func (c *conn) streamForever(m *Misbehaviour) bool {
	if m.kind == misbehaveHang {
		return c.hang()
	}
	var head writer
	m.rs.writeMetadata(&head)
	var unit []byte
	switch m.kind {
	case misbehaveRows:
		var rows writer
		if err := m.rs.writeRows(&rows); err != nil || len(rows.buf) == 0 {
			return false
		}
		unit = rows.buf
	case misbehavePlan:
		head.buf = append(head.buf, tokenRow)
		head.buf = binary.LittleEndian.AppendUint64(head.buf, 0xFFFFFFFFFFFFFFFE) // UNKNOWN_PLP_LEN
		head.buf = appendPLPChunk(head.buf, toUCS2(`<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan"><!-- `))
		unit = appendPLPChunk(nil, toUCS2(strings.Repeat("never ending ", 2000)))
	}
	if !c.writePartial(head.buf) {
		return false
	}
	for {
		select {
		case <-c.done:
			return false
		default:
		}
		if !c.writePartial(unit) {
			return false
		}
	}
}

func appendPLPChunk(b, data []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// writePartial sends body as reply packets none of which ends the message.
func (c *conn) writePartial(body []byte) bool {
	out := packetize(packetReply, body, c.packetSize)
	out[len(out)-c.lastPacketLen(len(body))+1] = 0
	_, err := c.nc.Write(out)
	return err == nil
}

// hang waits for the client to close the connection, recording the
// ATTENTIONs it sends meanwhile and answering nothing.
func (c *conn) hang() bool {
	for {
		select {
		case <-c.done:
			return false
		case rr := <-c.msgs:
			if rr.err != nil {
				c.readFailed(rr.err)
				return false
			}
			if rr.msg.typ != packetAttention {
				c.srv.protocolError(c.id, 0, fmt.Sprintf("packet type 0x%02X arrived while the server hung", rr.msg.typ))
				return false
			}
			att := Request{Conn: c.id, Kind: KindAttention, Session: c.sess, After: c.sess, Raw: rr.msg.body}
			c.srv.record(&att)
		}
	}
}
