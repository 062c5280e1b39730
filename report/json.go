package report

import (
	"encoding/json"
	"io"
)

type jsonReport struct {
	SchemaVersion int `json:"schema_version"`
	*Report
	Summary jsonSummary `json:"summary"`
}

type jsonSummary struct {
	Files    int `json:"files"`
	Failed   int `json:"failed"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Infos    int `json:"infos"`
	// Suppressed counts the findings of every file's "suppressed" list.
	Suppressed int `json:"suppressed"`
}

// JSON writes the report as indented JSON (the layout the README
// documents). Empty lists are written as [], never null.
func JSON(w io.Writer, r *Report) error {
	for _, f := range r.Files {
		if f.Statements == nil {
			f.Statements = []*Statement{}
		}
		if f.Findings == nil {
			f.Findings = []*Finding{}
		}
	}
	if r.Files == nil {
		r.Files = []*File{}
	}
	e, wn, i := r.Counts()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(jsonReport{
		SchemaVersion: SchemaVersion,
		Report:        r,
		Summary:       jsonSummary{Files: r.Inputs(), Failed: r.Failed(), Errors: e, Warnings: wn, Infos: i, Suppressed: r.SuppressedCount()},
	})
}
