package tdstest

import (
	"context"
	"database/sql"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	mssql "github.com/microsoft/go-mssqldb"
)

// keptDialer dials TCP and keeps the connection, so that a test can close
// it under the driver.
type keptDialer struct {
	mu   sync.Mutex
	conn net.Conn
}

func (d *keptDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	d.mu.Lock()
	d.conn = c
	d.mu.Unlock()
	return c, err
}

// TestHang: a request answered with Hang gets no reply and its ATTENTION no
// acknowledgement (the driver waits on), until the client closes the
// connection; the server then ends the connection.
func TestHang(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		if strings.HasPrefix(r.SQL, "WAITFOR") {
			return NewResponse().Misbehave(Hang())
		}
		return nil
	}})
	connector, err := mssql.NewConnector(s.DSN(disableEncrypt))
	if err != nil {
		t.Fatal(err)
	}
	dialer := &keptDialer{}
	connector.Dialer = dialer
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	conn := pinnedConn(t, db)
	ctx, cancel := context.WithCancel(testContext(t))
	result := make(chan error, 1)
	go func() {
		_, err := conn.ExecContext(ctx, "WAITFOR DELAY '01:00:00'")
		result <- err
	}()
	waitForRequest(t, s, "WAITFOR")
	cancel()
	var id int
	for deadline := time.Now().Add(testTimeout); id == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the attention was not recorded")
		}
		for _, r := range s.Requests() {
			if r.Kind == KindAttention {
				id = r.Conn
			}
		}
	}
	if _, open := s.Session(id); !open {
		t.Fatal("the connection ended before the client closed it")
	}
	select {
	case err := <-result:
		t.Fatalf("the request returned (%v) although the server acknowledged nothing", err)
	default:
	}
	dialer.mu.Lock()
	dialer.conn.Close()
	dialer.mu.Unlock()
	select {
	case err := <-result:
		if err == nil {
			t.Error("the request succeeded on a closed connection")
		}
	case <-time.After(testTimeout):
		t.Fatal("the request did not return after the connection closed")
	}
	for deadline := time.Now().Add(testTimeout); ; time.Sleep(5 * time.Millisecond) {
		if _, open := s.Session(id); !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server kept the closed connection")
		}
	}
}
