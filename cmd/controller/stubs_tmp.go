package main

import (
	"errors"
	"io"
)

var errNodeNotBuilt = errors.New("not available in this build yet (the node wiring is being added)")

func runStart(args []string, stdout, stderr io.Writer) error      { return errNodeNotBuilt }
func runTestServer(args []string, stdout, stderr io.Writer) error { return errNodeNotBuilt }
