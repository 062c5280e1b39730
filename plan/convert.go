package plan

import (
	"strconv"
	"strings"
)

// convertType renders a Convert element's target type as T-SQL, e.g.
// "nvarchar(20)", "decimal(18,2)", "varchar(max)". Length counts bytes in
// showplan, so Unicode lengths are halved; -1 (and no length for a variable
// type) is max.
func (p *parser) convertType(c element) string {
	name := p.str(attr(c, "DataType"))
	length, hasLength := attr(c, "Length").intOK()
	prec, hasPrec := attr(c, "Precision").intOK()
	scale, hasScale := attr(c, "Scale").intOK()
	switch name {
	case "nvarchar", "nchar":
		if hasLength && length > 0 {
			return name + "(" + strconv.Itoa(length/2) + ")"
		}
		if name == "nvarchar" && hasLength {
			return name + "(max)"
		}
	case "varchar", "char", "varbinary", "binary":
		if hasLength && length > 0 {
			return name + "(" + strconv.Itoa(length) + ")"
		}
		if name[:3] == "var" && hasLength {
			return name + "(max)"
		}
	case "decimal", "numeric":
		if hasPrec {
			return name + "(" + strconv.Itoa(prec) + "," + strconv.Itoa(scale) + ")"
		}
	case "datetime2", "time", "datetimeoffset":
		if hasScale {
			return name + "(" + strconv.Itoa(scale) + ")"
		}
	}
	return name
}

// definedConverts reads a Compute Scalar's DefinedValues (each a
// ColumnReference followed by its ScalarOperator) and keeps those whose
// expression is an implicit conversion. The ScalarString decides, so the
// other expressions are skipped unparsed.
func (p *parser) definedConverts(dst []DefinedValue) ([]DefinedValue, error) {
	err := p.children(func(c element) error {
		if c.local != "DefinedValue" {
			return p.skip()
		}
		var dv DefinedValue
		err := p.children(func(c element) error {
			switch c.local {
			case "ColumnReference":
				if dv.Column.Column == "" {
					dv.Column = p.columnRef(c)
				}
			case "ScalarOperator":
				if !strings.HasPrefix(p.str(attr(c, "ScalarString")), "CONVERT_IMPLICIT(") {
					return p.skip()
				}
				s, err := p.scalar(c)
				if dv.Value == nil {
					dv.Value = s
				}
				return err
			}
			return p.skip()
		})
		if dv.Value != nil {
			dst = append(dst, dv)
		}
		return err
	})
	return dst, err
}
