package plan

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// relOp reads a RelOp and everything below it. The operator is appended to
// the current plan's Nodes and to parent's Children as soon as its start tag
// is seen, which yields pre-order in document order.
func (p *parser) relOp(se element, parent *RelOp) (*RelOp, error) {
	op := &RelOp{Parent: parent, Pos: p.startPos()}
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "NodeId":
			op.NodeID = v.int()
		case "PhysicalOp":
			op.PhysicalOp = p.str(v)
		case "LogicalOp":
			op.LogicalOp = p.str(v)
		case "EstimateRows":
			op.EstimateRows = v.float()
		case "EstimateRowsWithoutRowGoal":
			op.EstimateRowsWithoutRowGoal = v.floatPtr()
		case "EstimatedRowsRead":
			op.EstimatedRowsRead = v.floatPtr()
		case "EstimateRebinds":
			op.EstimateRebinds = v.float()
		case "EstimateRewinds":
			op.EstimateRewinds = v.float()
		case "EstimateIO":
			op.EstimateIO = v.float()
		case "EstimateCPU":
			op.EstimateCPU = v.float()
		case "AvgRowSize":
			op.AvgRowSize = v.float()
		case "EstimatedTotalSubtreeCost":
			op.SubtreeCost = v.float()
		case "TableCardinality":
			op.TableCardinality = v.float()
		case "Parallel":
			op.Parallel = v.bool()
		case "EstimatedExecutionMode":
			op.EstimatedExecutionMode = p.str(v)
		case "IsAdaptive":
			op.IsAdaptive = v.bool()
		}
	}
	if p.plan != nil {
		p.plan.Nodes = append(p.plan.Nodes, op)
	}
	if parent != nil {
		parent.Children = append(parent.Children, op)
	}
	saved := p.owner
	p.owner = op
	defer func() { p.owner = saved }()

	err := p.children(func(c element) error {
		var err error
		switch c.local {
		case "OutputList":
			op.OutputList, err = p.columnList(op.OutputList)
		case "Warnings":
			op.Warnings, err = p.warnings(c)
		case "RunTimeInformation":
			op.RunTime, err = p.runTime()
		case "RelOp": // not in the schema here, but keep it in the tree
			_, err = p.relOp(c, op)
		case "MemoryFractions":
			op.MemoryFractions = &MemoryFractions{Input: attr(c, "Input").float(), Output: attr(c, "Output").float()}
			err = p.skip()
		case "RunTimePartitionSummary", "InternalInfo":
			err = p.skip()
		default:
			err = p.operator(op, c)
		}
		return err
	})
	return op, err
}

// operator reads the operator-specific element of a RelOp (IndexScan,
// NestedLoops, Sort, ...). Every RelOp below it that is not below another
// RelOp is a child of op.
func (p *parser) operator(op *RelOp, se element) error {
	name := se.local
	acc := Access{Element: name}
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "Lookup":
			acc.Lookup = v.bool()
		case "Ordered":
			acc.Ordered = v.bool()
		case "ScanDirection":
			acc.ScanDirection = p.str(v)
		case "ForcedIndex":
			acc.ForcedIndex = v.bool()
		case "ForceSeek":
			acc.ForceSeek = v.bool()
		case "ForceScan":
			acc.ForceScan = v.bool()
		case "NoExpandHint":
			acc.NoExpandHint = v.bool()
		case "Storage":
			acc.Storage = p.str(v)
		case "DMLRequestSort":
			acc.DMLRequestSort = v.bool()
		}
	}
	switch name {
	case "Sort":
		op.Sort = &SortInfo{Distinct: attr(se, "Distinct").bool()}
	case "TopSort":
		op.Sort = &SortInfo{
			Distinct: attr(se, "Distinct").bool(),
			TopRows:  attr(se, "Rows").int(),
			WithTies: attr(se, "WithTies").bool(),
		}
	case "Spool":
		op.Spool = &SpoolInfo{Stack: attr(se, "Stack").bool(), PrimaryNodeID: attr(se, "PrimaryNodeId").int()}
	case "Merge":
		op.Merge = &MergeInfo{ManyToMany: attr(se, "ManyToMany").bool()}
	}
	if attr(se, "StartupExpression").bool() {
		op.StartupExpression = true
	}
	switch name {
	case "NestedLoops":
		op.OptimizedLoops = attr(se, "Optimized").bool()
	case "Parallelism":
		op.Exchange = &Exchange{PartitioningType: p.str(attr(se, "PartitioningType"))}
	case "Top":
		op.Top = &TopInfo{
			IsPercent: attr(se, "IsPercent").bool(),
			WithTies:  attr(se, "WithTies").bool(),
			RowCount:  attr(se, "RowCount").bool(),
		}
	}
	// Predicate belongs to the access when the element reads an object;
	// otherwise it is the operator's own, preferred over join residuals.
	var pred, residual, buildResidual *Scalar
	err := p.children(func(c element) error {
		var err error
		switch c.local {
		case "RelOp":
			_, err = p.relOp(c, op)
			return err
		case "Object":
			acc.Objects = append(acc.Objects, p.objectRef(c))
		case "SeekPredicates":
			return p.seekPredicates(&acc.SeekPredicates)
		case "SeekPredicate":
			var keys []SeekKey
			keys, err = p.seekKeys(nil)
			acc.SeekPredicates = append(acc.SeekPredicates, SeekPredicate{Keys: keys})
			return err
		case "SeekPredicateNew":
			var sp SeekPredicate
			sp, err = p.seekPredicateNew()
			acc.SeekPredicates = append(acc.SeekPredicates, sp)
			return err
		case "Predicate":
			return p.firstScalar(&pred)
		case "ProbeResidual", "Residual":
			return p.firstScalar(&residual)
		case "BuildResidual":
			return p.firstScalar(&buildResidual)
		case "SetPredicate":
			return p.firstScalar(&acc.SetPredicate)
		case "OrderBy":
			if op.Sort != nil {
				op.Sort.Columns, err = p.orderBy(op.Sort.Columns)
				return err
			}
		case "TopExpression":
			if op.Top != nil {
				var x *Scalar
				err = p.firstScalar(&x)
				op.Top.RowsText = x.String()
				return err
			}
		case "OuterReferences":
			op.OuterReferences, err = p.columnList(op.OuterReferences)
			return err
		case "DefinedValues":
			if name == "ComputeScalar" {
				op.DefinedValues, err = p.definedValues(op.DefinedValues)
				return err
			}
		case "InnerSideJoinColumns", "OuterSideJoinColumns":
			if op.Merge != nil {
				if c.local == "InnerSideJoinColumns" {
					op.Merge.InnerColumns, err = p.columnList(op.Merge.InnerColumns)
				} else {
					op.Merge.OuterColumns, err = p.columnList(op.Merge.OuterColumns)
				}
				return err
			}
		case "PartitionColumns":
			if op.Exchange != nil {
				op.Exchange.PartitionColumns, err = p.columnList(op.Exchange.PartitionColumns)
				return err
			}
		}
		return p.skip()
	})
	if op.Spool != nil {
		op.Spool.SeekPredicates = acc.SeekPredicates
	}
	if len(acc.Objects) > 0 {
		acc.Predicate = pred
		op.Access = &acc
		pred = nil
	}
	for _, x := range []*Scalar{pred, residual, buildResidual} {
		if op.Predicate == nil {
			op.Predicate = x
		}
	}
	return err
}

// firstScalar reads an expression element (Predicate, SetPredicate, ...)
// and stores its first ScalarOperator in *dst unless *dst is already set.
func (p *parser) firstScalar(dst **Scalar) error {
	xs, err := p.scalars(nil)
	if len(xs) > 0 && *dst == nil {
		*dst = xs[0]
	}
	return err
}

func (p *parser) orderBy(dst []OrderColumn) ([]OrderColumn, error) {
	err := p.children(func(c element) error {
		if c.local != "OrderByColumn" {
			return p.skip()
		}
		oc := OrderColumn{Ascending: attr(c, "Ascending").bool()}
		err := p.children(func(c element) error {
			if c.local == "ColumnReference" {
				oc.Column = p.columnRef(c)
			}
			return p.skip()
		})
		dst = append(dst, oc)
		return err
	})
	return dst, err
}

// seekPredicates reads a SeekPredicates element in any of its forms:
// SeekPredicate (old), SeekPredicateNew, SeekPredicatePart.
func (p *parser) seekPredicates(dst *[]SeekPredicate) error {
	return p.children(func(c element) error {
		switch c.local {
		case "SeekPredicate":
			keys, err := p.seekKeys(nil)
			*dst = append(*dst, SeekPredicate{Keys: keys})
			return err
		case "SeekPredicateNew":
			sp, err := p.seekPredicateNew()
			*dst = append(*dst, sp)
			return err
		case "SeekPredicatePart":
			return p.seekPredicates(dst)
		}
		return p.skip()
	})
}

// seekPredicateNew reads a SeekPredicateNew: the keys of all its SeekKeys
// children form one seek.
func (p *parser) seekPredicateNew() (SeekPredicate, error) {
	var sp SeekPredicate
	err := p.children(func(c element) error {
		if c.local != "SeekKeys" {
			return p.skip()
		}
		var err error
		sp.Keys, err = p.seekKeys(sp.Keys)
		return err
	})
	return sp, err
}

// seekKeys reads the Prefix, StartRange, EndRange and IsNotNull children of
// a SeekPredicate or SeekKeys element.
func (p *parser) seekKeys(dst []SeekKey) ([]SeekKey, error) {
	err := p.children(func(c element) error {
		part := c.local
		switch part {
		case "Prefix", "StartRange", "EndRange":
			k := SeekKey{Part: part, ScanType: p.str(attr(c, "ScanType"))}
			err := p.children(func(c element) error {
				var err error
				switch c.local {
				case "RangeColumns":
					k.Columns, err = p.columnList(k.Columns)
				case "RangeExpressions":
					k.Values, err = p.scalars(k.Values)
				default:
					err = p.skip()
				}
				return err
			})
			dst = append(dst, k)
			return err
		case "IsNotNull":
			k := SeekKey{Part: part}
			var err error
			k.Columns, err = p.columnList(nil)
			dst = append(dst, k)
			return err
		}
		return p.skip()
	})
	return dst, err
}

// scalars reads the element just pushed and appends the outermost
// ScalarOperator elements found anywhere below it, in document order.
func (p *parser) scalars(dst []*Scalar) ([]*Scalar, error) {
	base := len(p.stack)
	for len(p.stack) >= base {
		se, ok, err := p.child()
		if err != nil {
			return dst, err
		}
		if !ok {
			continue
		}
		switch se.local {
		case "ScalarOperator":
			s, err := p.scalar(se)
			if err != nil {
				return dst, err
			}
			dst = append(dst, s)
		case "RelOp":
			if p.owner != nil { // a subquery's operators belong to the owning RelOp
				if _, err := p.relOp(se, p.owner); err != nil {
					return dst, err
				}
			}
		}
	}
	return dst, nil
}

// scalar reads a ScalarOperator: its ScalarString and the one element that
// says what kind of expression it is.
func (p *parser) scalar(se element) (*Scalar, error) {
	s := &Scalar{Text: p.str(attr(se, "ScalarString"))}
	err := p.children(func(c element) error {
		var err error
		switch c.local {
		case "Compare":
			s.Kind, s.Op = ScalarCompare, p.str(attr(c, "CompareOp"))
		case "Logical":
			s.Kind, s.Op = ScalarLogical, p.str(attr(c, "Operation"))
		case "Arithmetic":
			s.Kind, s.Op = ScalarArithmetic, p.str(attr(c, "Operation"))
		case "Intrinsic":
			s.Kind, s.Op = ScalarIntrinsic, p.str(attr(c, "FunctionName"))
		case "Convert":
			s.Kind, s.Op, s.Implicit = ScalarConvert, p.str(attr(c, "DataType")), attr(c, "Implicit").bool()
			s.DataType = p.convertType(c)
		case "IF":
			s.Kind = ScalarIf
		case "MultipleAssign":
			s.Kind = ScalarList
		case "Identifier":
			s.Kind = ScalarIdentifier
			return p.children(func(c element) error {
				if c.local == "ColumnReference" && s.Column == nil {
					col := p.columnRef(c)
					s.Column = &col
				}
				return p.skip()
			})
		case "Const":
			s.Kind, s.Value = ScalarConst, p.str(attr(c, "ConstValue"))
			return p.skip()
		case "InternalInfo":
			return p.skip()
		case "UserDefinedFunction":
			s.Kind, s.Op = ScalarOther, c.local
			if p.owner != nil {
				p.owner.UDFs = append(p.owner.UDFs, p.udfCall(c))
			}
		default:
			s.Kind, s.Op = ScalarOther, c.local
		}
		s.Args, err = p.scalars(s.Args)
		return err
	})
	return s, err
}

// udfCall reads a UserDefinedFunction element's attributes.
func (p *parser) udfCall(se element) UDFCall {
	return UDFCall{Name: p.str(attr(se, "FunctionName")), CLR: attr(se, "IsClrFunction").bool()}
}

// runTime sums the RunTimeCountersPerThread elements of a
// RunTimeInformation over all threads.
func (p *parser) runTime() (*RunTime, error) {
	rt := &RunTime{}
	var workerElapsed, serialElapsed int64
	var workerTimed, serialTimed, activeMode bool
	err := p.children(func(c element) error {
		if c.local != "RunTimeCountersPerThread" {
			return p.skip()
		}
		var t ThreadCounters
		var mode string
		hasElapsed := false
		for _, a := range c.attrs {
			v := a.value
			switch string(a.local) {
			case "Thread":
				t.Thread = v.int()
			case "ActualRows":
				t.ActualRows = v.int64()
			case "ActualExecutions":
				t.ActualExecutions = v.int64()
			case "ActualRowsRead":
				t.ActualRowsRead = v.int64()
				rt.HasRowsRead = true
			case "ActualRebinds":
				rt.ActualRebinds = addCount(rt.ActualRebinds, v.int64())
			case "ActualRewinds":
				rt.ActualRewinds = addCount(rt.ActualRewinds, v.int64())
			case "ActualEndOfScans":
				rt.ActualEndOfScans = addCount(rt.ActualEndOfScans, v.int64())
			case "ActualLogicalReads":
				rt.LogicalReads = addCount(rt.LogicalReads, v.int64())
			case "ActualPhysicalReads":
				rt.PhysicalReads = addCount(rt.PhysicalReads, v.int64())
			case "ActualReadAheads":
				rt.ReadAheads = addCount(rt.ReadAheads, v.int64())
			case "UsedMemoryGrant":
				rt.UsedMemoryGrantKB = addCount(rt.UsedMemoryGrantKB, v.int64())
			case "ActualElapsedms":
				t.ElapsedMs = v.int64()
				hasElapsed = true
				rt.HasTiming = true
			case "ActualCPUms":
				t.CPUMs = v.int64()
				rt.HasTiming = true
			case "ActualExecutionMode":
				mode = p.str(v)
			}
		}
		// The mode of a thread that ran wins over an idle Thread 0's.
		if mode != "" && (rt.ExecutionMode == "" || t.ActualExecutions > 0 && !activeMode) {
			rt.ExecutionMode = mode
			activeMode = t.ActualExecutions > 0
		}
		rt.ActualRows = addCount(rt.ActualRows, t.ActualRows)
		rt.ActualExecutions = addCount(rt.ActualExecutions, t.ActualExecutions)
		rt.ActualRowsRead = addCount(rt.ActualRowsRead, t.ActualRowsRead)
		rt.CPUMs = addCount(rt.CPUMs, t.CPUMs)
		if hasElapsed {
			if t.Thread > 0 {
				workerElapsed, workerTimed = max(workerElapsed, t.ElapsedMs), true
			} else {
				serialElapsed, serialTimed = max(serialElapsed, t.ElapsedMs), true
			}
		}
		rt.Threads = append(rt.Threads, t)
		return p.skip()
	})
	switch {
	case workerTimed:
		rt.ElapsedMs = workerElapsed
	case serialTimed:
		rt.ElapsedMs = serialElapsed
	}
	return rt, err
}

// attr returns the value of the attribute with the given local name, or
// an empty value.
func attr(se element, name string) value {
	for _, a := range se.attrs {
		if string(a.local) == name {
			return a.value
		}
	}
	return nil
}

// value is an attribute value as the scanner decoded it; it aliases the
// scanner's buffers, so the model keeps only numbers or copies (parser.str).
type value []byte

func (v value) int() int           { return parseInt(string(v)) }
func (v value) intOK() (int, bool) { return parseIntOK(string(v)) }
func (v value) int64() int64       { return parseInt64(string(v)) }
func (v value) float() float64     { return parseFloat(string(v)) }
func (v value) floatPtr() *float64 { return floatPtr(string(v)) }
func (v value) bool() bool         { return parseBool(string(v)) }
func (v value) boolPtr() *bool     { return boolPtr(string(v)) }

// parseBool accepts the xsd:boolean spellings "1", "0", "true" and "false";
// anything else is false.
func parseBool(s string) bool {
	b := boolPtr(s)
	return b != nil && *b
}

// boolPtr is the xsd:boolean value of s, or nil when s is not one.
func boolPtr(s string) *bool {
	var v bool
	switch strings.TrimSpace(s) {
	case "1", "true", "True", "TRUE":
		v = true
	case "0", "false", "False", "FALSE":
		v = false
	default:
		return nil
	}
	return &v
}

// MaxMagnitude bounds every decimal number the parser keeps (estimates,
// costs, sizes): larger finite values are read as ±MaxMagnitude. Real
// optimizer estimates do reach 1e44 (corpus plan HJMchor2), so the bound
// only keeps what rules compute from them (sums, products of a few)
// finite, so that JSON and SARIF can encode it.
const MaxMagnitude = 1e100

// parseFloat returns the value of s, or 0 when it is not a number.
func parseFloat(s string) float64 {
	if v := floatPtr(s); v != nil {
		return *v
	}
	return 0
}

// floatPtr is the value of s saturated at ±MaxMagnitude, or nil when s is
// not a finite double.
func floatPtr(s string) *float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil
	}
	v = max(-MaxMagnitude, min(v, MaxMagnitude))
	return &v
}

func parseInt(s string) int {
	n, _ := parseIntOK(s)
	return n
}

func parseIntOK(s string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	return n, err == nil
}

// parseInt64 is the integer value of s saturated at ±maxCount, or 0
// when s is not an integer.
func parseInt64(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0
	}
	return max(-maxCount, min(n, maxCount))
}

// maxCount bounds the integer counters (actual rows, executions, reads,
// times): no real execution comes near it, and a sum over threads of
// saturated counters still fits an int64.
const maxCount = int64(1e15)

// addCount adds two saturated counts, saturating the sum.
func addCount(a, b int64) int64 {
	return max(-maxCount, min(a+b, maxCount))
}

// unbracket removes one level of SQL Server [quoting] and unescapes "]]".
func unbracket(s string) string {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return s
	}
	s = s[1 : len(s)-1]
	if strings.Contains(s, "]]") {
		s = strings.ReplaceAll(s, "]]", "]")
	}
	return s
}

// definedValues reads a Compute Scalar's DefinedValues: each column with
// the expression that computes it.
func (p *parser) definedValues(dst []DefinedValue) ([]DefinedValue, error) {
	err := p.children(func(dv element) error {
		if dv.local != "DefinedValue" {
			return p.skip()
		}
		var d DefinedValue
		err := p.children(func(c element) error {
			switch c.local {
			case "ColumnReference":
				d.Columns = append(d.Columns, p.columnRef(c))
			case "ScalarOperator":
				s, err := p.scalar(c)
				if d.Value == nil {
					d.Value = s
				}
				return err
			}
			return p.skip()
		})
		dst = append(dst, d)
		return err
	})
	return dst, err
}
