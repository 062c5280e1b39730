package tdstest

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-sql/civil"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/shopspring/decimal"
)

// allTypes is one column of every type the builder offers.
func allTypes() []Column {
	return []Column{
		NVarChar("name", 128), NVarCharMax("filter_definition").Chunked(7), XML("doc"), NText("legacy"),
		Int("id"), BigInt("big"), SmallInt("small"), TinyInt("tiny"), Bit("flag"), Float("ratio"),
		DateTime2("at", 7), Decimal("price", 12, 3), SQLVariant("setting"),
	}
}

func TestResultSetTypesAndNulls(t *testing.T) {
	at := time.Date(2024, 2, 29, 13, 14, 15, 123456700, time.UTC)
	full := []any{"IX_Queue_Pending", "([Status]=(0))", "<a>é</a>", "old text",
		int32(-7), int64(1) << 40, int16(-300), uint8(255), true, 0.25, at, "-12.345", 1}
	nulls := make([]any, len(full))
	tests := []struct {
		name  string
		plain bool
	}{{"NBCROW for NULL rows", false}, {"plain ROW forced", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
				rs := NewResultSet(allTypes()...).Row(full...).Row(nulls...)
				if tt.plain {
					rs.PlainRows()
				}
				return NewResponse().Result(rs)
			}})
			rows, err := openDB(t, s, disableEncrypt).QueryContext(testContext(t), "SELECT * FROM sys.indexes")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			types, _ := rows.ColumnTypes()
			wantDB := []string{"NVARCHAR", "NVARCHAR", "XML", "NTEXT", "INT", "BIGINT", "SMALLINT", "TINYINT", "BIT", "FLOAT", "DATETIME2", "DECIMAL", "SQL_VARIANT"}
			for i, ct := range types {
				if ct.DatabaseTypeName() != wantDB[i] {
					t.Errorf("column %s: database type %s, want %s", ct.Name(), ct.DatabaseTypeName(), wantDB[i])
				}
			}
			var got [][]any
			for rows.Next() {
				vals := make([]any, len(types))
				ptrs := make([]any, len(types))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				got = append(got, vals)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			want := []any{"IX_Queue_Pending", "([Status]=(0))", "<a>é</a>", "old text",
				int64(-7), int64(1) << 40, int64(-300), int64(255), true, 0.25, at, []byte("-12.345"), int64(1)}
			if len(got) != 2 {
				t.Fatalf("got %d rows, want 2", len(got))
			}
			for i, w := range want {
				if !equalValue(got[0][i], w) {
					t.Errorf("column %s = %#v, want %#v", types[i].Name(), got[0][i], w)
				}
				if got[1][i] != nil {
					t.Errorf("NULL row: column %s = %#v, want nil", types[i].Name(), got[1][i])
				}
			}
		})
	}
}

func TestRowTokenChoice(t *testing.T) {
	tests := []struct {
		name  string
		rs    *ResultSet
		token byte
	}{
		{"no NULLs uses ROW", NewResultSet(NVarCharMax("f")).Row("x"), tokenRow},
		{"a NULL uses NBCROW", NewResultSet(NVarCharMax("f")).Row(nil), tokenNBCRow},
		{"PlainRows keeps ROW", NewResultSet(NVarCharMax("f")).Row(nil).PlainRows(), tokenRow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var meta, all writer
			tt.rs.writeMetadata(&meta)
			if _, err := NewResponse().Result(tt.rs).encode(&all, encodeContext{server: "x"}); err != nil {
				t.Fatal(err)
			}
			if got := all.buf[len(meta.buf)]; got != tt.token {
				t.Errorf("row token = 0x%02X, want 0x%02X", got, tt.token)
			}
		})
	}
}

func TestResponseBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		resp *Response
		want string
	}{
		{"too few values", NewResponse().Result(NewResultSet(Int("a"), Int("b")).Row(1)), "row 1 has 1 values for 2 columns"},
		{"wrong Go type", NewResponse().Result(NewResultSet(Int("a")).Row("x")), `column "a" (int): cannot send a string value`},
		{"int out of range", NewResponse().Result(NewResultSet(TinyInt("a")).Row(256)), "256 is out of range for tinyint"},
		{"string too long", NewResponse().Result(NewResultSet(NVarChar("a", 2)).Row("abc")), "holds 2"},
		{"NULL in NOT NULL", NewResponse().Result(NewResultSet(Int("a").NotNull()).Row(nil)), "NOT NULL"},
		{"decimal too precise", NewResponse().Result(NewResultSet(Decimal("a", 5, 1)).Row("1.25")), "2 fraction digits, scale is 1"},
		{"decimal too wide", NewResponse().Result(NewResultSet(Decimal("a", 3, 0)).Row(1234)), "precision is 3"},
		{"bad nvarchar length", NewResponse().Result(NewResultSet(NVarChar("a", 0))), "outside 1..4000"},
		{"no columns", NewResponse().Result(NewResultSet()), "no columns"},
		{"variant out of int range", NewResponse().Result(NewResultSet(SQLVariant("v")).Row(int64(1) << 40)), "does not fit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writer
			_, err := tt.resp.encode(&w, encodeContext{server: "x"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("encode error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBadResponseReachesClientAndRecord(t *testing.T) {
	s, err := NewServer(Config{Handler: func(sess Session, r *Request) *Response {
		return NewResponse().Result(NewResultSet(Int("a")).Row("not a number"))
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = openDB(t, s, disableEncrypt).ExecContext(testContext(t), "SELECT a FROM t")
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != UnhandledNumber || !strings.Contains(me.Message, "cannot send a string") {
		t.Fatalf("err = %v, want the invalid-response error", err)
	}
	if pe := s.ProtocolErrors(); len(pe) != 1 || !strings.Contains(pe[0].Err, "cannot send a string") {
		t.Fatalf("protocol errors = %v, want the invalid response", pe)
	}
}

func TestUnhandledRequestsAreLoud(t *testing.T) {
	s, err := NewServer(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := openDB(t, s, disableEncrypt)
	_, err = db.ExecContext(testContext(t), "SELECT * FROM dbo.Queue")
	var me mssql.Error
	if !errors.As(err, &me) || me.Number != UnhandledNumber || !strings.Contains(me.Message, "SELECT * FROM dbo.Queue") {
		t.Fatalf("err = %v, want the unhandled-request error naming the batch", err)
	}
	if _, err := db.ExecContext(testContext(t), "SET ANSI_NULLS ON"); err != nil {
		t.Fatalf("session batch needs no handler: %v", err)
	}
	un := s.Unhandled()
	if len(un) != 1 || un[0].SQL != "SELECT * FROM dbo.Queue" {
		t.Fatalf("unhandled = %+v, want the one SELECT", un)
	}
}

func TestCloseMidResult(t *testing.T) {
	plan := syntheticPlan(20_000)
	tests := []struct {
		name string
		resp func() *Response
	}{
		{"after column metadata", func() *Response { return EstimatedPlan(plan).CloseAfterMetadata() }},
		{"after 700 bytes", func() *Response { return EstimatedPlan(plan).CloseAfterBytes(700) }},
		{"before anything", func() *Response { return EstimatedPlan(plan).CloseAfterBytes(0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Start(t, Config{Handler: func(sess Session, r *Request) *Response { return tt.resp() }})
			ctx := testContext(t)
			rows, err := openDB(t, s, url.Values{"encrypt": {"disable"}, "packet size": {"512"}}).QueryContext(ctx, "SELECT * FROM t")
			if err == nil {
				for rows.Next() {
				}
				err = rows.Err()
				rows.Close()
			}
			if err == nil {
				t.Fatal("reading a result cut off by the server succeeded")
			}
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("client hung until the test deadline: %v", err)
			}
		})
	}
}

func TestSessionBatches(t *testing.T) {
	// Not Start: one batch is invalid T-SQL and must stay unhandled.
	s, err := NewServer(Config{Databases: []string{"master", "Queues"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := testContext(t)
	conn := pinnedConn(t, openDB(t, s, disableEncrypt))
	tests := []struct {
		sql     string
		wantErr int32
		check   func(Session) bool
	}{
		{"SET ANSI_NULLS, QUOTED_IDENTIFIER OFF; SET ARITHABORT ON\nSET NUMERIC_ROUNDABORT ON -- done", 0, func(s Session) bool {
			return !s.Options.AnsiNulls && !s.Options.QuotedIdentifier && s.Options.ArithAbort && s.Options.NumericRoundAbort && s.Options.AnsiPadding
		}},
		{"set nocount on;\r\nset xact_abort on;", 0, func(s Session) bool { return s.NoCount && s.XactAbort }},
		{"/* capture */ SET STATISTICS XML ON", 0, func(s Session) bool { return s.StatisticsXML }},
		{"SET STATISTICS XML OFF;", 0, func(s Session) bool { return !s.StatisticsXML }},
		{"USE [Queues]", 0, func(s Session) bool { return s.Database == "Queues" }},
		{"USE Nowhere", 911, func(s Session) bool { return s.Database == "Queues" }},
		{"SET ANSI_NULLS OFF, QUOTED_IDENTIFIER OFF", UnhandledNumber, func(s Session) bool { return !s.Options.AnsiNulls }},
		{"SET SHOWPLAN_XML ON; SET NOCOUNT ON", 1067, func(s Session) bool { return !s.ShowplanXML }},
		{"SET SHOWPLAN_XML ON\nSELECT * FROM dbo.Queue", 1067, func(s Session) bool { return !s.ShowplanXML }},
		{"SET SHOWPLAN_XML ON;", 0, func(s Session) bool { return s.ShowplanXML }},
		{"SET SHOWPLAN_XML OFF", 0, func(s Session) bool { return !s.ShowplanXML }},
		{"BEGIN TRANSACTION; BEGIN TRAN", 0, func(s Session) bool { return s.TranCount == 2 }},
		{"COMMIT TRAN", 0, func(s Session) bool { return s.TranCount == 1 }},
		{"ROLLBACK", 0, func(s Session) bool { return s.TranCount == 0 }},
		{"ROLLBACK TRANSACTION", 3903, func(s Session) bool { return s.TranCount == 0 }},
	}
	for _, tt := range tests {
		_, err = conn.ExecContext(ctx, tt.sql)
		var me mssql.Error
		switch {
		case tt.wantErr == 0 && err != nil:
			t.Errorf("%q: %v", tt.sql, err)
		case tt.wantErr != 0 && (!errors.As(err, &me) || me.Number != tt.wantErr):
			t.Errorf("%q: err = %v, want error %d", tt.sql, err, tt.wantErr)
		}
		reqs := s.Requests()
		if last := reqs[len(reqs)-1]; !tt.check(last.After) {
			t.Errorf("%q: session after = %+v", tt.sql, last.After)
		}
	}
	if live, ok := s.Session(lastConn(t, s)); !ok || live.Database != "Queues" {
		t.Errorf("live session = %+v, %v", live, ok)
	}
}

func TestRPCParameterTypes(t *testing.T) {
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response { return NewResponse() }})
	long := strings.Repeat("ü", 4001)
	guid := mssql.UniqueIdentifier{0x6F, 0x96, 0x19, 0xFF, 0x8B, 0x86, 0xD0, 0x11, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF}
	dto := time.Date(2024, 5, 6, 7, 8, 9, 100, time.FixedZone("", 2*3600))
	var out int64
	money := mssql.Money[decimal.Decimal]{Decimal: decimal.RequireFromString("-1234.5678")}
	args := []any{
		int64(-5), int32(7), int16(-3), int8(9), true, 1.5, []byte{1, 2, 3}, dto, nil,
		long, "", mssql.VarChar("ascii"), mssql.NVarCharMax("m"), mssql.NChar("c"),
		mssql.DateTime1(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)),
		civil.Date{Year: 2021, Month: 3, Day: 4}, civil.DateTime{Date: civil.Date{Year: 2021, Month: 3, Day: 4}, Time: civil.Time{Hour: 5, Minute: 6, Second: 7}},
		civil.Time{Hour: 23, Minute: 59, Second: 58, Nanosecond: 5000},
		decimal.RequireFromString("-1234.5678"), guid, sql.Named("out", sql.Out{Dest: &out}),
		sql.Named("cash", sql.Out{Dest: &money}),
	}
	if _, err := openDB(t, s, url.Values{"encrypt": {"disable"}, "packet size": {"512"}}).ExecContext(testContext(t), "EXEC dbo.Probe", args...); err != nil {
		t.Fatal(err)
	}
	rpc := requestsOf(s.Requests(), 0, KindRPC)[0]
	want := []Param{
		{TypeID: 0xE7, Type: "nvarchar(14)", Value: "EXEC dbo.Probe"},
		{TypeID: 0xE7},
		{Name: "@p1", TypeID: 0x26, Type: "bigint", Value: int64(-5)},
		{Name: "@p2", TypeID: 0x26, Type: "int", Value: int64(7)},
		{Name: "@p3", TypeID: 0x26, Type: "smallint", Value: int64(-3)},
		{Name: "@p4", TypeID: 0x26, Type: "tinyint", Value: int64(9)},
		{Name: "@p5", TypeID: 0x68, Type: "bit", Value: true},
		{Name: "@p6", TypeID: 0x6D, Type: "float", Value: 1.5},
		{Name: "@p7", TypeID: 0xA5, Type: "varbinary(3)", Value: []byte{1, 2, 3}},
		{Name: "@p8", TypeID: 0x2B, Type: "datetimeoffset(7)", Value: dto},
		{Name: "@p9", TypeID: 0x1F, Type: "null", Value: nil},
		{Name: "@p10", TypeID: 0xE7, Type: "nvarchar(max)", Value: long},
		{Name: "@p11", TypeID: 0xE7, Type: "nvarchar(max)", Value: ""},
		{Name: "@p12", TypeID: 0xA7, Type: "varchar(5)", Value: "ascii"},
		{Name: "@p13", TypeID: 0xE7, Type: "nvarchar(max)", Value: "m"},
		{Name: "@p14", TypeID: 0xEF, Type: "nchar(1)", Value: "c"},
		{Name: "@p15", TypeID: 0x6F, Type: "datetime", Value: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Name: "@p16", TypeID: 0x28, Type: "date", Value: time.Date(2021, 3, 4, 0, 0, 0, 0, time.UTC)},
		{Name: "@p17", TypeID: 0x2A, Type: "datetime2(7)", Value: time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)},
		{Name: "@p18", TypeID: 0x29, Type: "time(7)", Value: time.Date(1, 1, 1, 23, 59, 58, 5000, time.UTC)},
		{Name: "@p19", TypeID: 0xE7, Type: "nvarchar(10)", Value: "-1234.5678"}, // the driver sends decimals as text
		{Name: "@p20", TypeID: 0x24, Type: "uniqueidentifier", Value: guid.String()},
		{Name: "@out", TypeID: 0x26, Type: "bigint", Value: int64(0), Output: true},
		{Name: "@cash", TypeID: 0x6E, Type: "money", Value: "-1234.5678", Output: true},
	}
	if len(rpc.Params) != len(want) {
		t.Fatalf("got %d parameters, want %d", len(rpc.Params), len(want))
	}
	want[1].Type, want[1].Value = rpc.Params[1].Type, rpc.Params[1].Value // the declaration, checked below
	assertParams(t, rpc.Params, want)
	if !strings.HasPrefix(rpc.ParamDecl, "@p1 bigint,@p2 int,@p3 smallint,@p4 tinyint,@p5 bit,@p6 float,") ||
		!strings.HasSuffix(rpc.ParamDecl, "@out bigint output,@cash money output") {
		t.Errorf("declaration = %q", rpc.ParamDecl)
	}
}

func TestQueryTemplateOutputParameters(t *testing.T) {
	const query = "SELECT Id FROM dbo.Queue WHERE Status = 0"
	s := Start(t, Config{Handler: func(sess Session, r *Request) *Response {
		if r.Kind != KindRPC || r.Proc != "sp_get_query_template" {
			return nil
		}
		return NewResponse().
			ReturnValue("@templatetext", NVarCharMax(""), "select Id from dbo . Queue where Status = @0").
			ReturnValue("@parameters", NVarCharMax(""), "@0 int")
	}})
	var template, params string
	_, err := openDB(t, s, disableEncrypt).ExecContext(testContext(t), "sp_get_query_template",
		sql.Named("querytext", query),
		sql.Named("templatetext", sql.Out{Dest: &template}),
		sql.Named("parameters", sql.Out{Dest: &params}))
	if err != nil {
		t.Fatal(err)
	}
	if template != "select Id from dbo . Queue where Status = @0" || params != "@0 int" {
		t.Errorf("outputs = %q, %q", template, params)
	}
	rpc := requestsOf(s.Requests(), 0, KindRPC)[0]
	assertParams(t, rpc.Params, []Param{
		{Name: "@querytext", TypeID: 0xE7, Type: "nvarchar(41)", Value: query},
		{Name: "@templatetext", TypeID: 0xE7, Type: "nvarchar(max)", Value: "", Output: true},
		{Name: "@parameters", TypeID: 0xE7, Type: "nvarchar(max)", Value: "", Output: true},
	})
}
