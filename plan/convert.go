package plan

import (
	"strconv"
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
