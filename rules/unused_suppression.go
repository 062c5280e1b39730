package rules

// UnusedSuppression is reported by `planlint explain` itself, not from a
// plan: a planlint-ignore comment that silenced nothing.
var UnusedSuppression = &Rule{
	Code:     "PL001",
	Name:     "unused-suppression",
	Severity: Warning,
	Summary:  "A planlint-ignore comment matches no finding",
	Doc: Doc{
		Problem: "A suppression that no longer silences anything hides the next real finding of that rule on that " +
			"statement, and tells readers something that is not true. It usually means the plan improved, or the comment " +
			"names the wrong rule or sits above the wrong statement.",
		Evidence: "After `planlint explain` has analysed a .sql file, every `-- planlint-ignore RULE -- reason`, " +
			"`/* planlint-ignore RULE: reason */` and `-- planlint-ignore-file RULE -- reason` comment that matched no finding " +
			"of its statement (or of the file) is reported at the comment.",
		Example: "```sql\n-- planlint-ignore key-lookup -- the lookup is cheap here\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId;\n```\n" +
			"The plan has no Key Lookup any more, so the comment is unused.",
		Fix:         "Delete the comment, or correct the rule name or its position.",
		FalseAlarms: "A suppression for a finding that appears only with other options (`--actual`, another database) is unused in runs without them; keep those runs' options in CI.",
	},
}

func init() { register(UnusedSuppression) }
