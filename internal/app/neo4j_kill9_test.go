package app

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/salience-ai/salience/api"
)

// TestNeo4jKill9KeepsSurfacings: a surfacing id a recall on the Neo4j store returned is in
// the database for good. Engagement reporting it is applied by another server after a kill -9
// of the one that answered the recall, and by the same server after a kill -9 of Neo4j, once
// Neo4j is back (the test starts a Neo4j of its own for that, with scripts/neo4j's Launcher,
// on the same data directory and port).
//
// It needs SALIENCE_NEO4J_URI (make test-neo4j, which also leaves the Launcher's class path in
// scripts/neo4j/target) and deletes everything in that database.
func TestNeo4jKill9KeepsSurfacings(t *testing.T) {
	uri := os.Getenv("SALIENCE_NEO4J_URI")
	if uri == "" {
		t.Skip("Neo4j kill -9 test skipped: SALIENCE_NEO4J_URI is not set; run `make test-neo4j`")
	}
	bin := binary(t)
	const ns = "kill9"
	ingestAndRecall := func(p *replica) []string {
		var created api.CreateMemoriesResponse
		p.post(t, "/v1/namespaces/"+ns+"/memories", `{"memories": [
			{"kind": "fact", "content": "The lighthouse keeper on Skerry Island feeds the gulls at dawn."},
			{"kind": "fact", "content": "Marta bakes rye bread with caraway every Sunday."}]}`, http.StatusCreated, &created)
		var ids []string
		for i := range 3 {
			var out api.RecallResponse
			p.post(t, "/v1/namespaces/"+ns+"/recall", fmt.Sprintf(`{"conversation_id": "c-%d", "mode": "search", "query": "who feeds the gulls?"}`, i),
				http.StatusOK, &out)
			if len(out.Results) == 0 || out.Results[0].SurfacingID == "" {
				t.Fatalf("recall %d: no surfacing: %+v", i, out)
			}
			ids = append(ids, out.Results[0].SurfacingID)
		}
		return ids
	}
	// report posts a used event for each surfacing id, until the server answers (Neo4j may
	// still be recovering), and wants each applied: the surfacing was there.
	report := func(p *replica, ids []string, prefix string) {
		t.Helper()
		for i, sid := range ids {
			body := fmt.Sprintf(`{"events": [{"id": "%s-%d", "surfacing_id": %q, "type": "used"}]}`, prefix, i, sid)
			var out api.EngagementResponse
			for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				res, err := http.Post(p.base+"/v1/namespaces/"+ns+"/engagement", "application/json", strings.NewReader(body))
				if err == nil {
					ok := res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(&out) == nil
					res.Body.Close()
					if ok {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("engagement for surfacing %s not answered: %v\n%s", sid, err, p.logs)
				}
			}
			if len(out.Results) != 1 || out.Results[0].Status != "applied" {
				t.Fatalf("event for surfacing %s: %+v, want it applied", sid, out.Results)
			}
		}
	}

	t.Run("Server", func(t *testing.T) {
		wipeNeo4j(t, uri)
		flags := []string{"--store", "neo4j", "--neo4j-uri", uri}
		a := startReplica(t, bin, flags...)
		ids := ingestAndRecall(a)
		if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		a.cmd.Wait()
		report(startReplica(t, bin, flags...), ids, "server")
	})

	t.Run("Neo4j", func(t *testing.T) {
		cp, err := os.ReadFile(filepath.Join("..", "..", "scripts", "neo4j", "target", "classpath.txt"))
		if err != nil {
			t.Fatalf("the Launcher's class path (make test-neo4j writes it): %v", err)
		}
		home, port := t.TempDir(), freePort(t)
		db := startNeo4j(t, strings.TrimSpace(string(cp)), home, port)
		p := startReplica(t, bin, "--store", "neo4j", "--neo4j-uri", fmt.Sprintf("bolt://127.0.0.1:%d", port))
		ids := ingestAndRecall(p)
		if err := db.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		db.Wait()
		startNeo4j(t, strings.TrimSpace(string(cp)), home, port)
		report(p, ids, "neo4j")
	})
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNeo4j runs scripts/neo4j/Launcher.java on home and port and waits until it accepts
// Bolt connections; the test's end stops it.
func startNeo4j(t *testing.T, classpath, home string, port int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("java", "-Xmx512m", "-cp", classpath, filepath.Join("..", "..", "scripts", "neo4j", "Launcher.java"),
		filepath.Join(home, "dbms"), fmt.Sprint(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		}
	})
	up := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "BOLT_PORT=") {
				up <- true
			}
		}
		close(up)
	}()
	select {
	case ok := <-up:
		if !ok {
			t.Fatalf("Neo4j exited before it was up:\n%s", logs)
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("Neo4j did not come up within 3 minutes:\n%s", logs)
	}
	return cmd
}
