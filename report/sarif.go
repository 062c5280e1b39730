package report

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/planlint/planlint/plan"
	"github.com/planlint/planlint/rules"
	"github.com/planlint/planlint/sqlscript"
)

// SARIF constants.
const (
	SARIFSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	SARIFVersion = "2.1.0"
	// InformationURI is the tool's home page.
	InformationURI = "https://github.com/planlint/planlint"
	// MaxSARIFResults is the most results GitHub code scanning accepts in
	// one run.
	MaxSARIFResults = 25000
)

// SARIFOptions control the SARIF log.
type SARIFOptions struct {
	// BaseDir is the directory (usually the repository root) that
	// artifact URIs are made relative to; "" means the working directory.
	// Files outside it get absolute file: URIs.
	BaseDir string
	// Category becomes runs[0].automationDetails.id; GitHub needs a
	// distinct one per SARIF file uploaded for the same commit.
	Category string
	// MaxResults caps the results (0 means MaxSARIFResults); the most
	// severe are kept and a notification says how many were dropped.
	MaxResults int
	// NoRedact keeps literals and parameter values in messages.
	NoRedact bool
}

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool              sarifTool         `json:"tool"`
	AutomationDetails *sarifAutomation  `json:"automationDetails,omitempty"`
	Invocations       []sarifInvocation `json:"invocations"`
	ColumnKind        string            `json:"columnKind"`
	Results           []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name            string      `json:"name"`
	SemanticVersion string      `json:"semanticVersion,omitempty"`
	InformationURI  string      `json:"informationUri"`
	Rules           []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string              `json:"id"`
	Name                 string              `json:"name"`
	ShortDescription     sarifText           `json:"shortDescription"`
	FullDescription      sarifText           `json:"fullDescription"`
	Help                 sarifText           `json:"help"`
	HelpURI              string              `json:"helpUri"`
	DefaultConfiguration sarifConfiguration  `json:"defaultConfiguration"`
	Properties           sarifRuleProperties `json:"properties"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifRuleProperties struct {
	Tags            []string `json:"tags"`
	Precision       string   `json:"precision"`
	ProblemSeverity string   `json:"problem.severity"`
}

type sarifAutomation struct {
	ID string `json:"id"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications,omitempty"`
}

type sarifNotification struct {
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations,omitempty"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           *int              `json:"ruleIndex,omitempty"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Fingerprints        map[string]string `json:"fingerprints,omitempty"`
	Properties          map[string]any    `json:"properties,omitempty"`
	// Suppressions mark a result a suppress entry of the configuration
	// file matched (SARIF 2.1.0 §3.27.23, §3.35).
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
}

// sarifSuppression is a suppression object. Kind is "external": the
// suppression lives in the configuration file, not in the analysed file.
// Status is "accepted", the state GitHub code scanning reads to close an
// alert; the justification is the entry's reason and the location the
// entry itself.
type sarifSuppression struct {
	Kind          string         `json:"kind"`
	Status        string         `json:"status"`
	Justification string         `json:"justification"`
	Location      *sarifLocation `json:"location,omitempty"`
}

func sarifSuppressionOf(base string, s *Suppression) sarifSuppression {
	out := sarifSuppression{Kind: "external", Status: "accepted", Justification: s.Reason}
	if l := s.Location; l != nil {
		if u := artifactURI(base, l.Path); u != "" {
			out.Location = &sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: u}, Region: sarifRegionOf(l)}}
		}
	}
	return out
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

// sarifRuleMeta is what GitHub shows about a rule beyond its doc: tags and
// how often its results are right. Rules without an entry get the default.
var sarifRuleMeta = map[string]struct {
	tags      []string
	precision string
}{
	"unmatched-indexes":                    {[]string{"filtered-index", "parameterization"}, "high"},
	"key-lookup":                           {[]string{"indexing"}, "high"},
	"residual-sort":                        {[]string{"indexing", "sort"}, "medium"},
	"row-estimate-skew":                    {[]string{"cardinality-estimation", "statistics"}, "high"},
	"set-options":                          {[]string{"filtered-index", "set-options"}, "very-high"},
	"filtered-index-hint":                  {[]string{"filtered-index", "hint"}, "high"},
	"filtered-index-parameterized":         {[]string{"filtered-index", "parameterization"}, "high"},
	"filtered-index-missing-filter-column": {[]string{"filtered-index", "indexing"}, "high"},
	"filtered-index-unused-literal":        {[]string{"filtered-index"}, "medium"},
	"queue-claim-not-atomic":               {[]string{"queue", "concurrency"}, "medium"},
	"filter-definition-unparsed":           {[]string{"filtered-index", "catalog"}, "very-high"},
}

// SARIF writes the report as a SARIF 2.1.0 log with one run, in the subset
// GitHub code scanning reads. Every rule is described, whether or not it
// reported anything; inputs that could not be analysed become tool
// execution notifications.
func SARIF(w io.Writer, r *Report, opt SARIFOptions) error {
	log := buildSARIF(r, opt)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(log)
}

func buildSARIF(r *Report, opt SARIFOptions) *sarifLog {
	// Fingerprints come from the unredacted statement text, so redacting
	// or not never changes an alert's identity.
	fingerprints := map[*Finding][2]string{}
	for _, f := range r.Files {
		texts := statementTexts(f)
		for _, x := range f.Findings {
			fingerprints[x] = findingFingerprints(f, x, opt.BaseDir, texts)
		}
		for _, x := range f.Suppressed {
			fingerprints[x] = findingFingerprints(f, x, opt.BaseDir, texts)
		}
	}
	src := r
	if !opt.NoRedact {
		src = Redacted(r)
	}

	all := rules.All()
	index := map[string]int{}
	driver := sarifDriver{Name: "planlint", SemanticVersion: r.Version, InformationURI: InformationURI, Rules: []sarifRule{}}
	for i, rule := range all {
		index[rule.Code] = i
		driver.Rules = append(driver.Rules, sarifRuleFor(rule))
	}

	run := sarifRun{
		Tool:        sarifTool{Driver: driver},
		Invocations: []sarifInvocation{{ExecutionSuccessful: true}},
		ColumnKind:  "unicodeCodePoints",
		Results:     []sarifResult{},
	}
	if opt.Category != "" {
		run.AutomationDetails = &sarifAutomation{ID: opt.Category}
	}
	inv := &run.Invocations[0]

	type ranked struct {
		sev rules.Severity
		res sarifResult
	}
	var results []ranked
	for fi, f := range src.Files {
		if f.Error != nil {
			n := sarifNotification{Level: "error", Message: sarifText{Text: "could not analyse " + displayPath(opt.BaseDir, f.Path) + ": " + *f.Error}}
			if u := artifactURI(opt.BaseDir, f.Path); u != "" {
				n.Locations = []sarifLocation{{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: u}}}}
			}
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, n)
			continue
		}
		add := func(x, orig *Finding) {
			res := sarifResult{
				RuleID:              x.Code,
				Level:               sarifLevel(x.Severity),
				Message:             sarifText{Text: sarifMessage(f, x)},
				Locations:           []sarifLocation{sarifFindingLocation(opt.BaseDir, f, x)},
				PartialFingerprints: map[string]string{"primaryLocationLineHash": fingerprints[orig][0]},
				Fingerprints:        map[string]string{"planlint/statement/v1": fingerprints[orig][1]},
				Properties:          findingProperties(f, x),
			}
			if i, ok := index[x.Code]; ok {
				res.RuleIndex = &i
			}
			sev := x.Severity
			if x.Suppression != nil {
				res.Suppressions = []sarifSuppression{sarifSuppressionOf(opt.BaseDir, x.Suppression)}
				sev = 0 // kept last when results are capped
			}
			results = append(results, ranked{sev, res})
		}
		for xi, x := range f.Findings {
			add(x, r.Files[fi].Findings[xi])
		}
		for xi, x := range f.Suppressed {
			add(x, r.Files[fi].Suppressed[xi])
		}
	}

	limit := opt.MaxResults
	if limit <= 0 {
		limit = MaxSARIFResults
	}
	if len(results) > limit {
		order := make([]int, len(results))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return results[order[a]].sev > results[order[b]].sev })
		keep := order[:limit]
		sort.Ints(keep) // back to report order
		dropped := len(results) - limit
		kept := make([]ranked, 0, limit)
		for _, i := range keep {
			kept = append(kept, results[i])
		}
		results = kept
		inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
			Level: "warning",
			Message: sarifText{Text: fmt.Sprintf("%d of %d results were dropped: GitHub code scanning accepts at most %d per run, "+
				"so the most severe were kept; see the text or JSON report for all of them", dropped, dropped+limit, limit)},
		})
	}
	for _, x := range results {
		run.Results = append(run.Results, x.res)
	}
	return &sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{run}}
}

func sarifRuleFor(rule *rules.Rule) sarifRule {
	meta, ok := sarifRuleMeta[rule.Name]
	if !ok {
		meta.precision = "medium"
	}
	tags := append([]string{"sql-server", "query-plan"}, meta.tags...)
	if rule.Catalog {
		tags = append(tags, "needs-catalog")
	}
	full := cutAtSentence(strings.TrimSpace(rule.Doc.Problem), 1024)
	if full == "" {
		full = rule.Summary + "."
	}
	return sarifRule{
		ID:                   rule.Code,
		Name:                 rule.Name,
		ShortDescription:     sarifText{Text: rule.Summary},
		FullDescription:      sarifText{Text: full},
		Help:                 sarifText{Text: rules.Text(rule), Markdown: rules.Markdown(rule)},
		HelpURI:              rules.DocURL(rule),
		DefaultConfiguration: sarifConfiguration{Level: sarifLevel(rule.Severity)},
		Properties:           sarifRuleProperties{Tags: tags, Precision: meta.precision, ProblemSeverity: problemSeverity(rule.Severity)},
	}
}

func sarifLevel(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "note"
}

func problemSeverity(s rules.Severity) string {
	switch s {
	case rules.Error:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "recommendation"
}

// cutAtSentence shortens s to at most max characters, ending at the last
// sentence end that fits (else at a word, with an ellipsis).
func cutAtSentence(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s) // longer than max, so runes[max] exists
	for i := max; i > 0; i-- {
		if (runes[i-1] == '.' || runes[i-1] == '!' || runes[i-1] == '?') && unicode.IsSpace(runes[i]) {
			return strings.TrimSpace(string(runes[:i]))
		}
	}
	for i := max - 1; i > 0; i-- {
		if unicode.IsSpace(runes[i]) {
			return strings.TrimSpace(string(runes[:i])) + "…"
		}
	}
	return string(runes[:max-1]) + "…"
}

// sarifMessage is the finding's message with where it sits in the plan
// and its fix. The first sentence is the message itself, since GitHub
// shows only that when space is short.
func sarifMessage(f *File, x *Finding) string {
	var b strings.Builder
	b.WriteString(x.Message)
	if p := planPlace(f, x); p != "" {
		fmt.Fprintf(&b, " (%s)", p)
	}
	if x.Fix != "" {
		b.WriteString("\nFix: " + x.Fix)
	}
	return b.String()
}

// planPlace is "stmt 1 node 3 Clustered Index Scan", with the batch when
// the file has several.
func planPlace(f *File, x *Finding) string {
	p := f.FindingPlace(x)
	if op := operatorName(f, x); op != "" {
		p += " " + op
	}
	return p
}

// findingProperties carries the plan coordinates and evidence.
func findingProperties(f *File, x *Finding) map[string]any {
	p := map[string]any{"rule": x.Rule, "batch": x.Batch, "statement_id": x.StatementID, "statement_ordinal": x.Ordinal}
	if x.NodeID != nil {
		p["node_id"] = *x.NodeID
		if op := operatorName(f, x); op != "" {
			p["operator"] = op
		}
	}
	if len(x.Evidence) > 0 {
		p["evidence"] = x.Evidence
	}
	if s := findingStatement(f, x); s != nil && s.Runtime != nil {
		p["runtime"] = s.Runtime
	}
	return p
}

func sarifFindingLocation(base string, f *File, x *Finding) sarifLocation {
	path := f.Path
	region := &sarifRegion{StartLine: 1}
	if l := x.Location; l != nil {
		if l.Path != "" {
			path = l.Path
		}
		region = sarifRegionOf(l)
	} else if s := findingStatement(f, x); s != nil && s.Location != nil {
		if s.Location.Path != "" {
			path = s.Location.Path
		}
		region = sarifRegionOf(s.Location)
	}
	uri := artifactURI(base, path)
	if uri == "" {
		uri = "stdin"
	}
	return sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uri}, Region: region}}
}

// sarifRegionOf converts a half-open source range; an end at the start of
// a line becomes the end of the line before it.
func sarifRegionOf(l *Location) *sarifRegion {
	if l.StartLine < 1 {
		return &sarifRegion{StartLine: 1}
	}
	reg := &sarifRegion{StartLine: l.StartLine}
	if l.StartCol >= 1 {
		reg.StartColumn = l.StartCol
	}
	switch {
	case l.EndLine > l.StartLine && l.EndCol <= 1:
		reg.EndLine = l.EndLine - 1
	case l.EndLine >= l.StartLine:
		reg.EndLine = l.EndLine
		if l.EndCol >= 1 && (l.EndLine > l.StartLine || l.EndCol > l.StartCol) {
			reg.EndColumn = l.EndCol
		}
	}
	return reg
}

// findingFingerprints identify a finding across runs without line
// numbers. The first (partial) one hashes the rule code, repository path,
// the statement's normalised text, which occurrence of that text in the
// file it is (a plan can repeat a statement), and the node, so it survives
// statements added elsewhere. The second adds the statement's ordinal in
// the file, so it names exactly one statement.
func findingFingerprints(f *File, x *Finding, base string, texts map[*Statement]normalisedText) [2]string {
	path := f.Path
	if x.Location != nil && x.Location.Path != "" {
		path = x.Location.Path
	}
	text, occurrence, ordinal := "", 0, x.Ordinal
	if s := findingStatement(f, x); s != nil {
		text, occurrence, ordinal = texts[s].text, texts[s].occurrence, s.Ordinal
	}
	node := "-"
	if x.NodeID != nil {
		node = strconv.Itoa(*x.NodeID)
	}
	hash := func(parts ...string) string {
		h := sha256.New()
		for _, part := range parts {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		return hex.EncodeToString(h.Sum(nil)[:16])
	}
	partial := []string{x.Code, displayPath(base, path), text, node}
	if occurrence > 1 {
		partial = append(partial, strconv.Itoa(occurrence))
	}
	full := []string{x.Code, displayPath(base, path), text, node, strconv.Itoa(ordinal)}
	return [2]string{hash(partial...), hash(full...)}
}

// findingStatement is the summary of the statement a finding is about.
func findingStatement(f *File, x *Finding) *Statement {
	return f.StatementOf(x)
}

// findingOperator is the operator a finding names, when the plan is kept.
// A cursor statement has one plan per operation; evidence naming the
// operation picks the plan.
func findingOperator(f *File, x *Finding) *plan.RelOp {
	if x.NodeID == nil {
		return nil
	}
	s := findingStatement(f, x)
	if s == nil || s.Source == nil {
		return nil
	}
	return s.Source.Node(*x.NodeID, x.CursorOperation())
}

// operatorName is the display name of the operator a finding names: the
// one recorded with the finding, else the kept plan's.
func operatorName(f *File, x *Finding) string {
	if x.NodeID == nil {
		return ""
	}
	if x.OperatorName != "" {
		return x.OperatorName
	}
	if op := findingOperator(f, x); op != nil {
		return op.DisplayName()
	}
	return ""
}

// isPseudoPath reports names such as "<stdin>" that are not files.
func isPseudoPath(p string) bool {
	return p == "" || (strings.HasPrefix(p, "<") && strings.HasSuffix(p, ">"))
}

// displayPath is p relative to base ("" = the working directory) with
// forward slashes; a path outside base stays absolute, never "../".
func displayPath(base, p string) string {
	if isPseudoPath(p) {
		return p
	}
	if base == "" {
		base = "."
	}
	// Two relative paths need no working directory, unless one climbs
	// out of the other.
	if !filepath.IsAbs(base) && !filepath.IsAbs(p) {
		if rel, err := filepath.Rel(filepath.Clean(base), filepath.Clean(p)); err == nil && !escapes(rel) {
			return filepath.ToSlash(rel)
		}
	}
	ab, err := filepath.Abs(base)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	ap, err := filepath.Abs(p)
	if err != nil {
		return filepath.ToSlash(filepath.Clean(p))
	}
	rel, err := filepath.Rel(ab, ap)
	if err != nil || escapes(rel) {
		return filepath.ToSlash(ap)
	}
	return filepath.ToSlash(rel)
}

func escapes(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// artifactURI is the SARIF URI of a path: relative to base, or a file:
// URI for a path outside it; "" for a pseudo path.
func artifactURI(base, p string) string {
	if isPseudoPath(p) {
		return ""
	}
	d := displayPath(base, p)
	if filepath.IsAbs(filepath.FromSlash(d)) || strings.HasPrefix(d, "/") {
		if !strings.HasPrefix(d, "/") {
			d = "/" + d // Windows drive paths
		}
		return (&url.URL{Scheme: "file", Path: d}).String()
	}
	return (&url.URL{Path: d}).String()
}

// normalisedText is a statement's normalised text and which occurrence of
// that text in its file it is (1 for the first).
type normalisedText struct {
	text       string
	occurrence int
}

func statementTexts(f *File) map[*Statement]normalisedText {
	m := map[*Statement]normalisedText{}
	seen := map[string]int{}
	for _, s := range f.Statements {
		t := sqlscript.Fingerprint(s.Text)
		seen[t]++
		m[s] = normalisedText{t, seen[t]}
	}
	return m
}
