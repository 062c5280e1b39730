package plan

// This file maps showplan elements onto the model. Every method is called
// with its element already pushed by child and reads through its end tag.
// Unknown elements are skipped; unknown attributes are ignored.

func (p *parser) readRoot(attrs []attribute) {
	for _, a := range attrs {
		switch string(a.local) {
		case "Version":
			p.header.Version = p.str(a.value)
		case "Build":
			p.header.Build = p.str(a.value)
		}
	}
}

func (p *parser) batchSequence() error {
	return p.children(func(se element) error {
		if se.local != "Batch" {
			return p.skip()
		}
		p.header.Batches++
		p.batch = p.header.Batches
		return p.children(func(se element) error {
			if se.local != "Statements" {
				return p.skip()
			}
			return p.statements(nil, "")
		})
	})
}

// children calls fn for each child element of the element just pushed; fn
// must read the child through its end tag.
func (p *parser) children(fn func(element) error) error {
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
	return p.children(func(se element) error {
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

func (p *parser) statement(se element, parent *Statement) (*Statement, error) {
	p.ordinal++
	s := &Statement{Kind: se.local, Batch: p.batch, Ordinal: p.ordinal, Parent: parent, ParameterizationType: ParamUnknown, Pos: p.startPos()}
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "StatementId":
			s.ID = v.int()
		case "StatementCompId":
			s.CompID = v.int()
		case "StatementType":
			s.Type = p.str(v)
		case "StatementText":
			s.Text = p.str(v)
		case "ParameterizedText":
			s.ParameterizedText = p.str(v)
		case "StatementParameterizationType":
			if n, ok := v.intOK(); ok {
				s.ParameterizationType = ParameterizationType(n)
			}
		case "StatementOptmLevel":
			s.OptmLevel = p.str(v)
		case "StatementOptmEarlyAbortReason":
			s.OptmEarlyAbortReason = p.str(v)
		case "StatementSubTreeCost":
			s.SubtreeCost = v.float()
		case "StatementEstRows":
			s.EstRows = v.float()
		case "QueryHash":
			s.QueryHash = p.str(v)
		case "QueryPlanHash":
			s.QueryPlanHash = p.str(v)
		case "RetrievedFromCache":
			s.RetrievedFromCache = p.str(v)
		case "CardinalityEstimationModelVersion":
			s.CEModelVersion = v.int()
		case "PlanGuideName":
			s.PlanGuideName = p.str(v)
		case "PlanGuideDB":
			s.PlanGuideDB = p.str(v)
		case "TemplatePlanGuideName":
			s.TemplatePlanGuideName = p.str(v)
		case "TemplatePlanGuideDB":
			s.TemplatePlanGuideDB = p.str(v)
		case "SecurityPolicyApplied":
			s.SecurityPolicyApplied = v.bool()
		case "Database":
			if s.Kind == "StmtUseDb" {
				s.Database = p.str(v)
			}
		}
	}
	err := p.children(func(c element) error {
		switch c.local {
		case "StatementSetOptions":
			s.SetOptions = setOptions(c)
			return p.skip()
		case "QueryPlan":
			return p.statementPlan(c, &s.QueryPlan)
		case "Dispatcher":
			return p.children(func(c element) error {
				if c.local != "ParameterSensitivePredicate" {
					return p.skip()
				}
				psp := PSPPredicate{Low: attr(c, "LowBoundary").float(), High: attr(c, "HighBoundary").float()}
				err := p.children(func(c element) error {
					if c.local == "Predicate" {
						var x *Scalar
						err := p.firstScalar(&x)
						psp.Predicate = x.String()
						return err
					}
					return p.skip()
				})
				s.PSPPredicates = append(s.PSPPredicates, psp)
				return err
			})
		case "Condition":
			return p.children(func(c element) error {
				switch c.local {
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
			s.ProcName = p.str(attr(c, "ProcName"))
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
func (p *parser) statementPlan(se element, dst **QueryPlan) error {
	qp, err := p.queryPlan(se)
	if err == nil && *dst == nil {
		*dst = qp
	}
	return err
}

// body reads an element holding a Statements block (Then, Else, StoredProc,
// UDF) into s.Children under the given branch name.
func (p *parser) body(s *Statement, branch string) error {
	return p.children(func(c element) error {
		if c.local == "Statements" {
			return p.statements(s, branch)
		}
		return p.skip()
	})
}

func setOptions(se element) *SetOptions {
	o := &SetOptions{}
	for _, a := range se.attrs {
		b := a.value.boolPtr()
		switch string(a.local) {
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

func (p *parser) cursorPlan(se element, s *Statement) error {
	c := &Cursor{}
	for _, a := range se.attrs {
		switch string(a.local) {
		case "CursorName":
			c.Name = p.str(a.value)
		case "CursorActualType":
			c.ActualType = p.str(a.value)
		case "CursorRequestedType":
			c.RequestedType = p.str(a.value)
		case "CursorConcurrency":
			c.Concurrency = p.str(a.value)
		case "ForwardOnly":
			c.ForwardOnly = a.value.bool()
		}
	}
	s.Cursor = c
	return p.children(func(op element) error {
		if op.local != "Operation" {
			return p.skip()
		}
		o := &CursorOperation{Type: p.str(attr(op, "OperationType"))}
		c.Operations = append(c.Operations, o)
		return p.children(func(e element) error {
			switch e.local {
			case "QueryPlan":
				return p.statementPlan(e, &o.QueryPlan)
			case "UDF":
				return p.body(s, "udf")
			}
			return p.skip()
		})
	})
}

func (p *parser) queryPlan(se element) (*QueryPlan, error) {
	qp := &QueryPlan{}
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "DegreeOfParallelism":
			qp.DegreeOfParallelism = v.int()
		case "EffectiveDegreeOfParallelism":
			qp.EffectiveDOP = v.int()
		case "MemoryGrant":
			qp.MemoryGrantKB = v.float()
		case "CachedPlanSize":
			qp.CachedPlanSizeKB = v.float()
		case "CompileTime":
			qp.CompileTimeMs = v.float()
		case "CompileCPU":
			qp.CompileCPUMs = v.float()
		case "CompileMemory":
			qp.CompileMemoryKB = v.float()
		case "NonParallelPlanReason":
			qp.NonParallelPlanReason = p.str(v)
		case "UsePlan":
			qp.UsePlan = v.bool()
		case "QueryVariantID":
			qp.QueryVariantID = v.int()
		case "ContainsInlineScalarTsqlUdfs":
			qp.ContainsInlineScalarUDFs = v.bool()
		case "DispatcherPlanHandle":
			qp.DispatcherPlanHandle = p.str(v)
		}
	}
	savedPlan, savedOwner := p.plan, p.owner
	p.plan, p.owner = qp, nil
	defer func() { p.plan, p.owner = savedPlan, savedOwner }()

	err := p.children(func(c element) error {
		var err error
		switch c.local {
		case "RelOp":
			if qp.Root != nil {
				break // the schema allows one; further ones are skipped
			}
			qp.Root, err = p.relOp(c, nil)
			return err
		case "ThreadStat":
			qp.ThreadStat, err = p.threadStat(c)
			return err
		case "MissingIndexes":
			qp.MissingIndexes, err = p.missingIndexes()
			return err
		case "UnmatchedIndexes":
			return p.children(func(c element) error {
				if c.local != "Parameterization" {
					return p.skip()
				}
				return p.children(func(c element) error {
					if c.local == "Object" {
						qp.UnmatchedIndexes = append(qp.UnmatchedIndexes, p.objectRef(c))
					}
					return p.skip()
				})
			})
		case "Warnings":
			qp.Warnings, err = p.warnings(c)
			return err
		case "MemoryGrantInfo":
			qp.MemoryGrant = p.memoryGrantInfo(c)
		case "OptimizerStatsUsage":
			return p.children(func(c element) error {
				if c.local == "StatisticsInfo" {
					qp.Statistics = append(qp.Statistics, p.statisticsInfo(c))
				}
				return p.skip()
			})
		case "TraceFlags":
			compile := attr(c, "IsCompileTime").bool()
			return p.children(func(c element) error {
				if c.local == "TraceFlag" {
					qp.TraceFlags = append(qp.TraceFlags, TraceFlag{
						Value: attr(c, "Value").int(), Scope: p.str(attr(c, "Scope")), IsCompile: compile})
				}
				return p.skip()
			})
		case "WaitStats":
			return p.children(func(c element) error {
				if c.local == "Wait" {
					qp.Waits = append(qp.Waits, p.wait(c))
				}
				return p.skip()
			})
		case "QueryTimeStats":
			qp.QueryTime = queryTimeStats(c)
		case "OptimizerHardwareDependentProperties":
			qp.Hardware = hardwareProperties(c)
		case "ParameterList":
			return p.children(func(c element) error {
				if c.local == "ColumnReference" {
					qp.Parameters = append(qp.Parameters, p.parameter(c))
				}
				return p.skip()
			})
		}
		return p.skip()
	})
	qp.indexNodes()
	qp.computeSelfTimes()
	return qp, err
}

// indexNodes indexes Nodes by NodeId so that Node is not a scan: rules
// and renderers look operators up once per finding.
func (q *QueryPlan) indexNodes() {
	if len(q.Nodes) == 0 {
		return
	}
	q.nodeIndex = make(map[int]int, len(q.Nodes))
	for i, n := range q.Nodes {
		if _, dup := q.nodeIndex[n.NodeID]; !dup {
			q.nodeIndex[n.NodeID] = i
		}
	}
}

func (p *parser) memoryGrantInfo(se element) *MemoryGrantInfo {
	m := &MemoryGrantInfo{}
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "SerialRequiredMemory":
			m.SerialRequiredKB = v.float()
		case "SerialDesiredMemory":
			m.SerialDesiredKB = v.float()
		case "RequiredMemory":
			m.RequiredKB = v.float()
		case "DesiredMemory":
			m.DesiredKB = v.float()
		case "RequestedMemory":
			m.RequestedKB = v.float()
		case "GrantedMemory":
			m.GrantedKB = v.float()
		case "MaxUsedMemory":
			m.MaxUsedKB = v.float()
		case "GrantWaitTime":
			m.GrantWaitTimeS = v.float()
		case "IsMemoryGrantFeedbackAdjusted":
			m.FeedbackAdjusted = p.str(v)
		case "MaxQueryMemory":
			m.MaxQueryMemoryKB = v.float()
		case "LastRequestedMemory":
			m.LastRequestedKB = v.float()
		}
	}
	return m
}

func (p *parser) statisticsInfo(se element) StatisticsInfo {
	var s StatisticsInfo
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "Database":
			s.Database = unbracket(p.str(v))
		case "Schema":
			s.Schema = unbracket(p.str(v))
		case "Table":
			s.Table = unbracket(p.str(v))
		case "Statistics":
			s.Statistics = unbracket(p.str(v))
		case "ModificationCount":
			s.ModificationCount = v.float()
		case "SamplingPercent":
			s.SamplingPercent = v.float()
		case "LastUpdate":
			s.LastUpdate = p.str(v)
		}
	}
	return s
}

// wait reads a WaitStats/Wait or Warnings/Wait element.
func (p *parser) wait(se element) Wait {
	var w Wait
	for _, a := range se.attrs {
		switch string(a.local) {
		case "WaitType":
			w.Type = p.str(a.value)
		case "WaitTimeMs", "WaitTime":
			w.TimeMs = a.value.float()
		case "WaitCount":
			w.Count = a.value.float()
		}
	}
	return w
}

func (p *parser) parameter(se element) Parameter {
	var prm Parameter
	for _, a := range se.attrs {
		switch string(a.local) {
		case "Column":
			prm.Name = unbracket(p.str(a.value))
		case "ParameterDataType":
			prm.DataType = p.str(a.value)
		case "ParameterCompiledValue":
			prm.CompiledValue, prm.HasCompiled = p.str(a.value), true
		case "ParameterRuntimeValue":
			prm.RuntimeValue, prm.HasRuntime = p.str(a.value), true
		}
	}
	return prm
}

func (p *parser) missingIndexes() ([]MissingIndexGroup, error) {
	var groups []MissingIndexGroup
	err := p.children(func(c element) error {
		if c.local != "MissingIndexGroup" {
			return p.skip()
		}
		g := MissingIndexGroup{Impact: attr(c, "Impact").float()}
		err := p.children(func(c element) error {
			if c.local != "MissingIndex" {
				return p.skip()
			}
			mi := MissingIndex{
				Database: unbracket(p.str(attr(c, "Database"))),
				Schema:   unbracket(p.str(attr(c, "Schema"))),
				Table:    unbracket(p.str(attr(c, "Table"))),
			}
			err := p.children(func(c element) error {
				if c.local != "ColumnGroup" {
					return p.skip()
				}
				var dst *[]string
				switch string(attr(c, "Usage")) {
				case "EQUALITY":
					dst = &mi.Equality
				case "INEQUALITY":
					dst = &mi.Inequality
				case "INCLUDE":
					dst = &mi.Include
				default:
					return p.skip()
				}
				return p.children(func(c element) error {
					if c.local == "Column" {
						*dst = append(*dst, unbracket(p.str(attr(c, "Name"))))
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

func (p *parser) warnings(se element) (*Warnings, error) {
	w := &Warnings{}
	for _, a := range se.attrs {
		switch string(a.local) {
		case "NoJoinPredicate":
			w.NoJoinPredicate = a.value.bool()
		case "SpatialGuess":
			w.SpatialGuess = a.value.bool()
		case "UnmatchedIndexes":
			w.UnmatchedIndexes = a.value.bool()
		case "FullUpdateForOnlineIndexBuild":
			w.FullUpdateForOnlineIndexBuild = a.value.bool()
		}
	}
	err := p.children(func(c element) error {
		var err error
		switch c.local {
		case "SpillOccurred":
			w.SpillOccurred = true
		case "SpillToTempDb":
			w.SpillToTempDb = append(w.SpillToTempDb, SpillToTempDb{
				Level: attr(c, "SpillLevel").int(), SpilledThreadCount: attr(c, "SpilledThreadCount").int()})
		case "SortSpillDetails":
			w.SortSpills = append(w.SortSpills, spillDetails(c))
		case "HashSpillDetails":
			w.HashSpills = append(w.HashSpills, spillDetails(c))
		case "ExchangeSpillDetails":
			w.ExchangeSpills = append(w.ExchangeSpills, spillDetails(c))
		case "PlanAffectingConvert":
			w.Converts = append(w.Converts, PlanAffectingConvert{Issue: p.str(attr(c, "ConvertIssue")), Expression: p.str(attr(c, "Expression"))})
		case "Wait":
			w.Waits = append(w.Waits, p.wait(c))
		case "ColumnsWithNoStatistics":
			w.NoStatistics, err = p.columnList(w.NoStatistics)
			return err
		case "ColumnsWithStaleStatistics":
			w.StaleStatistics, err = p.columnList(w.StaleStatistics)
			return err
		case "MemoryGrantWarning":
			w.MemoryGrant = &MemoryGrantWarning{
				Kind:        p.str(attr(c, "GrantWarningKind")),
				RequestedKB: attr(c, "RequestedMemory").float(),
				GrantedKB:   attr(c, "GrantedMemory").float(),
				MaxUsedKB:   attr(c, "MaxUsedMemory").float(),
			}
		}
		return p.skip()
	})
	return w, err
}

func spillDetails(se element) SpillDetails {
	return SpillDetails{
		GrantedMemoryKB: attr(se, "GrantedMemoryKb").float(),
		UsedMemoryKB:    attr(se, "UsedMemoryKb").float(),
		WritesToTempDb:  attr(se, "WritesToTempDb").float(),
		ReadsFromTempDb: attr(se, "ReadsFromTempDb").float(),
	}
}

// columnList appends the ColumnReference children of the element to dst.
func (p *parser) columnList(dst []ColumnRef) ([]ColumnRef, error) {
	err := p.children(func(c element) error {
		if c.local == "ColumnReference" {
			dst = append(dst, p.columnRef(c))
		}
		return p.skip()
	})
	return dst, err
}

func (p *parser) columnRef(se element) ColumnRef {
	var c ColumnRef
	for _, a := range se.attrs {
		switch string(a.local) {
		case "Database":
			c.Database = unbracket(p.str(a.value))
		case "Schema":
			c.Schema = unbracket(p.str(a.value))
		case "Table":
			c.Table = unbracket(p.str(a.value))
		case "Alias":
			c.Alias = unbracket(p.str(a.value))
		case "Column":
			c.Column = unbracket(p.str(a.value))
		case "ComputedColumn":
			c.Computed = a.value.bool()
		}
	}
	return c
}

func (p *parser) objectRef(se element) ObjectRef {
	var o ObjectRef
	for _, a := range se.attrs {
		v := a.value
		switch string(a.local) {
		case "Server":
			o.Server = unbracket(p.str(v))
		case "Database":
			o.Database = unbracket(p.str(v))
		case "Schema":
			o.Schema = unbracket(p.str(v))
		case "Table":
			o.Table = unbracket(p.str(v))
		case "Index":
			o.Index = unbracket(p.str(v))
		case "Alias":
			o.Alias = unbracket(p.str(v))
		case "IndexKind":
			o.IndexKind = p.str(v)
		case "Storage":
			o.Storage = p.str(v)
		case "Filtered":
			o.Filtered = v.bool()
		case "TableReferenceId":
			o.TableReferenceID = v.int()
		}
	}
	return o
}
