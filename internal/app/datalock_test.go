package app

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSecondServeRefuses: one server per data directory. A second `salience serve` (a
// separate process, the real binary) on a directory a server holds exits at start with an
// error naming the lock file, while `salience metrics`, which only reads, still runs beside
// the server; once the first server stops, the directory serves again.
func TestSecondServeRefuses(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	s := startServer(t, dir)
	s.ingest("lock", `{"kind":"fact","content":"Only one lighthouse keeper at a time."}`, "")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", dir)
	cmd.Env = append(os.Environ(), "SALIENCE_KEYS=")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the second serve kept running: %s", out)
	}
	if err == nil || !strings.Contains(string(out), lockPath(dir)) || !strings.Contains(string(out), "one server per data directory") {
		t.Fatalf("second serve: %v\n%s\nwant a refusal naming %s", err, out, lockPath(dir))
	}

	var mout, merr bytes.Buffer
	cli := NewMain()
	cli.Stdout, cli.Stderr = &mout, &merr
	if err := cli.ParseFlags(context.Background(), []string{"metrics", "--data", dir, "--ns", "lock"}); err != nil {
		t.Fatal(err)
	}
	if err := cli.Run(context.Background()); err != nil {
		t.Errorf("metrics beside the server: %v\n%s", err, merr.String())
	}

	if err := s.m.Close(); err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, bin, dir) // the lock went with the first server
	if p.base == "" {
		t.Fatal("no server after the first stopped")
	}
}
