package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/salience-ai/salience/client"
	"github.com/salience-ai/salience/experiment"
)

// runReport runs `salience report experiment ID`: the report's tables in a terminal. Like
// `salience mcp` it asks a running server through the Go client (with its key), so the
// numbers are the server's, from whichever store it runs on; the tables are
// experiment.WriteText over the JSON report.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) == 0 || args[0] != "experiment" {
		fmt.Fprintln(stderr, "usage: salience report experiment ID --ns NS [--server URL] [--key KEY] [--as-of YYYY-MM-DD] [--json]")
		return errors.New("report: what to report? (salience report experiment ID)")
	}
	fs := flag.NewFlagSet("salience report experiment", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ns := fs.String("ns", "", "namespace of the experiment (required)")
	server := fs.String("server", "", "base URL of the Salience server (env SALIENCE_URL; default "+defaultMCPURL+")")
	key := fs.String("key", "", "API key (env "+envAPIKey+"); an admin key granted the namespace, or one granted it under --settings-writers namespace")
	asOf := fs.String("as-of", "", "read the daily snapshot nearest at or before this date (YYYY-MM-DD) instead of now")
	asJSON := fs.Bool("json", false, "print the JSON report instead of tables")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: salience report experiment ID --ns NS [--server URL] [--key KEY] [--as-of YYYY-MM-DD] [--json]")
		fs.PrintDefaults()
	}
	// The id may come before or after the flags.
	rest := args[1:]
	var id string
	if len(rest) > 0 && !isFlag(rest[0]) {
		id, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if id == "" && fs.NArg() > 0 {
		id = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("report: unexpected arguments %q", fs.Args())
	}
	if id == "" || *ns == "" {
		fs.Usage()
		return errors.New("report: the experiment id and --ns are required")
	}
	var o client.ReportOptions
	if *asOf != "" {
		d, err := time.Parse(time.DateOnly, *asOf)
		if err != nil {
			return fmt.Errorf("report: --as-of must be a date such as 2026-05-01, not %q", *asOf)
		}
		o.AsOf = d
	}
	c, err := client.New(firstOf(*server, getenv("SALIENCE_URL"), defaultMCPURL), client.WithKey(firstOf(*key, getenv(envAPIKey))),
		client.WithUserAgent("salience-report/"+buildVersion()))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	raw, err := c.Namespace(*ns).ExperimentReport(ctx, id, o)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if *asJSON {
		_, err := stdout.Write(raw)
		return err
	}
	var r experiment.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("report: the server's report: %w", err)
	}
	return experiment.WriteText(stdout, r)
}
