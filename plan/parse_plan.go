package plan

import (
	"encoding/xml"
)

// This file maps showplan elements onto the model. Every method is called
// with its element already pushed by child and reads through its end tag.
// Unknown elements are skipped; unknown attributes are ignored.

func (p *parser) readRoot(root xml.StartElement) {
	for _, a := range root.Attr {
		switch a.Name.Local {
		case "Version":
			p.header.Version = a.Value
		case "Build":
			p.header.Build = a.Value
		}
	}
}

func (p *parser) batchSequence() error {
	return p.children(func(se xml.StartElement) error {
		if se.Name.Local != "Batch" {
			return p.skip()
		}
		p.header.Batches++
		p.batch = p.header.Batches
		return p.children(func(se xml.StartElement) error {
			if se.Name.Local != "Statements" {
				return p.skip()
			}
			return p.statements(nil, "")
		})
	})
}

// children calls fn for each child element of the element just pushed; fn
// must read the child through its end tag.
func (p *parser) children(fn func(xml.StartElement) error) error {
	for {
		se, ok, err := p.child()
		if err != nil || !ok {
			return err
		}
		if err := fn(se); err != nil {
			return err
		}
	}
}

// statements reads a Statements element. Top-level statements (parent nil)
// go to the Stream callback; nested ones become parent's Children.
func (p *parser) statements(parent *Statement, branch string) error {
	return p.children(func(se xml.StartElement) error {
		s, err := p.statement(se, parent)
		if err != nil {
			return err
		}
		if parent != nil {
			parent.Children = append(parent.Children, s)
			parent.ChildBranch = append(parent.ChildBranch, branch)
			return nil
		}
		if p.emit == nil {
			return nil
		}
		return p.emit(s)
	})
}

func (p *parser) statement(se xml.StartElement, parent *Statement) (*Statement, error) {
	s := &Statement{Kind: se.Name.Local, Batch: p.batch, Parent: parent, ParameterizationType: ParamUnknown}
	for _, a := range se.Attr {
		v := a.Value
		switch a.Name.Local {
		case "StatementId":
			s.ID = parseInt(v)
		case "StatementCompId":
			s.CompID = parseInt(v)
		case "StatementType":
			s.Type = v
		case "StatementText":
			s.Text = v
		case "ParameterizedText":
			s.ParameterizedText = v
		case "StatementParameterizationType":
			if n, ok := parseIntOK(v); ok {
				s.ParameterizationType = ParameterizationType(n)
			}
		case "StatementOptmLevel":
			s.OptmLevel = v
		case "StatementOptmEarlyAbortReason":
			s.OptmEarlyAbortReason = v
		case "StatementSubTreeCost":
			s.SubtreeCost = parseFloat(v)
		case "StatementEstRows":
			s.EstRows = parseFloat(v)
		case "QueryHash":
			s.QueryHash = v
		case "QueryPlanHash":
			s.QueryPlanHash = v
		case "RetrievedFromCache":
			s.RetrievedFromCache = v
		case "CardinalityEstimationModelVersion":
			s.CEModelVersion = parseInt(v)
		case "PlanGuideName":
			s.PlanGuideName = v
		case "PlanGuideDB":
			s.PlanGuideDB = v
		case "TemplatePlanGuideName":
			s.TemplatePlanGuideName = v
		case "TemplatePlanGuideDB":
			s.TemplatePlanGuideDB = v
		case "SecurityPolicyApplied":
			s.SecurityPolicyApplied = parseBool(v)
		case "Database":
			if s.Kind == "StmtUseDb" {
				s.Database = v
			}
		}
	}
	err := p.children(func(c xml.StartElement) error {
		switch c.Name.Local {
		case "StatementSetOptions":
			s.SetOptions = setOptions(c)
			return p.skip()
		case "QueryPlan":
			return p.statementPlan(c, &s.QueryPlan)
		case "Condition":
			return p.children(func(c xml.StartElement) error {
				switch c.Name.Local {
				case "QueryPlan":
					return p.statementPlan(c, &s.QueryPlan)
				case "UDF":
					return p.body(s, "udf")
				}
				return p.skip()
			})
		case "Then":
			return p.body(s, "then")
		case "Else":
			return p.body(s, "else")
		case "StoredProc":
			s.ProcName = attr(c, "ProcName")
			return p.body(s, "proc")
		case "UDF":
			return p.body(s, "udf")
		case "CursorPlan":
			return p.cursorPlan(c, s)
		case "StmtSimple":
			if s.Kind == "ExternalDistributedComputation" {
				child, err := p.statement(c, s)
				if err != nil {
					return err
				}
				s.Children = append(s.Children, child)
				s.ChildBranch = append(s.ChildBranch, "edc")
				return nil
			}
		}
		return p.skip()
	})
	return s, err
}

// statementPlan reads a QueryPlan into *dst unless the statement has one.
func (p *parser) statementPlan(se xml.StartElement, dst **QueryPlan) error {
	qp, err := p.queryPlan(se)
	if err == nil && *dst == nil {
		*dst = qp
	}
	return err
}

// body reads an element holding a Statements block (Then, Else, StoredProc,
// UDF) into s.Children under the given branch name.
func (p *parser) body(s *Statement, branch string) error {
	return p.children(func(c xml.StartElement) error {
		if c.Name.Local == "Statements" {
			return p.statements(s, branch)
		}
		return p.skip()
	})
}

func setOptions(se xml.StartElement) *SetOptions {
	o := &SetOptions{}
	for _, a := range se.Attr {
		b := boolPtr(a.Value)
		switch a.Name.Local {
		case "ANSI_NULLS":
			o.ANSINulls = b
		case "ANSI_PADDING":
			o.ANSIPadding = b
		case "ANSI_WARNINGS":
			o.ANSIWarnings = b
		case "ARITHABORT":
			o.ArithAbort = b
		case "CONCAT_NULL_YIELDS_NULL":
			o.ConcatNullYieldsNull = b
		case "NUMERIC_ROUNDABORT":
			o.NumericRoundAbort = b
		case "QUOTED_IDENTIFIER":
			o.QuotedIdentifier = b
		}
	}
	return o
}

func (p *parser) cursorPlan(se xml.StartElement, s *Statement) error {
	c := &Cursor{}
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "CursorName":
			c.Name = a.Value
		case "CursorActualType":
			c.ActualType = a.Value
		case "CursorRequestedType":
			c.RequestedType = a.Value
		case "CursorConcurrency":
			c.Concurrency = a.Value
		case "ForwardOnly":
			c.ForwardOnly = parseBool(a.Value)
		}
	}
	s.Cursor = c
	return p.children(func(op xml.StartElement) error {
		if op.Name.Local != "Operation" {
			return p.skip()
		}
		o := &CursorOperation{Type: attr(op, "OperationType")}
		c.Operations = append(c.Operations, o)
		return p.children(func(e xml.StartElement) error {
			switch e.Name.Local {
			case "QueryPlan":
				return p.statementPlan(e, &o.QueryPlan)
			case "UDF":
				return p.body(s, "udf")
			}
			return p.skip()
		})
	})
}

func (p *parser) queryPlan(se xml.StartElement) (*QueryPlan, error) {
	qp := &QueryPlan{}
	for _, a := range se.Attr {
		v := a.Value
		switch a.Name.Local {
		case "DegreeOfParallelism":
			qp.DegreeOfParallelism = parseInt(v)
		case "EffectiveDegreeOfParallelism":
			qp.EffectiveDOP = parseInt(v)
		case "MemoryGrant":
			qp.MemoryGrantKB = parseFloat(v)
		case "CachedPlanSize":
			qp.CachedPlanSizeKB = parseFloat(v)
		case "CompileTime":
			qp.CompileTimeMs = parseFloat(v)
		case "CompileCPU":
			qp.CompileCPUMs = parseFloat(v)
		case "CompileMemory":
			qp.CompileMemoryKB = parseFloat(v)
		case "NonParallelPlanReason":
			qp.NonParallelPlanReason = v
		case "UsePlan":
			qp.UsePlan = parseBool(v)
		case "QueryVariantID":
			qp.QueryVariantID = parseInt(v)
		}
	}
	savedPlan, savedOwner := p.plan, p.owner
	p.plan, p.owner = qp, nil
	defer func() { p.plan, p.owner = savedPlan, savedOwner }()

	err := p.children(func(c xml.StartElement) error {
		var err error
		switch c.Name.Local {
		case "RelOp":
			if qp.Root != nil {
				break // the schema allows one; further ones are skipped
			}
			qp.Root, err = p.relOp(c, nil)
			return err
		case "ThreadStat":
			qp.ThreadStat = &ThreadStat{Branches: parseInt(attr(c, "Branches")), UsedThreads: parseInt(attr(c, "UsedThreads"))}
		case "MissingIndexes":
			qp.MissingIndexes, err = p.missingIndexes()
			return err
		case "UnmatchedIndexes":
			return p.children(func(c xml.StartElement) error {
				if c.Name.Local != "Parameterization" {
					return p.skip()
				}
				return p.children(func(c xml.StartElement) error {
					if c.Name.Local == "Object" {
						qp.UnmatchedIndexes = append(qp.UnmatchedIndexes, objectRef(c))
					}
					return p.skip()
				})
			})
		case "Warnings":
			qp.Warnings, err = p.warnings(c)
			return err
		case "MemoryGrantInfo":
			qp.MemoryGrant = memoryGrantInfo(c)
		case "OptimizerStatsUsage":
			return p.children(func(c xml.StartElement) error {
				if c.Name.Local == "StatisticsInfo" {
					qp.Statistics = append(qp.Statistics, statisticsInfo(c))
				}
				return p.skip()
			})
		case "TraceFlags":
			compile := parseBool(attr(c, "IsCompileTime"))
			return p.children(func(c xml.StartElement) error {
				if c.Name.Local == "TraceFlag" {
					qp.TraceFlags = append(qp.TraceFlags, TraceFlag{
						Value: parseInt(attr(c, "Value")), Scope: attr(c, "Scope"), IsCompile: compile})
				}
				return p.skip()
			})
		case "WaitStats":
			return p.children(func(c xml.StartElement) error {
				if c.Name.Local == "Wait" {
					qp.Waits = append(qp.Waits, wait(c))
				}
				return p.skip()
			})
		case "QueryTimeStats":
			qp.QueryTime = &QueryTimeStats{CPUTimeMs: parseFloat(attr(c, "CpuTime")), ElapsedTimeMs: parseFloat(attr(c, "ElapsedTime"))}
		case "ParameterList":
			return p.children(func(c xml.StartElement) error {
				if c.Name.Local == "ColumnReference" {
					qp.Parameters = append(qp.Parameters, parameter(c))
				}
				return p.skip()
			})
		}
		return p.skip()
	})
	return qp, err
}

func memoryGrantInfo(se xml.StartElement) *MemoryGrantInfo {
	m := &MemoryGrantInfo{}
	for _, a := range se.Attr {
		v := a.Value
		switch a.Name.Local {
		case "SerialRequiredMemory":
			m.SerialRequiredKB = parseFloat(v)
		case "SerialDesiredMemory":
			m.SerialDesiredKB = parseFloat(v)
		case "RequiredMemory":
			m.RequiredKB = parseFloat(v)
		case "DesiredMemory":
			m.DesiredKB = parseFloat(v)
		case "RequestedMemory":
			m.RequestedKB = parseFloat(v)
		case "GrantedMemory":
			m.GrantedKB = parseFloat(v)
		case "MaxUsedMemory":
			m.MaxUsedKB = parseFloat(v)
		case "GrantWaitTime":
			m.GrantWaitTimeS = parseFloat(v)
		case "IsMemoryGrantFeedbackAdjusted":
			m.FeedbackAdjusted = v
		}
	}
	return m
}

func statisticsInfo(se xml.StartElement) StatisticsInfo {
	var s StatisticsInfo
	for _, a := range se.Attr {
		v := a.Value
		switch a.Name.Local {
		case "Database":
			s.Database = unbracket(v)
		case "Schema":
			s.Schema = unbracket(v)
		case "Table":
			s.Table = unbracket(v)
		case "Statistics":
			s.Statistics = unbracket(v)
		case "ModificationCount":
			s.ModificationCount = parseFloat(v)
		case "SamplingPercent":
			s.SamplingPercent = parseFloat(v)
		case "LastUpdate":
			s.LastUpdate = v
		}
	}
	return s
}

// wait reads a WaitStats/Wait or Warnings/Wait element.
func wait(se xml.StartElement) Wait {
	var w Wait
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "WaitType":
			w.Type = a.Value
		case "WaitTimeMs", "WaitTime":
			w.TimeMs = parseFloat(a.Value)
		case "WaitCount":
			w.Count = parseFloat(a.Value)
		}
	}
	return w
}

func parameter(se xml.StartElement) Parameter {
	var prm Parameter
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "Column":
			prm.Name = unbracket(a.Value)
		case "ParameterDataType":
			prm.DataType = a.Value
		case "ParameterCompiledValue":
			prm.CompiledValue, prm.HasCompiled = a.Value, true
		case "ParameterRuntimeValue":
			prm.RuntimeValue, prm.HasRuntime = a.Value, true
		}
	}
	return prm
}

func (p *parser) missingIndexes() ([]MissingIndexGroup, error) {
	var groups []MissingIndexGroup
	err := p.children(func(c xml.StartElement) error {
		if c.Name.Local != "MissingIndexGroup" {
			return p.skip()
		}
		g := MissingIndexGroup{Impact: parseFloat(attr(c, "Impact"))}
		err := p.children(func(c xml.StartElement) error {
			if c.Name.Local != "MissingIndex" {
				return p.skip()
			}
			mi := MissingIndex{
				Database: unbracket(attr(c, "Database")),
				Schema:   unbracket(attr(c, "Schema")),
				Table:    unbracket(attr(c, "Table")),
			}
			err := p.children(func(c xml.StartElement) error {
				if c.Name.Local != "ColumnGroup" {
					return p.skip()
				}
				var dst *[]string
				switch attr(c, "Usage") {
				case "EQUALITY":
					dst = &mi.Equality
				case "INEQUALITY":
					dst = &mi.Inequality
				case "INCLUDE":
					dst = &mi.Include
				default:
					return p.skip()
				}
				return p.children(func(c xml.StartElement) error {
					if c.Name.Local == "Column" {
						*dst = append(*dst, unbracket(attr(c, "Name")))
					}
					return p.skip()
				})
			})
			g.Indexes = append(g.Indexes, mi)
			return err
		})
		groups = append(groups, g)
		return err
	})
	return groups, err
}

func (p *parser) warnings(se xml.StartElement) (*Warnings, error) {
	w := &Warnings{}
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "NoJoinPredicate":
			w.NoJoinPredicate = parseBool(a.Value)
		case "SpatialGuess":
			w.SpatialGuess = parseBool(a.Value)
		case "UnmatchedIndexes":
			w.UnmatchedIndexes = parseBool(a.Value)
		case "FullUpdateForOnlineIndexBuild":
			w.FullUpdateForOnlineIndexBuild = parseBool(a.Value)
		}
	}
	err := p.children(func(c xml.StartElement) error {
		var err error
		switch c.Name.Local {
		case "SpillOccurred":
			w.SpillOccurred = true
		case "SpillToTempDb":
			w.SpillToTempDb = append(w.SpillToTempDb, SpillToTempDb{
				Level: parseInt(attr(c, "SpillLevel")), SpilledThreadCount: parseInt(attr(c, "SpilledThreadCount"))})
		case "SortSpillDetails":
			w.SortSpills = append(w.SortSpills, spillDetails(c))
		case "HashSpillDetails":
			w.HashSpills = append(w.HashSpills, spillDetails(c))
		case "ExchangeSpillDetails":
			w.ExchangeSpills = append(w.ExchangeSpills, spillDetails(c))
		case "PlanAffectingConvert":
			w.Converts = append(w.Converts, PlanAffectingConvert{Issue: attr(c, "ConvertIssue"), Expression: attr(c, "Expression")})
		case "Wait":
			w.Waits = append(w.Waits, wait(c))
		case "ColumnsWithNoStatistics":
			w.NoStatistics, err = p.columnList(w.NoStatistics)
			return err
		case "ColumnsWithStaleStatistics":
			w.StaleStatistics, err = p.columnList(w.StaleStatistics)
			return err
		case "MemoryGrantWarning":
			w.MemoryGrant = &MemoryGrantWarning{
				Kind:        attr(c, "GrantWarningKind"),
				RequestedKB: parseFloat(attr(c, "RequestedMemory")),
				GrantedKB:   parseFloat(attr(c, "GrantedMemory")),
				MaxUsedKB:   parseFloat(attr(c, "MaxUsedMemory")),
			}
		}
		return p.skip()
	})
	return w, err
}

func spillDetails(se xml.StartElement) SpillDetails {
	return SpillDetails{
		GrantedMemoryKB: parseFloat(attr(se, "GrantedMemoryKb")),
		UsedMemoryKB:    parseFloat(attr(se, "UsedMemoryKb")),
		WritesToTempDb:  parseFloat(attr(se, "WritesToTempDb")),
		ReadsFromTempDb: parseFloat(attr(se, "ReadsFromTempDb")),
	}
}

// columnList appends the ColumnReference children of the element to dst.
func (p *parser) columnList(dst []ColumnRef) ([]ColumnRef, error) {
	err := p.children(func(c xml.StartElement) error {
		if c.Name.Local == "ColumnReference" {
			dst = append(dst, columnRef(c))
		}
		return p.skip()
	})
	return dst, err
}

func columnRef(se xml.StartElement) ColumnRef {
	var c ColumnRef
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "Database":
			c.Database = unbracket(a.Value)
		case "Schema":
			c.Schema = unbracket(a.Value)
		case "Table":
			c.Table = unbracket(a.Value)
		case "Alias":
			c.Alias = unbracket(a.Value)
		case "Column":
			c.Column = unbracket(a.Value)
		case "ComputedColumn":
			c.Computed = parseBool(a.Value)
		}
	}
	return c
}

func objectRef(se xml.StartElement) ObjectRef {
	var o ObjectRef
	for _, a := range se.Attr {
		v := a.Value
		switch a.Name.Local {
		case "Server":
			o.Server = unbracket(v)
		case "Database":
			o.Database = unbracket(v)
		case "Schema":
			o.Schema = unbracket(v)
		case "Table":
			o.Table = unbracket(v)
		case "Index":
			o.Index = unbracket(v)
		case "Alias":
			o.Alias = unbracket(v)
		case "IndexKind":
			o.IndexKind = v
		case "Storage":
			o.Storage = v
		case "Filtered":
			o.Filtered = parseBool(v)
		case "TableReferenceId":
			o.TableReferenceID = parseInt(v)
		}
	}
	return o
}
