package capture

// CatalogSQL is the catalog batch a capture sends for the given tables
// (statistics included), for tools that check a server answers it.
func CatalogSQL(tables []TableName) string { return catalogSQL(tables, true) }
