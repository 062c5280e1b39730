package tdstest

import (
	"net/url"
	"testing"
)

func BenchmarkEncodeShowplan(b *testing.B) {
	plan := syntheticPlan(45_000)
	var w writer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.buf = w.buf[:0]
		if _, err := EstimatedPlan(plan).encode(&w, encodeContext{rpc: true, server: "tdstest"}); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(w.buf)))
	}
}

func BenchmarkParseRPC(b *testing.B) {
	var body []byte
	for _, m := range driverMessages(b)[KindRPC] {
		if len(m) > len(body) {
			body = m
		}
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := parseRPC(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShowplanRoundTrip is one estimated-plan capture through
// go-mssqldb over loopback: the RPC out, a 45,000-character plan back.
func BenchmarkShowplanRoundTrip(b *testing.B) {
	plan := syntheticPlan(45_000)
	for _, size := range []string{"4096", "512"} {
		b.Run("packet size "+size, func(b *testing.B) {
			s, err := NewServer(Config{Handler: func(Session, *Request) *Response { return EstimatedPlan(plan) }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			db := benchDB(b, s, url.Values{"encrypt": {"disable"}, "packet size": {size}})
			b.SetBytes(int64(2 * len(plan)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var got string
				if err := db.QueryRow("SELECT Id FROM dbo.Queue WHERE Status = @p1", 0).Scan(&got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
