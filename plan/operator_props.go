package plan

// Exchange is the Parallelism element of an exchange operator (Distribute,
// Repartition or Gather Streams).
type Exchange struct {
	// PartitioningType is Hash, RoundRobin, Broadcast, Range, Demand,
	// Replicate, CloneLocation, NoPartitioning, ... ("" for Gather Streams,
	// which has none).
	PartitioningType string
	// PartitionColumns are the columns whose values route rows to threads
	// (Hash and Range partitioning).
	PartitionColumns []ColumnRef
}

// MemoryFractions is RelOp/MemoryFractions: the share of the statement's
// memory grant the operator may use while it reads its input and while it
// produces output.
type MemoryFractions struct {
	Input, Output float64
}
