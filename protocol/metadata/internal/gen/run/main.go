// Command run regenerates protocol/metadata's record code from its schemas
// (go generate ./protocol/metadata, run in that directory).
package main

import (
	"fmt"
	"os"

	"github.com/kraftd/kraftd/protocol/metadata/internal/gen"
)

func main() {
	if err := gen.WriteDir("."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
