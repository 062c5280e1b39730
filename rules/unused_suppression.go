package rules

// UnusedSuppression is reported by planlint itself, not from a plan: a
// planlint-ignore comment (explain) or a suppress entry of .planlint.yaml
// that silenced nothing.
var UnusedSuppression = &Rule{
	Code:     "PL001",
	Name:     "unused-suppression",
	Severity: Warning,
	Summary:  "A planlint-ignore comment or a suppress entry of .planlint.yaml matches no finding",
	Doc: Doc{
		Problem: "A suppression that no longer silences anything hides the next real finding of that rule on that " +
			"statement or file, and tells readers something that is not true. It usually means the plan improved, or the " +
			"suppression names the wrong rule, sits above the wrong statement or names the wrong files.",
		Evidence: "After `planlint explain` has analysed a .sql file, every `-- planlint-ignore RULE -- reason`, " +
			"`/* planlint-ignore RULE -- reason */` and `-- planlint-ignore-file RULE -- reason` comment (`: reason` is accepted " +
			"for ` -- reason`) that matched no finding of its statement (or of the file) is reported at the comment.\n\n" +
			"A `suppress` entry of `.planlint.yaml` that matched no finding is reported at the entry's line in the config file, " +
			"but only when the run could have seen every finding the entry is about: the entry has `paths`, they match at " +
			"least one file the command reads (for `check`, names that `--include` accepts, `*.sqlplan` and `*.xml` by default; " +
			"for `explain`, `.sql` files) below the config file's directory and not dropped by `exclude`, and every such file " +
			"was analysed without error in this run. So `planlint check one.sqlplan` says nothing about entries for other " +
			"files, and `planlint check plans/` reports the stale entries for `plans/`. Entries without `paths` (only " +
			"`operator` or `statement` fingerprints) and runs of `cache` and `querystore` never report unused entries.",
		Example: "```sql\n-- planlint-ignore key-lookup -- the lookup is cheap here\nSELECT TOP (20) WorkId FROM dbo.Work WHERE Status = 0 ORDER BY CreatedAt, WorkId;\n```\n" +
			"The plan has no Key Lookup any more, so the comment is unused. In `.planlint.yaml`:\n\n" +
			"```yaml\nsuppress:\n  - rule: spill\n    paths: [plans/old/**]\n    reason: the old plans spilled before the upgrade\n```\n" +
			"`planlint check plans/` analyses every plan in plans/old and none spills: " +
			"`.planlint.yaml:2:5: warning [PL001 unused-suppression] suppress entry 1 (spill in plans/old/**) matches no finding in the 3 files its paths cover, all analysed in this run`.",
		Fix:         "Delete the comment or the entry, or correct it (the rule name, its position, its paths or fingerprints).",
		FalseAlarms: "A suppression for a finding that appears only with other options (`--actual`, another database, `--schema`, `--include`) is unused in runs without them; keep those runs' options in CI.",
	},
}

func init() { register(UnusedSuppression) }
