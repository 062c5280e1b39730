package baseline_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/planlint/planlint/baseline"
	"github.com/planlint/planlint/sqlscript"
)

// TestReformattedStatementStaysBaselined keys findings with the real
// statement fingerprint: reformatting, re-casing, comments and a moved
// statement keep a finding baselined; a changed predicate does not.
func TestReformattedStatementStaysBaselined(t *testing.T) {
	const before = "SELECT TOP (20) JobId, Payload FROM dbo.Jobs WHERE ClaimedAt IS NULL ORDER BY CreatedAt;"
	tests := []struct {
		name  string
		after string
		known bool
	}{
		{"unchanged", before, true},
		{"reflowed over lines", "SELECT TOP (20) JobId, Payload\n  FROM dbo.Jobs\n WHERE ClaimedAt IS NULL\n ORDER BY CreatedAt", true},
		{"re-cased and bracketed", "select top (20) [JobId], [Payload] from [dbo].[Jobs] where [ClaimedAt] is null order by [CreatedAt];", true},
		{"commented", "-- poll the queue\nSELECT TOP (20) JobId, Payload /* body */ FROM dbo.Jobs WHERE ClaimedAt IS NULL ORDER BY CreatedAt;", true},
		{"different predicate", "SELECT TOP (20) JobId, Payload FROM dbo.Jobs WHERE ClaimedAt IS NOT NULL ORDER BY CreatedAt;", false},
	}
	key := func(sql string) baseline.Key {
		return baseline.Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: sqlscript.Fingerprint(sql), Node: baseline.NodeSignature("Key Lookup", "[dbo].[Jobs].[PK_Jobs]")}
	}
	var buf bytes.Buffer
	if err := baseline.Write(&buf, baseline.Entries([]baseline.Item{{Key: key(before)}})); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := baseline.Parse("b.json", buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			_, known := b.Filter([]baseline.Item{{Key: key(tt.after)}})
			if (known == 1) != tt.known {
				t.Errorf("known = %d; want baselined %v", known, tt.known)
			}
		})
	}
}

func Example() {
	// --write-baseline: record the current findings.
	current := []baseline.Item{
		{Key: baseline.Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: "3f2a", Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}},
		{Key: baseline.Key{Rule: "residual-sort", File: "sql/queue.sql", Fingerprint: "3f2a", Node: "Sort"}},
	}
	var file bytes.Buffer
	if err := baseline.Write(&file, baseline.Entries(current)); err != nil {
		panic(err)
	}
	fmt.Print(file.String())

	// --baseline: a later run hides what was recorded.
	b, err := baseline.Parse(".planlint-baseline.json", file.Bytes())
	if err != nil {
		panic(err)
	}
	later := []baseline.Item{
		{Key: baseline.Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: "3f2a", Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}, Finding: "old lookup"},
		{Key: baseline.Key{Rule: "key-lookup", File: "sql/queue.sql", Fingerprint: "3f2a", Node: "Key Lookup [dbo].[Jobs].[PK_Jobs]"}, Finding: "new lookup"},
	}
	fresh, known := b.Filter(later)
	fmt.Println("known:", known)
	for _, it := range fresh {
		fmt.Println("fresh:", it.Finding)
	}
	for _, e := range b.Unmatched() {
		fmt.Printf("fixed: %s %s (%d)\n", e.Rule, e.Node, e.Count)
	}
	// Output:
	// {
	//   "version": 1,
	//   "entries": [
	//     {"file":"sql/queue.sql","rule":"key-lookup","fingerprint":"3f2a","node":"Key Lookup [dbo].[Jobs].[PK_Jobs]","count":1},
	//     {"file":"sql/queue.sql","rule":"residual-sort","fingerprint":"3f2a","node":"Sort","count":1}
	//   ]
	// }
	// known: 1
	// fresh: new lookup
	// fixed: residual-sort Sort (1)
}
