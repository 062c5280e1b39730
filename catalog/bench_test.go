package catalog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// bigScript is a schema of n queue-like tables, each with three indexes.
func bigScript(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `CREATE TABLE dbo.Work%d (
	WorkId bigint NOT NULL CONSTRAINT PK_Work%d PRIMARY KEY CLUSTERED,
	Status tinyint NOT NULL DEFAULT (0), -- 0 pending
	CreatedAt datetime2(0) NOT NULL, CustomerId int NOT NULL,
	ClaimedAt datetime2(0) NULL, Payload nvarchar(max) NULL
)
GO
CREATE NONCLUSTERED INDEX IX_Work%d_Pending ON dbo.Work%d (CreatedAt, WorkId) INCLUDE (CustomerId) WHERE ([Status]=(0) OR [Status]=(1));
CREATE INDEX IX_Work%d_Unclaimed ON dbo.Work%d (CreatedAt) WHERE ClaimedAt IS NULL
/* noise */ SELECT TOP (20) WorkId FROM dbo.Work%d WHERE Status = 0 ORDER BY CreatedAt;
GO
`, i, i, i, i, i, i, i)
	}
	return b.String()
}

func BenchmarkParseScript(b *testing.B) {
	for _, n := range []int{1, 1000} {
		script := bigScript(n)
		b.Run(fmt.Sprintf("tables=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(script)))
			for b.Loop() {
				if _, diags, err := ParseScript("bench.sql", strings.NewReader(script)); err != nil || len(diags) != 0 {
					b.Fatal(err, diags)
				}
			}
		})
	}
}

func BenchmarkParseFilter(b *testing.B) {
	for _, f := range []string{"Status = 0", "([Status]=(0) OR [Status]=(1) OR [Status]=(2)) AND ([DeletedAt] IS NULL)"} {
		b.Run(f, func(b *testing.B) {
			for b.Loop() {
				if _, err := ParseFilter(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkImpliedBy(b *testing.B) {
	f, err := ParseFilter("([Status]=(0) OR [Status]=(1)) AND [ClaimedAt] IS NULL AND [Priority]>=(5)")
	if err != nil {
		b.Fatal(err)
	}
	preds := []Conjunct{
		{Column: "Status", Op: "=", Values: []string{"(0)"}},
		{Column: "ClaimedAt", Op: "IS NULL"},
		{Column: "Priority", Op: ">", Values: []string{"(7)"}},
		{Column: "CustomerId", Op: "=", Values: []string{"(42)"}},
	}
	for b.Loop() {
		if ok, _ := f.ImpliedBy(preds); !ok {
			b.Fatal("not implied")
		}
	}
}

func BenchmarkCompareLiterals(b *testing.B) {
	for _, pair := range [][2]string{{"(0)", "0.0"}, {"N'PENDING'", "'PENDING'"}, {"'2024-01-01'", "'2024-02-01'"}} {
		b.Run(pair[0]+" vs "+pair[1], func(b *testing.B) {
			for b.Loop() {
				CompareLiterals(pair[0], pair[1])
			}
		})
	}
}

func BenchmarkJSON(b *testing.B) {
	c, diags, err := ParseScript("bench.sql", strings.NewReader(bigScript(1000)))
	if err != nil || len(diags) != 0 {
		b.Fatal(err, diags)
	}
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.Run("Write/tables=1000", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := Write(&bytes.Buffer{}, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Load/tables=1000", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := decodeJSON("bench.json", data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFindTable(b *testing.B) {
	c, _, err := ParseScript("bench.sql", strings.NewReader(bigScript(1000)))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if c.FindTable("[Shop]", "[dbo]", "[Work999]") == nil {
			b.Fatal("not found")
		}
	}
}
