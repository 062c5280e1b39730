// Package catalog holds the catalog facts the rules need beside a plan:
// tables, their indexes (keys, includes, filters), database settings and the
// server version. Facts come from a live server (package capture), from
// CREATE TABLE / CREATE INDEX scripts, or from the JSON that `explain --save`
// writes.
package catalog

// Catalog is the set of facts known about the objects a plan touches.
type Catalog struct {
	Server    *Server     `json:"server,omitempty"`
	Databases []*Database `json:"databases,omitempty"`
	Tables    []*Table    `json:"tables"`
	// Source says where the facts came from: "server", a script path, a
	// JSON path. Not serialised.
	Source string `json:"-"`
}

// Server is the server the facts were read from.
type Server struct {
	ProductVersion string `json:"product_version,omitempty"` // e.g. "16.0.4215.2"
	MajorVersion   int    `json:"major_version,omitempty"`
	Edition        string `json:"edition,omitempty"`
	EngineEdition  int    `json:"engine_edition,omitempty"`
	// CostThresholdForParallelism is the server's 'cost threshold for
	// parallelism' (sys.configurations); nil when not known.
	CostThresholdForParallelism *float64 `json:"cost_threshold_for_parallelism,omitempty"`
}

// Database holds the database settings the rules consult.
type Database struct {
	Name                   string `json:"name"`
	CompatibilityLevel     int    `json:"compatibility_level,omitempty"`
	ParameterizationForced bool   `json:"parameterization_forced"`
	ReadCommittedSnapshot  bool   `json:"read_committed_snapshot"`
	SnapshotIsolation      string `json:"snapshot_isolation,omitempty"` // ON, OFF, IN_TRANSITION_TO_ON, ...
}

// Table is one user table with its columns and indexes. Names carry no
// brackets.
type Table struct {
	Database string    `json:"database,omitempty"`
	Schema   string    `json:"schema"`
	Name     string    `json:"name"`
	Columns  []*Column `json:"columns,omitempty"`
	Indexes  []*Index  `json:"indexes,omitempty"`
}

// Column is one table column.
type Column struct {
	Name string `json:"name"`
	// Type is the declared type as written, e.g. "tinyint", "nvarchar(max)".
	Type     string `json:"type,omitempty"`
	Nullable bool   `json:"nullable"`
	// MaxLength is the byte length for variable-length types, -1 for (max)
	// and LOB types (text, ntext, image, xml, json), 0 when unknown.
	MaxLength int  `json:"max_length,omitempty"`
	Computed  bool `json:"computed,omitempty"`
}

// Index is one index of a table. A heap has no Index entry.
type Index struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // CLUSTERED, NONCLUSTERED, CLUSTERED COLUMNSTORE, ...
	Unique     bool   `json:"unique"`
	PrimaryKey bool   `json:"primary_key,omitempty"`
	Disabled   bool   `json:"disabled,omitempty"`
	// Keys in key order; Includes in any order. Clustered key columns that
	// SQL Server adds to every nonclustered index implicitly are not listed.
	Keys     []IndexColumn `json:"keys"`
	Includes []string      `json:"includes,omitempty"`
	// FilterDefinition is the filter as SQL Server stores it in
	// sys.indexes.filter_definition, e.g. "([Status]=(0))"; empty when the
	// index is not filtered.
	FilterDefinition string `json:"filter_definition,omitempty"`
	// Filter is FilterDefinition parsed; nil when the index has no filter or
	// the filter could not be parsed (then FilterError says why).
	Filter      *Filter `json:"-"`
	FilterError string  `json:"-"`
	// Size is how big the index is now; nil when unknown (scripts).
	Size *IndexSize `json:"size,omitempty"`
	// Statistics describe the freshness of the index's statistics; nil when
	// unknown (scripts, servers before SQL Server 2012 SP1, or a login that
	// may not read them).
	Statistics *StatisticsFacts `json:"statistics,omitempty"`
}

// IndexSize is an index's current size (sys.partitions and
// sys.allocation_units, summed over partitions).
type IndexSize struct {
	Rows      int64 `json:"rows"`
	UsedPages int64 `json:"used_pages"`
}

// StatisticsFacts are sys.dm_db_stats_properties of an index's statistics.
type StatisticsFacts struct {
	// LastUpdated is when the statistics were built, as the server's local
	// time in ISO 8601 (like StatisticsInfo/@LastUpdate in plans).
	LastUpdated string `json:"last_updated,omitempty"`
	// Rows is how many rows the index held when they were built.
	Rows        int64 `json:"rows"`
	RowsSampled int64 `json:"rows_sampled"`
	// ModificationCounter counts modifications of the leading column since.
	ModificationCounter int64 `json:"modification_counter"`
}

// IndexColumn is a key column of an index.
type IndexColumn struct {
	Name       string `json:"name"`
	Descending bool   `json:"descending,omitempty"`
}

// Filter is a parsed filter predicate: the AND of its conjuncts.
type Filter struct {
	Conjuncts []Conjunct
}

// Conjunct is one comparison of a filter: Column Op Values.
type Conjunct struct {
	Column string
	// Op is one of "=", "<>", "<", "<=", ">", ">=", "IS NULL",
	// "IS NOT NULL", "IN".
	Op string
	// Values are the literal operands as written ("0", "N'x'",
	// "'2024-01-01'"), without enclosing parentheses. One value for the
	// comparison operators, several for IN, none for IS [NOT] NULL.
	Values []string
}
