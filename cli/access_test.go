package cli

import (
	"strings"
	"testing"
)

// A missing-index request repeated in two statements of one file is
// reported once, whether the file is streamed (text) or held (html needs
// the plans) — the stream remembers earlier statements' requests.
func TestRepeatedMissingIndexReportedOnce(t *testing.T) {
	const plan = "../rules/testdata/access/access-paths.sqlplan"
	for _, format := range []string{"text", "json"} {
		out, _, _ := run(t, "", "check", "--format", format, plan)
		if n := strings.Count(out, "CREATE INDEX IX_Orders_CustomerId ON dbo.Orders (CustomerId) INCLUDE (Total);"); n == 0 || (format == "text" && n != 1) {
			t.Errorf("%s: the repeated request's DDL appears %d times:\n%s", format, n, out)
		}
		if strings.Contains(out, "stmt 6: warning [PL304") {
			t.Errorf("%s: the request was reported again on statement 6:\n%s", format, out)
		}
	}
}
