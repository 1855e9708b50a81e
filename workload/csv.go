package workload

import (
	"encoding/csv"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// statsFields are Stats' fields in declaration order; the CSV columns are
// their JSON names, so the two formats cannot drift apart.
var statsFields = reflect.VisibleFields(reflect.TypeFor[Stats]())

// CSVHeader is the header row of --stats-format csv: the JSON field names.
func CSVHeader() []string {
	h := make([]string, len(statsFields))
	for i, f := range statsFields {
		h[i], _, _ = strings.Cut(f.Tag.Get("json"), ",")
	}
	return h
}

// CSVRecord is s as one CSV row under CSVHeader.
func (s Stats) CSVRecord() []string {
	v := reflect.ValueOf(s)
	row := make([]string, len(statsFields))
	for i, f := range statsFields {
		fv := v.FieldByIndex(f.Index)
		switch fv.Kind() {
		case reflect.Int32, reflect.Int64:
			row[i] = strconv.FormatInt(fv.Int(), 10)
		case reflect.Float64:
			row[i] = strconv.FormatFloat(fv.Float(), 'f', -1, 64)
		case reflect.Bool:
			row[i] = strconv.FormatBool(fv.Bool())
		default:
			row[i] = fv.String()
		}
	}
	return row
}

// writeCSV writes rows (and the header first when header is set) to out.
func writeCSV(out io.Writer, header bool, rows ...[]string) error {
	cw := csv.NewWriter(out)
	if header {
		if err := cw.Write(CSVHeader()); err != nil {
			return err
		}
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}
