package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/salience-ai/salience/client"
	salmcp "github.com/salience-ai/salience/mcp"
)

// Defaults of `salience mcp`.
const (
	defaultMCPURL = "http://" + DefaultAddr
	// envAPIKey is where `salience mcp` reads its key when --key is not given: a secret is
	// better kept out of an agent's command line, which other processes can read.
	envAPIKey = "SALIENCE_API_KEY"
)

// runMCP runs `salience mcp`: the MCP tools of one namespace over stdio, for desktop agents
// that start a tool server as a subprocess. It is a bridge: the tools call a running server
// through the Go client, with its key, and never open a database, so one server (and its
// keys and grants) stays the only way to the memories.
func runMCP(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer, getenv func(string) string) error {
	fs := flag.NewFlagSet("salience mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ns := fs.String("ns", "", "namespace the tools act on (required)")
	server := fs.String("server", "", "base URL of the Salience server (env SALIENCE_URL; default "+defaultMCPURL+")")
	// --url was this flag's name before every command that talks to a server took --server.
	fs.StringVar(server, "url", "", "deprecated: --server")
	key := fs.String("key", "", "API key (env "+envAPIKey+"; none when the server runs without keys)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: salience mcp --ns NS [--server URL] [--key KEY]\n\nServes the MCP tools of namespace NS over stdin/stdout, calling the server at URL.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("mcp: unexpected arguments %q", fs.Args())
	}
	if *ns == "" {
		fs.Usage()
		return errors.New("mcp: --ns is required")
	}
	base := firstOf(*server, getenv("SALIENCE_URL"), defaultMCPURL)
	c, err := client.New(base, client.WithKey(firstOf(*key, getenv(envAPIKey))), client.WithUserAgent("salience-mcp/"+buildVersion()))
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	// stdout carries the protocol: anything else goes to stderr, which agents log.
	fmt.Fprintf(stderr, "salience mcp: namespace %q on %s\n", *ns, base)
	s := salmcp.NewServer(c.Namespace(*ns), salmcp.Options{Version: buildVersion()})
	err = s.Run(ctx, salmcp.NewStdioTransport(stdin, stdout))
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// nopCloser keeps the MCP transport from closing the process's stdout.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
