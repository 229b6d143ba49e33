package main

import (
	"context"
	"errors"
	"io"
)

// runBench runs `salience bench …`. Owned by the recall work; replaced there.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return errors.New("bench: not implemented yet")
}
