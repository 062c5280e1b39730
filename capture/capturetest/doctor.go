package capturetest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/planlint/planlint/capture/tdstest"
)

// KindDoctor is a batch of planlint doctor (its marker comment).
const KindDoctor = "doctor"

const doctorMarker = "-- planlint: doctor "

// doctorResponse answers the doctor's own batches as a SQL Server on which
// the login has every permission (cfg.Denied takes some away).
func doctorResponse(cfg Config, s tdstest.Session, r *tdstest.Request) *tdstest.Response {
	check, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(r.SQL), doctorMarker), "\n")
	switch {
	case s.ShowplanXML && denied(cfg, "SHOWPLAN"):
		return tdstest.ErrorResponse(tdstest.ErrShowplanDenied(s.Database))
	case s.ShowplanXML && check == "batch plan":
		return tdstest.EstimatedPlan(constantPlan("SELECT 1 AS planlint_value", ""))
	case s.ShowplanXML:
		return nil
	case check == "query store":
		state := cfg.QueryStoreState
		if state == "" {
			state = "READ_WRITE"
		}
		return tdstest.NewResponse().Result(tdstest.NewResultSet(tdstest.NVarChar("actual_state_desc", 60)).Row(state))
	case check == "permissions":
		has := func(p string) any {
			for _, d := range cfg.Denied {
				if strings.EqualFold(d, p) {
					return 0
				}
			}
			return 1
		}
		rs := tdstest.NewResultSet(tdstest.Int("showplan"), tdstest.Int("view_server_state"), tdstest.Int("view_database_state"),
			tdstest.NVarChar("login_name", 128), tdstest.NVarChar("user_name", 128)).
			Row(has("SHOWPLAN"), has("VIEW SERVER STATE"), has("VIEW DATABASE STATE"), s.User, "dbo")
		return tdstest.NewResponse().Result(rs)
	case check == "view":
		switch {
		case denied(cfg, "VIEW SERVER STATE") && strings.Contains(r.SQL, "sys.dm_exec_"):
			return tdstest.ErrorResponse(tdstest.Message{Number: 300, State: 1, Class: 14, Line: 2,
				Text: "VIEW SERVER STATE permission was denied on object 'server', database 'master'."})
		case denied(cfg, "VIEW DATABASE STATE") && strings.Contains(r.SQL, "sys.query_store_"):
			return tdstest.ErrorResponse(tdstest.Message{Number: 300, State: 1, Class: 14, Line: 2,
				Text: fmt.Sprintf("VIEW DATABASE STATE permission denied in database '%s'.", s.Database)})
		}
		return tdstest.NewResponse().Result(tdstest.NewResultSet(tdstest.Int("placeholder")))
	}
	return nil
}

func denied(cfg Config, perm string) bool {
	for _, d := range cfg.Denied {
		if strings.EqualFold(d, perm) {
			return true
		}
	}
	return false
}

var probeValue = regexp.MustCompile(`@(\w+) = (\d+)`)

// doctorProbePlan is the plan of EXEC of the probe procedure that doctor
// creates: SELECT @planlint_p, with the value of the EXEC sniffed.
func doctorProbePlan(call string, sniff bool) (string, error) {
	compiled := ""
	if m := probeValue.FindStringSubmatch(call); m != nil && sniff {
		compiled = m[2]
	}
	return WrapInProcedure(constantPlan("SELECT @planlint_p AS planlint_value;", compiled), call)
}

// constantPlan is a valid estimated plan of a SELECT without a table: one
// Constant Scan, with @planlint_p in the parameter list when compiled is set.
func constantPlan(text, compiled string) string {
	params := ""
	if compiled != "" {
		params = fmt.Sprintf(`<ParameterList><ColumnReference Column="@planlint_p" ParameterDataType="int" ParameterCompiledValue="(%s)"/></ParameterList>`, compiled)
	}
	return `<ShowPlanXML xmlns="http://schemas.microsoft.com/sqlserver/2004/07/showplan" Version="1.564" Build="16.0.4237.2"><BatchSequence><Batch><Statements>` +
		`<StmtSimple StatementText="` + text + `" StatementId="1" StatementCompId="1" StatementType="SELECT" StatementSubTreeCost="1.157E-06" StatementEstRows="1" RetrievedFromCache="false">` +
		`<QueryPlan CachedPlanSize="8" CompileTime="0" CompileCPU="0" CompileMemory="64">` +
		`<RelOp NodeId="0" PhysicalOp="Constant Scan" LogicalOp="Constant Scan" EstimateRows="1" EstimateIO="0" EstimateCPU="1.157E-06" AvgRowSize="11" EstimatedTotalSubtreeCost="1.157E-06" Parallel="0" EstimateRebinds="0" EstimateRewinds="0" EstimatedExecutionMode="Row"><OutputList/><ConstantScan/></RelOp>` +
		params + `</QueryPlan></StmtSimple></Statements></Batch></BatchSequence></ShowPlanXML>`
}

var numberLiteral = regexp.MustCompile(`\b\d+\b`)

// defaultTemplate emulates sp_get_query_template for statements whose
// literals are integers: each becomes @0, @1, … of type int.
func defaultTemplate(query string) (template, params string, fail *tdstest.Message) {
	n := 0
	var decl []string
	tpl := numberLiteral.ReplaceAllStringFunc(query, func(string) string {
		p := fmt.Sprintf("@%d", n)
		decl = append(decl, p+" int")
		n++
		return p
	})
	if n == 0 {
		return "", "", &tdstest.Message{Number: 10501, State: 1, Class: 16, Line: 1,
			Text: "Cannot create plan guide 'sp_get_query_template' because the statement has no literal to parameterize."}
	}
	return tpl, strings.Join(decl, ","), nil
}
