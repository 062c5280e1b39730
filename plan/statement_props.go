package plan

// HardwareProperties is QueryPlan/OptimizerHardwareDependentProperties:
// what the optimizer assumed about the server when it compiled the plan.
type HardwareProperties struct {
	EstimatedAvailableMemoryGrantKB float64
	EstimatedPagesCached            float64
	EstimatedAvailableDOP           int // 0 when absent
	MaxCompileMemoryKB              float64
}

// ThreadReservation is ThreadStat/ThreadReservation: parallel threads
// reserved on one NUMA node.
type ThreadReservation struct {
	NodeID          int
	ReservedThreads int
}

// threadStat reads a ThreadStat element with its ThreadReservation children.
func (p *parser) threadStat(se element) (*ThreadStat, error) {
	ts := &ThreadStat{Branches: attr(se, "Branches").int(), UsedThreads: attr(se, "UsedThreads").int()}
	err := p.children(func(c element) error {
		if c.local == "ThreadReservation" {
			ts.Reservations = append(ts.Reservations, ThreadReservation{
				NodeID: attr(c, "NodeId").int(), ReservedThreads: attr(c, "ReservedThreads").int()})
		}
		return p.skip()
	})
	return ts, err
}

// queryTimeStats reads a QueryTimeStats element.
func queryTimeStats(se element) *QueryTimeStats {
	qt := &QueryTimeStats{CPUTimeMs: attr(se, "CpuTime").float(), ElapsedTimeMs: attr(se, "ElapsedTime").float()}
	for _, a := range se.attrs {
		switch string(a.local) {
		case "UdfCpuTime":
			qt.UDFCPUTimeMs, qt.HasUDF = a.value.float(), true
		case "UdfElapsedTime":
			qt.UDFElapsedTimeMs, qt.HasUDF = a.value.float(), true
		}
	}
	return qt
}

// hardwareProperties reads an OptimizerHardwareDependentProperties element.
func hardwareProperties(se element) *HardwareProperties {
	return &HardwareProperties{
		EstimatedAvailableMemoryGrantKB: attr(se, "EstimatedAvailableMemoryGrant").float(),
		EstimatedPagesCached:            attr(se, "EstimatedPagesCached").float(),
		EstimatedAvailableDOP:           attr(se, "EstimatedAvailableDegreeOfParallelism").int(),
		MaxCompileMemoryKB:              attr(se, "MaxCompileMemory").float(),
	}
}
