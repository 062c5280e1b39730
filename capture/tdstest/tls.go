package tdstest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"sync"
	"time"
)

// Encryption modes of a connection, as Session.Encryption reports them.
const (
	// EncryptionNone: the client said NOT_SUP, nothing is encrypted.
	EncryptionNone = "none"
	// EncryptionLogin: the client said OFF (go-mssqldb's default): the TLS
	// handshake travels in PRELOGIN packets and only LOGIN7 is encrypted.
	EncryptionLogin = "login"
	// EncryptionFull: the client asked for encryption (encrypt=true): the
	// handshake travels in PRELOGIN packets and everything after it is
	// encrypted.
	EncryptionFull = "full"
	// EncryptionStrict: TDS 8.0 (encrypt=strict): TLS from the first byte,
	// ALPN "tds/8.0", PRELOGIN inside it.
	EncryptionStrict = "strict"
)

// Certificate is a server certificate for the test server: a self-signed
// ECDSA certificate for 127.0.0.1 and localhost, usable as its own CA.
type Certificate struct {
	TLS tls.Certificate
	PEM []byte // the certificate, PEM-encoded, for a client's trust store
}

var (
	defaultCertOnce sync.Once
	defaultCert     *Certificate
	defaultCertErr  error
)

// defaultCertificate is generated once per process, as a SQL Server
// generates its self-signed certificate at startup.
func defaultCertificate() (*Certificate, error) {
	defaultCertOnce.Do(func() { defaultCert, defaultCertErr = NewCertificate() })
	return defaultCert, defaultCertErr
}

// NewCertificate generates a self-signed certificate valid for a day.
func NewCertificate() (*Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("tdstest: certificate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("tdstest: certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "tdstest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("tdstest: certificate: %w", err)
	}
	return &Certificate{
		TLS: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	}, nil
}

// tlsConfig is the server side of the TLS session. Inside PRELOGIN packets
// SQL Server speaks TLS 1.2; TDS 8.0 also allows 1.3. Session tickets are
// off: a ticket sent after the handshake would be left in a PRELOGIN packet
// the client no longer reads.
func (c *conn) tlsConfig(strict bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{c.srv.cert.TLS}, MinVersion: tls.VersionTLS12,
		MaxVersion: tls.VersionTLS12, SessionTicketsDisabled: true}
	if strict {
		cfg.MaxVersion = tls.VersionTLS13
		cfg.NextProtos = []string{"tds/8.0"}
	}
	return cfg
}

// bufferedConn is a net.Conn whose reads go through a bufio.Reader, so the
// first byte can be peeked to tell TLS from PRELOGIN.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// preloginTransport carries TLS handshake records inside PRELOGIN (0x12)
// packets, as SQL Server does before the login. Writes are collected and
// sent as one message when the TLS engine next reads (or on flush).
type preloginTransport struct {
	net.Conn   // the raw connection, for addresses and deadlines
	rw         io.ReadWriter
	packetSize int
	in         []byte // unread payload of the last PRELOGIN message
	out        []byte
	err        error // a packet that was not PRELOGIN
}

func (p *preloginTransport) Read(b []byte) (int, error) {
	if err := p.flush(); err != nil {
		return 0, err
	}
	for len(p.in) == 0 {
		m, err := readMessage(p.rw)
		if err != nil {
			return 0, err
		}
		if m.typ != packetPrelogin {
			p.err = fmt.Errorf("packet type 0x%02X during the TLS handshake, want PRELOGIN (0x12)", m.typ)
			return 0, p.err
		}
		p.in = m.body
	}
	n := copy(b, p.in)
	p.in = p.in[n:]
	return n, nil
}

func (p *preloginTransport) Write(b []byte) (int, error) {
	p.out = append(p.out, b...)
	return len(b), nil
}

func (p *preloginTransport) flush() error {
	if len(p.out) == 0 {
		return nil
	}
	_, err := p.rw.Write(packetize(packetPrelogin, p.out, p.packetSize))
	p.out = nil
	return err
}

// switchConn lets the TLS session move from the PRELOGIN-wrapped
// handshake to the raw connection, as go-mssqldb's client side does.
type switchConn struct {
	net.Conn
}
