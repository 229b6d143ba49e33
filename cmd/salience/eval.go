package main

import (
	"context"
	"errors"
	"io"
)

// runEval runs `salience eval …`. Owned by the recall work; replaced there.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("eval: not implemented yet")
}
