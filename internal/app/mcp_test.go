package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/salience-ai/salience/internal/mcptest"
)

// startMCP runs `salience mcp` in process with args, its stdin and stdout connected by
// pipes to an MCP client session, and stops it when the test ends.
func startMCP(t *testing.T, args []string, env map[string]string) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()   // client → bridge
	outR, outW := io.Pipe() // bridge → client
	stderr := &syncBuffer{}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		done <- runMCP(ctx, args, inR, outW, stderr, func(k string) string { return env[k] })
		outW.Close()
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop-agent", Version: "v0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connecting to salience mcp: %v\n%s", err, stderr)
	}
	t.Cleanup(func() {
		s.Close()
		inW.Close() // EOF on the bridge's stdin ends it, as when an agent quits
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("salience mcp: %v\n%s", err, stderr)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("salience mcp did not stop at the end of its input\n%s", stderr)
		}
		cancel()
	})
	return s
}

// TestMCPOverStdio runs every tool through `salience mcp` against a running `salience serve`.
func TestMCPOverStdio(t *testing.T) {
	srv := startServer(t, "")
	s := startMCP(t, []string{"--ns", "desk"}, map[string]string{"SALIENCE_URL": srv.base})
	mcptest.Exercise(t, s)
	// The bridge wrote through the server: the memories are in its namespace.
	if got := srv.list("desk", "", ""); got.Total != 2 {
		t.Errorf("namespace desk holds %d memories, want the 2 remembered", got.Total)
	}
}

// TestMCPOverStdioWithKeys: the bridge uses its key (from the environment) and the key's
// grants hold.
func TestMCPOverStdioWithKeys(t *testing.T) {
	srv := startWithKeys(t)
	a := startMCP(t, []string{"--ns", "a", "--server", srv.base}, map[string]string{"SALIENCE_API_KEY": keyA})
	mcptest.OK(t, a, "remember", map[string]any{"content": "Tenant a prefers tea."}, nil)
	if got := srv.list("a", "", keyA); got.Total != 1 {
		t.Errorf("namespace a holds %d memories, want 1", got.Total)
	}
	// Key A pointed at namespace b: every tool fails with the server's refusal, and nothing
	// crashes.
	b := startMCP(t, []string{"--ns", "b", "--server", srv.base}, map[string]string{"SALIENCE_API_KEY": keyA})
	mcptest.Fails(t, b, "remember", map[string]any{"content": "sneaky"}, "forbidden")
	mcptest.Fails(t, b, "ambient_recall", map[string]any{"message": "tea"}, "forbidden")
	// No key at all.
	none := startMCP(t, []string{"--ns", "a", "--server", srv.base}, nil)
	mcptest.Fails(t, none, "search_memories", map[string]any{"query": "tea"}, "unauthorized")
}

// TestMCPServerDown: tools fail as tool errors when the server is not there.
func TestMCPServerDown(t *testing.T) {
	s := startMCP(t, []string{"--ns", "a", "--server", "http://127.0.0.1:1"}, nil)
	mcptest.Fails(t, s, "read_full_memory", map[string]any{"id": "m1"}, "could not be reached")
}

func TestMCPFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "--ns is required"},
		{[]string{"--ns", "a", "extra"}, "unexpected arguments"},
		{[]string{"--ns", "a", "--server", "ftp://127.0.0.1:7700"}, "must be http:// or https://"},
		{[]string{"--ns", "a", "--url", "ftp://127.0.0.1:7700"}, "must be http:// or https://"}, // the deprecated name
		{[]string{"--bogus"}, "flag provided but not defined"},
	}
	for _, c := range cases {
		err := runMCP(context.Background(), c.args, io.NopCloser(strings.NewReader("")), nopCloser{io.Discard}, io.Discard, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("salience mcp %q = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// TestMCPBinary runs the built binary as a desktop agent does: a subprocess speaking MCP on
// its stdin and stdout.
func TestMCPBinary(t *testing.T) {
	bin := binary(t)
	srv := startServer(t, "")
	cmd := exec.Command(bin, "mcp", "--ns", "bin")
	cmd.Env = append(os.Environ(), "SALIENCE_URL="+srv.base, "SALIENCE_API_KEY=")
	cmd.Stderr = &syncBuffer{}
	c := mcp.NewClient(&mcp.Implementation{Name: "desktop-agent", Version: "v0"}, nil)
	s, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting salience mcp: %v\n%s", err, cmd.Stderr)
	}
	defer s.Close()
	var mem struct{ ID string }
	mcptest.OK(t, s, "remember", map[string]any{"content": "The build server is called Hopper."}, &mem)
	var amb mcptest.Recall
	mcptest.OK(t, s, "ambient_recall", map[string]any{"message": "what is the build server called?", "conversation_id": "c1"}, &amb)
	if len(amb.Memories) == 0 || amb.Memories[0].MemoryID != mem.ID {
		t.Errorf("ambient_recall = %+v, want %s", amb, mem.ID)
	}
	if err := s.Close(); err != nil {
		t.Errorf("closing: %v\n%s", err, cmd.Stderr)
	}
	if !strings.Contains(fmt.Sprint(cmd.Stderr), `namespace "bin"`) {
		t.Errorf("stderr = %q, want the bridge's banner", cmd.Stderr)
	}
}

// TestMCPStdioAnswersEveryRequestBeforeEOF: an agent that writes its requests and closes
// stdin straight after (a script piping a file) gets an answer to every one before exit.
func TestMCPStdioAnswersEveryRequestBeforeEOF(t *testing.T) {
	srv := startServer(t, "")
	const n = 8
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"v0"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_memories","arguments":{"query":"tea %d"}}}`+"\n", i, i)
	}
	out := &syncBuffer{}
	stderr := &syncBuffer{}
	err := runMCP(context.Background(), []string{"--ns", "pipe", "--server", srv.base}, io.NopCloser(strings.NewReader(in.String())), nopCloser{out}, stderr, func(string) string { return "" })
	if err != nil {
		t.Fatalf("salience mcp: %v\n%s", err, stderr)
	}
	answered := map[int]bool{}
	dec := json.NewDecoder(strings.NewReader(out.String()))
	for dec.More() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			t.Fatalf("stdout is not JSON lines: %v\n%s", err, out)
		}
		if msg.ID != nil && msg.Result != nil {
			answered[*msg.ID] = true
		}
	}
	for i := 0; i <= n; i++ {
		if !answered[i] {
			t.Errorf("request %d has no result on stdout", i)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
}
