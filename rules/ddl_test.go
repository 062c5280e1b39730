package rules

import (
	"strings"
	"testing"
)

func TestIndexDDL(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    indexDDL
		want string
	}{
		{"keys and include", indexDDL{Table: "Work", Keys: []string{"Status", "CreatedAt"}, Include: []string{"CustomerId"}},
			"CREATE INDEX IX_Work_Status_CreatedAt ON dbo.Work (Status, CreatedAt) INCLUDE (CustomerId);"},
		{"filtered, descending, quoted", indexDDL{Schema: "q", Table: "Order Lines", Keys: []string{"Created At"}, Desc: map[string]bool{"created at": true}, Where: "Status = 0"},
			"CREATE INDEX IX_Order_Lines_Created_At_Filtered ON q.[Order Lines] ([Created At] DESC) WHERE Status = 0;"},
		{"rebuild", indexDDL{Table: "Work", Name: "IX_Work_Status", Keys: []string{"Status"}, Include: []string{"A", "B"}, DropExisting: true},
			"CREATE INDEX IX_Work_Status ON dbo.Work (Status) INCLUDE (A, B) WITH (DROP_EXISTING = ON);"},
		{"unique", indexDDL{Schema: "Sales", Table: "Orders", Name: "UX_Orders_OrderNo", Keys: []string{"OrderNo"}, Unique: true},
			"CREATE UNIQUE INDEX UX_Orders_OrderNo ON Sales.Orders (OrderNo);"},
	} {
		if got := tc.x.String(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	long := indexDDL{Table: strings.Repeat("T", 100), Keys: []string{strings.Repeat("K", 100)}}
	if n := len([]rune(long.IndexName())); n != maxIdentifier {
		t.Errorf("long name has %d characters, want %d", n, maxIdentifier)
	}
	ev := map[string]any{}
	indexDDL{Table: "Work", Keys: []string{"Status"}, Where: "Status = 0"}.addEvidence(ev)
	if ev["create_index"] != "CREATE INDEX IX_Work_Status_Filtered ON dbo.Work (Status) WHERE Status = 0;" || ev["filter"] != "Status = 0" {
		t.Errorf("evidence %v", ev)
	}
}
