package rules

// All returns every rule in code order. Codes are stable and never reused.
func All() []*Rule {
	return []*Rule{
		UnusedSuppression,
		UnmatchedIndexes,
		KeyLookup,
		ResidualSort,
		RowEstimateSkew,
		SetOptions,
		FilteredIndexHint,
		FilteredIndexParameterized,
		FilteredIndexMissingFilterColumn,
		FilteredIndexUnusedLiteral,
		QueueClaimNotAtomic,
		FilterDefinitionUnparsed,
		FilteredStatisticsStale,
	}
}
