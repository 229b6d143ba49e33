// Command salience is the Salience server and its operator commands: serve (the default),
// metrics, relearn, mcp, report, reembed and version. `salience -h` lists them; the program
// is package internal/app. The developer tools are cmd/salience-bench.
package main

import (
	"os"

	"github.com/salience-ai/salience/internal/app"
)

func main() { os.Exit(app.Execute()) }
