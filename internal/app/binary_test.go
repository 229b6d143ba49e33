package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests build the real binary and run it as a user would.

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds cmd/salience (the server binary) once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "salience-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "salience")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/salience-ai/salience/cmd/salience").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

var listeningRE = regexp.MustCompile(`listening on (\S+)`)

// process is a running salience binary.
type process struct {
	cmd  *exec.Cmd
	base string
	logs *syncBuffer
}

// startBinary runs `salience serve` on dataDir and port 0, reads the address it logs, and
// waits for /readyz.
func startBinary(t *testing.T, bin, dataDir string) *process {
	t.Helper()
	return startServe(t, bin, 30*time.Second, "--data", dataDir)
}

// startServe runs `salience serve` on port 0 with flags, reads the address it logs, and
// waits up to wait for it and for /readyz. A process still running at cleanup gets SIGTERM
// and is waited for; its log is printed when the test failed.
func startServe(t *testing.T, bin string, wait time.Duration, flags ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	cmd.Env = append(os.Environ(), "SALIENCE_KEYS=") // never pick up a developer's keys
	p := &process{cmd: cmd, logs: &syncBuffer{}}
	addr := make(chan string, 1)
	// An io.Writer rather than a pipe: Wait then returns only after all output is copied.
	cmd.Stdout = &addrWriter{buf: p.logs, addr: addr}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("salience serve %s log:\n%s", p.base, p.logs)
		}
	})
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-time.After(wait):
		t.Fatalf("salience serve did not report its address\n%s", p.logs)
	}
	deadline := time.Now().Add(wait)
	for {
		res, err := http.Get(p.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("salience serve is not ready\n%s", p.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBinaryRefusesOpenAddressWithoutKeys is the user's view of the loopback rule: the
// process exits non-zero at once and says why.
func TestBinaryRefusesOpenAddressWithoutKeys(t *testing.T) {
	bin := binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "0.0.0.0:0", "--data", t.TempDir())
	cmd.Env = append(os.Environ(), "SALIENCE_KEYS=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage {
		t.Fatalf("exit = %v, want code %d\n%s", err, exitUsage, out)
	}
	for _, want := range []string{"loopback", "--keys", "0.0.0.0:0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q: %s", want, out)
		}
	}
}

// TestBinaryShutsDownOnSIGTERM checks the graceful path of the real process.
func TestBinaryShutsDownOnSIGTERM(t *testing.T) {
	bin := binary(t)
	p := startBinary(t, bin, t.TempDir())
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20 s after SIGTERM")
	}
	time.Sleep(50 * time.Millisecond) // let the log reader drain
	if !strings.Contains(p.logs.String(), "stopped") {
		t.Errorf("no orderly stop in the log:\n%s", p.logs)
	}
}

// addrWriter keeps the process's output and reports the first address it logs.
type addrWriter struct {
	buf   *syncBuffer
	addr  chan string
	found bool
}

func (w *addrWriter) Write(b []byte) (int, error) {
	n, err := w.buf.Write(b)
	if !w.found {
		if m := listeningRE.FindStringSubmatch(w.buf.String()); m != nil {
			w.found = true
			w.addr <- m[1]
		}
	}
	return n, err
}

// TestBinaryRefusesAnotherEmbeddersData is the user's view of the embedder check: over a
// namespace another model of the same size embedded, the process exits non-zero at once,
// naming both embedders.
func TestBinaryRefusesAnotherEmbeddersData(t *testing.T) {
	bin := binary(t)
	dir := t.TempDir()
	seedStore(t, dir, fakeStatic, "bees")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", dir)
	cmd.Env = append(os.Environ(), "SALIENCE_EMBEDDER=")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("exit = %v, want code %d\n%s", err, exitError, out)
	}
	for _, want := range []string{"static-fake-256-v1", "configured embedder is " + defaultEmbedder(t).Name(), "salience reembed --ns bees"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q: %s", want, out)
		}
	}
}
