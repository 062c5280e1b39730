// Package plan holds a typed model of SQL Server showplan XML documents and
// the decoder that builds it. It knows nothing of rules or output formats.
package plan

// Namespace is the XML namespace of every showplan element.
const Namespace = "http://schemas.microsoft.com/sqlserver/2004/07/showplan"

// Document is one showplan XML document (one .sqlplan file, one plan-cache
// row, one SHOWPLAN_XML result).
type Document struct {
	Version string // ShowPlanXML/@Version, e.g. "1.564"
	Build   string // ShowPlanXML/@Build, e.g. "16.0.4215.2"
	Batches []*Batch
}

// Batch is one BatchSequence/Batch element. Index is 1-based; StatementId
// values restart in every batch.
type Batch struct {
	Index      int
	Statements []*Statement // top-level statements of every Statements child, in document order
}

// Pos is a 1-based line and column (in bytes of the UTF-8 text; UTF-16
// input is transcoded first, which keeps line numbers) in the input.
type Pos struct {
	Line, Column int
}

// Statement is any statement element: StmtSimple, StmtCond, StmtCursor,
// StmtUseDb, StmtReceive, ExternalDistributedComputation, ...
type Statement struct {
	Kind  string // the element name, e.g. "StmtSimple"
	Batch int    // 1-based index of the enclosing batch
	// Ordinal is the statement's 1-based position among all statements of
	// the document, nested ones included, in document order. Unlike ID it is
	// unique: real plans can repeat a StatementId within one batch.
	Ordinal int
	Parent  *Statement
	// Pos is where the statement's start tag is in the input.
	Pos Pos

	ID                    int    // StatementId (0 when absent)
	CompID                int    // StatementCompId
	Type                  string // StatementType, e.g. "SELECT", "COND", "DECLARE CURSOR"
	Text                  string // StatementText
	ParameterizedText     string
	ParameterizationType  ParameterizationType
	OptmLevel             string // StatementOptmLevel: TRIVIAL or FULL
	OptmEarlyAbortReason  string // StatementOptmEarlyAbortReason
	SubtreeCost           float64
	EstRows               float64 // StatementEstRows
	QueryHash             string
	QueryPlanHash         string
	RetrievedFromCache    string // kept as text: "true", "false", "1", "0"
	CEModelVersion        int    // CardinalityEstimationModelVersion
	PlanGuideName         string
	PlanGuideDB           string
	TemplatePlanGuideName string
	TemplatePlanGuideDB   string
	SecurityPolicyApplied bool

	// PSPPredicates are the Dispatcher's parameter-sensitive predicates of
	// a PSP-optimized plan (SQL Server 2022+): the cardinality range this
	// variant is for.
	PSPPredicates []PSPPredicate

	// SetOptions are the StatementSetOptions; nil when the element is absent.
	SetOptions *SetOptions

	// QueryPlan is the statement's plan. For StmtCond it is the plan of the
	// Condition. Nil when the statement has no plan (DECLARE, SET, ...).
	QueryPlan *QueryPlan

	// Cursor is set for StmtCursor.
	Cursor *Cursor

	// Database is StmtUseDb/@Database.
	Database string

	// Children are statements nested in this one, in document order:
	// StmtCond Then and Else branches, StoredProc and UDF bodies.
	Children []*Statement
	// Branch names where each child came from: "then", "else", "proc", "udf"
	// ("edc" for a StmtSimple inside ExternalDistributedComputation).
	// ChildBranch[i] belongs to Children[i].
	ChildBranch []string
	// ProcName is StoredProc/@ProcName when the statement executes a module.
	ProcName string
}

// ParameterizationType is StatementParameterizationType.
type ParameterizationType int

// Values of StatementParameterizationType (also query_parameterization_type
// in Query Store). ParamUnknown means the attribute was absent.
const (
	ParamUnknown ParameterizationType = -1
	ParamNone    ParameterizationType = 0
	ParamUser    ParameterizationType = 1
	ParamSimple  ParameterizationType = 2
	ParamForced  ParameterizationType = 3
)

func (p ParameterizationType) String() string {
	switch p {
	case ParamNone:
		return "none"
	case ParamUser:
		return "user"
	case ParamSimple:
		return "simple"
	case ParamForced:
		return "forced"
	}
	return "unknown"
}

// SetOptions are the seven options in StatementSetOptions. A nil field means
// the attribute was absent.
type SetOptions struct {
	ANSINulls            *bool
	ANSIPadding          *bool
	ANSIWarnings         *bool
	ArithAbort           *bool
	ConcatNullYieldsNull *bool
	NumericRoundAbort    *bool
	QuotedIdentifier     *bool
}

// SetOption names one option with its value in a SetOptions.
type SetOption struct {
	Name  string // the T-SQL name, e.g. "ANSI_NULLS"
	Value *bool
}

// List returns the options in a fixed order with their T-SQL names.
func (s *SetOptions) List() []SetOption {
	if s == nil {
		return nil
	}
	return []SetOption{
		{"ANSI_NULLS", s.ANSINulls},
		{"ANSI_PADDING", s.ANSIPadding},
		{"ANSI_WARNINGS", s.ANSIWarnings},
		{"ARITHABORT", s.ArithAbort},
		{"CONCAT_NULL_YIELDS_NULL", s.ConcatNullYieldsNull},
		{"NUMERIC_ROUNDABORT", s.NumericRoundAbort},
		{"QUOTED_IDENTIFIER", s.QuotedIdentifier},
	}
}

// Cursor is StmtCursor/CursorPlan.
type Cursor struct {
	Name          string
	ActualType    string
	RequestedType string
	Concurrency   string
	ForwardOnly   bool
	Operations    []*CursorOperation
}

// CursorOperation is one CursorPlan/Operation with its own plan.
type CursorOperation struct {
	Type      string // OperationType: FetchQuery, PopulateQuery, RefreshQuery, ...
	QueryPlan *QueryPlan
}

// QueryPlan is a QueryPlan element.
type QueryPlan struct {
	DegreeOfParallelism   int
	EffectiveDOP          int // EffectiveDegreeOfParallelism
	MemoryGrantKB         float64
	CachedPlanSizeKB      float64
	CompileTimeMs         float64
	CompileCPUMs          float64
	CompileMemoryKB       float64
	NonParallelPlanReason string
	UsePlan               bool
	QueryVariantID        int
	// ContainsInlineScalarUDFs: scalar UDFs were inlined (SQL Server 2019+).
	ContainsInlineScalarUDFs bool
	// DispatcherPlanHandle names the dispatcher of a parameter-sensitive
	// plan variant (SQL Server 2022+).
	DispatcherPlanHandle string

	MemoryGrant      *MemoryGrantInfo
	Hardware         *HardwareProperties // OptimizerHardwareDependentProperties
	Warnings         *Warnings           // QueryPlan/Warnings (statement level)
	UnmatchedIndexes []ObjectRef
	MissingIndexes   []MissingIndexGroup
	Parameters       []Parameter
	ThreadStat       *ThreadStat
	QueryTime        *QueryTimeStats
	Waits            []Wait
	Statistics       []StatisticsInfo // OptimizerStatsUsage
	TraceFlags       []TraceFlag

	Root *RelOp
	// Nodes lists every RelOp of Root's tree in pre-order (parents before
	// children, children in document order).
	Nodes []*RelOp

	nodeIndex map[int]int // NodeId → first position in Nodes, set by the parser
}

// MemoryGrantInfo is QueryPlan/MemoryGrantInfo (KB and seconds as in XML).
type MemoryGrantInfo struct {
	SerialRequiredKB float64
	SerialDesiredKB  float64
	RequiredKB       float64
	DesiredKB        float64
	RequestedKB      float64
	GrantedKB        float64
	MaxUsedKB        float64
	GrantWaitTimeS   float64
	FeedbackAdjusted string // IsMemoryGrantFeedbackAdjusted
	// MaxQueryMemoryKB is the most one query may be granted (0 when absent).
	MaxQueryMemoryKB float64
	LastRequestedKB  float64 // LastRequestedMemory
}

// ThreadStat is QueryPlan/ThreadStat.
type ThreadStat struct {
	Branches     int
	UsedThreads  int
	Reservations []ThreadReservation
}

// QueryTimeStats is QueryPlan/QueryTimeStats (milliseconds).
type QueryTimeStats struct {
	CPUTimeMs     float64
	ElapsedTimeMs float64
	// UDF times are set when the attributes are present (HasUDF).
	UDFCPUTimeMs     float64
	UDFElapsedTimeMs float64
	HasUDF           bool
}

// Wait is a WaitStats/Wait or Warnings/Wait element.
type Wait struct {
	Type   string
	TimeMs float64
	Count  float64
}

// StatisticsInfo is OptimizerStatsUsage/StatisticsInfo.
type StatisticsInfo struct {
	Database          string
	Schema            string
	Table             string
	Statistics        string
	ModificationCount float64
	SamplingPercent   float64
	LastUpdate        string
}

// TraceFlag is TraceFlags/TraceFlag with the scope of its parent.
type TraceFlag struct {
	Value     int
	Scope     string
	IsCompile bool // from TraceFlags/@IsCompileTime
}

// Parameter is one ParameterList/ColumnReference. Local variables appear
// here too, without a compiled value.
type Parameter struct {
	Name          string // e.g. "@Status", "@0", "@p1"
	DataType      string // ParameterDataType
	CompiledValue string // T-SQL literal text, e.g. "(0)", "N'abc'"; "" when absent
	RuntimeValue  string // only in actual plans
	HasCompiled   bool
	HasRuntime    bool
}

// MissingIndexGroup is MissingIndexes/MissingIndexGroup.
type MissingIndexGroup struct {
	Impact  float64
	Indexes []MissingIndex
}

// MissingIndex is one suggested index: column names without brackets.
type MissingIndex struct {
	Database   string
	Schema     string
	Table      string
	Equality   []string
	Inequality []string
	Include    []string
}

// ObjectRef is an Object element. Names are stored without their square
// brackets ("dbo", not "[dbo]").
type ObjectRef struct {
	Server           string
	Database         string
	Schema           string
	Table            string
	Index            string
	Alias            string
	IndexKind        string // Heap, Clustered, NonClustered, ViewClustered, ...
	Storage          string // RowStore, ColumnStore, MemoryOptimized
	Filtered         bool
	TableReferenceID int
}

// ColumnRef is a ColumnReference element. A parameter or local variable is a
// ColumnRef whose Column starts with "@" and whose table parts are empty.
type ColumnRef struct {
	Database string
	Schema   string
	Table    string
	Alias    string
	Column   string
	Computed bool // ComputedColumn
}

// IsParameter reports whether the reference names a parameter or variable.
func (c ColumnRef) IsParameter() bool { return len(c.Column) > 0 && c.Column[0] == '@' }

// RelOp is one operator of the plan tree.
type RelOp struct {
	NodeID     int
	Pos        Pos // where the RelOp start tag is in the input
	PhysicalOp string
	LogicalOp  string

	EstimateRows               float64 // per execution
	EstimateRowsWithoutRowGoal *float64
	EstimatedRowsRead          *float64 // per execution
	EstimateRebinds            float64
	EstimateRewinds            float64
	EstimateIO                 float64
	EstimateCPU                float64
	AvgRowSize                 float64
	SubtreeCost                float64 // EstimatedTotalSubtreeCost
	TableCardinality           float64
	Parallel                   bool
	EstimatedExecutionMode     string // Row or Batch
	IsAdaptive                 bool

	OutputList []ColumnRef

	// Access is the object access of scans, seeks, lookups and writes
	// (IndexScan, TableScan, Update, SimpleUpdate, CreateIndex, ...).
	Access *Access
	// Sort is set for Sort and TopN Sort operators (Sort or TopSort element).
	Sort *SortInfo
	// Top is set for the Top operator.
	Top *TopInfo
	// Exchange is set for Parallelism operators.
	Exchange *Exchange
	// MemoryFractions is set for operators that hold part of the grant.
	MemoryFractions *MemoryFractions
	// OptimizedLoops is NestedLoops/@Optimized: the join sorts batches of
	// outer rows, in granted memory.
	OptimizedLoops bool
	// OuterReferences of a Nested Loops join.
	OuterReferences []ColumnRef
	// Spool is set for spool operators; Merge for Merge Join.
	Spool *SpoolInfo
	Merge *MergeInfo
	// DefinedValues of a Compute Scalar.
	DefinedValues []DefinedValue
	// StartupExpression is Filter/@StartupExpression (also Assert, Nested
	// Loops): the predicate is tested once per execution, before reading
	// the input, to skip it entirely.
	StartupExpression bool
	// Predicate is the operator's own predicate outside an access element:
	// Filter/Predicate, NestedLoops/Predicate, Hash ProbeResidual, ...
	Predicate *Scalar

	Warnings *Warnings
	// UDFs are the scalar user-defined functions the operator's expressions
	// call (UserDefinedFunction elements), in document order.
	UDFs []UDFCall
	// RunTime is nil in estimated plans.
	RunTime *RunTime
	// Time is the operator's own time on actual plans with timings
	// (see runtime.go); nil when it cannot be known.
	Time *OperatorTime

	Parent   *RelOp
	Children []*RelOp
}

// PSPPredicate is a Dispatcher/ParameterSensitivePredicate.
type PSPPredicate struct {
	Low, High float64 // LowBoundary, HighBoundary: the predicate's row range
	Predicate string  // the predicate's ScalarString, e.g. "[t].[c]=[@p]"
}

// UDFCall is a call of a scalar user-defined function.
type UDFCall struct {
	Name string // FunctionName, e.g. "[db].[dbo].[fn]"
	CLR  bool   // IsClrFunction
}

// Access is the access-path element of a RelOp together with its objects.
type Access struct {
	Element        string // IndexScan, TableScan, Update, SimpleUpdate, CreateIndex, ScalarInsert, ...
	Objects        []ObjectRef
	Lookup         bool
	Ordered        bool
	ScanDirection  string
	ForcedIndex    bool
	ForceSeek      bool
	ForceScan      bool
	NoExpandHint   bool
	Storage        string
	DMLRequestSort bool
	// SeekPredicates hold one entry per SeekPredicate/SeekPredicateNew.
	SeekPredicates []SeekPredicate
	// Predicate is the residual predicate evaluated by the access.
	Predicate *Scalar
	// SetPredicate is the assignment list of Update/SimpleUpdate.
	SetPredicate *Scalar
}

// Object returns the first object of the access (the table or index read
// or written), or a zero ObjectRef.
func (a *Access) Object() ObjectRef {
	if a == nil || len(a.Objects) == 0 {
		return ObjectRef{}
	}
	return a.Objects[0]
}

// SeekPredicate is one seek: a prefix and/or a start and end range.
type SeekPredicate struct {
	Keys []SeekKey
}

// SeekKey is a Prefix, StartRange, EndRange or IsNotNull part of a seek.
type SeekKey struct {
	Part     string // "Prefix", "StartRange", "EndRange", "IsNotNull"
	ScanType string // EQ, LT, LE, GT, GE, IS, IS NOT, ...
	Columns  []ColumnRef
	Values   []*Scalar // one per column (RangeExpressions)
}

// SortInfo is a Sort or TopSort element.
type SortInfo struct {
	Distinct bool
	TopRows  int // TopSort/@Rows; 0 for a plain Sort
	WithTies bool
	Columns  []OrderColumn
}

// OrderColumn is one OrderBy/OrderByColumn.
type OrderColumn struct {
	Column    ColumnRef
	Ascending bool
}

// TopInfo is the Top element.
type TopInfo struct {
	RowsText  string // TopExpression/ScalarOperator/@ScalarString
	IsPercent bool
	WithTies  bool
	RowCount  bool // ROWCOUNT top
}

// ScalarKind classifies a Scalar node.
type ScalarKind int

// Kinds of scalar expression nodes. Anything the model does not break down
// further is ScalarOther, with its text kept.
const (
	ScalarOther ScalarKind = iota
	ScalarCompare
	ScalarLogical
	ScalarIdentifier
	ScalarConst
	ScalarConvert
	ScalarIntrinsic
	ScalarArithmetic
	ScalarIf
	ScalarList // ScalarExpressionList, MultipleAssign, ...
)

// Scalar is a ScalarOperator expression tree, kept for predicates.
type Scalar struct {
	Text     string // ScalarString of the ScalarOperator (may be empty in old plans)
	Kind     ScalarKind
	Op       string     // CompareOp, Logical Operation, FunctionName, Arithmetic Operation, Convert DataType
	Column   *ColumnRef // ScalarIdentifier
	Value    string     // ScalarConst: ConstValue, e.g. "(0)", "NULL", "N'x'"
	Implicit bool       // ScalarConvert: Implicit="1"
	DataType string     // ScalarConvert: the target type as T-SQL, e.g. "nvarchar(20)"
	Args     []*Scalar
}

// Warnings is a WarningsType element, at statement or operator level.
type Warnings struct {
	NoJoinPredicate               bool
	SpatialGuess                  bool
	UnmatchedIndexes              bool
	FullUpdateForOnlineIndexBuild bool
	SpillOccurred                 bool
	SpillToTempDb                 []SpillToTempDb
	SortSpills                    []SpillDetails
	HashSpills                    []SpillDetails
	ExchangeSpills                []SpillDetails
	Converts                      []PlanAffectingConvert
	Waits                         []Wait
	NoStatistics                  []ColumnRef
	StaleStatistics               []ColumnRef
	MemoryGrant                   *MemoryGrantWarning
}

// SpillToTempDb is a Warnings/SpillToTempDb element.
type SpillToTempDb struct {
	Level              int
	SpilledThreadCount int
}

// SpillDetails is a SortSpillDetails, HashSpillDetails or
// ExchangeSpillDetails element (KB and pages as in XML).
type SpillDetails struct {
	GrantedMemoryKB float64
	UsedMemoryKB    float64
	WritesToTempDb  float64
	ReadsFromTempDb float64
}

// PlanAffectingConvert is a Warnings/PlanAffectingConvert element.
type PlanAffectingConvert struct {
	Issue      string // "Cardinality Estimate" or "Seek Plan"
	Expression string
}

// MemoryGrantWarning is a Warnings/MemoryGrantWarning element.
type MemoryGrantWarning struct {
	Kind        string
	RequestedKB float64
	GrantedKB   float64
	MaxUsedKB   float64
}

// RunTime sums RunTimeInformation/RunTimeCountersPerThread over threads.
type RunTime struct {
	Threads []ThreadCounters

	ActualRows       int64
	ActualExecutions int64
	ActualRowsRead   int64
	HasRowsRead      bool
	ActualRebinds    int64
	ActualRewinds    int64
	ActualEndOfScans int64
	LogicalReads     int64
	PhysicalReads    int64
	ReadAheads       int64
	// ElapsedMs is the maximum over worker threads (Thread > 0), or thread
	// 0's value in a serial zone; CPUMs is the sum. HasTiming reports
	// whether the plan carried timings at all.
	ElapsedMs         int64
	CPUMs             int64
	HasTiming         bool
	UsedMemoryGrantKB int64
	ExecutionMode     string
}

// ThreadCounters is one RunTimeCountersPerThread element.
type ThreadCounters struct {
	Thread           int
	ActualRows       int64
	ActualExecutions int64
	ActualRowsRead   int64
	ElapsedMs        int64
	CPUMs            int64
}
