package eval_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/salience-ai/salience/embed"
	"github.com/salience-ai/salience/engagement"
	"github.com/salience-ai/salience/eval"
	"github.com/salience-ai/salience/ingest"
	"github.com/salience-ai/salience/recall"
	"github.com/salience-ai/salience/store/sqlite"
)

// tiny is a conversation in LoCoMo's format: two sessions, an image caption, and questions
// of every kind (category 5 has no evidence and is not scored).
const tiny = `{
  "speaker_a": "Ana", "speaker_b": "Ben",
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
    {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten called Pebble last week."},
    {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! Does Pebble like the garden?"},
    {"speaker": "Ana", "dia_id": "D1:3", "text": "She sleeps under the lavender all day.", "blip_caption": "a photo of a cat in a flower bed"}
  ],
  "session_2_date_time": "10:37 am on 27 June, 2023",
  "session_2": [
    {"speaker": "Ben", "dia_id": "D2:1", "text": "I finally ran the Lisbon half marathon."},
    {"speaker": "Ana", "dia_id": "D2:2", "text": "What was your time?"},
    {"speaker": "Ben", "dia_id": "D2:3", "text": "One hour fifty, slower than I hoped."}
  ],
  "qa": [
    {"question": "What is the name of Ana's kitten?", "answer": "Pebble", "evidence": ["D1:1"], "category": 4},
    {"question": "Where does Pebble sleep?", "answer": "under the lavender", "evidence": ["D1:3"], "category": 4},
    {"question": "Which half marathon did Ben run and how fast?", "answer": "Lisbon, 1:50", "evidence": ["D2:1", "D2:3"], "category": 1},
    {"question": "What did Ana adopt?", "answer": "n/a", "category": 5}
  ]
}`

func TestParse(t *testing.T) {
	c, err := eval.Parse([]byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	if c.SpeakerA != "Ana" || len(c.Sessions) != 2 || len(c.Sessions[0].Turns) != 3 || len(c.QA) != 4 {
		t.Fatalf("parsed %+v", c)
	}
	if want := time.Date(2023, 6, 27, 10, 37, 0, 0, time.UTC); !c.Last().Equal(want) {
		t.Fatalf("Last() = %v, want %v", c.Last(), want)
	}
	if got := c.Sessions[0].Turns[2].Content(); got != "Ana: She sleeps under the lavender all day. [shared an image: a photo of a cat in a flower bed]" {
		t.Fatalf("content = %q", got)
	}
	if eval.Evaluable(c.QA[3]) || !eval.Evaluable(c.QA[0]) {
		t.Fatal("category 5 must not be scored, category 4 must")
	}
	for _, bad := range []string{`{`, `{"speaker_a": "x"}`, `{"speaker_a":"x","session_1":[],"session_1_date_time":"yesterday"}`} {
		if _, err := eval.Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestScores(t *testing.T) {
	s := &eval.Scores{Recall: map[int]float64{}}
	s.Add([]string{"a", "x", "y", "z", "w", "b"}, []string{"a", "b"}) // a at 1, b at 6
	s.Add([]string{"x"}, []string{"q"})
	if got := s.Mean(5); math.Abs(got-0.25) > 1e-12 { // (1/2 + 0) / 2
		t.Errorf("recall@5 = %v, want 0.25", got)
	}
	if got := s.Mean(10); math.Abs(got-0.5) > 1e-12 { // (2/2 + 0) / 2
		t.Errorf("recall@10 = %v, want 0.5", got)
	}
	if got := s.HitRate(); got != 0.5 {
		t.Errorf("hit@10 = %v, want 0.5", got)
	}
}

func engine(t *testing.T, name string) eval.Engine {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), name+".db"), sqlite.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	emb := embed.NewLocal(0)
	return eval.Engine{Ingest: ingest.New(st, emb), Recall: recall.New(st, emb, recall.Options{}),
		Engagement: engagement.NewService(st, engagement.ServiceOptions{})}
}

// TestRunOnADirectory runs the whole evaluation over a directory in the format, as
// `salience eval locomo --data DIR` does, and checks the table and the JSON line.
func TestRunOnADirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tiny.json"), []byte(tiny), 0o644); err != nil {
		t.Fatal(err)
	}
	convs, err := eval.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := engine(t, "run")
	rep, err := eval.Run(context.Background(), e.Ingest, e.Recall, convs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overall.N != 3 || rep.Memories != 6 {
		t.Fatalf("scored %d questions over %d memories, want 3 over 6", rep.Overall.N, rep.Memories)
	}
	if got := rep.Overall.Mean(5); got != 1 {
		t.Errorf("recall@5 on an easy conversation = %v, want 1", got)
	}
	var out bytes.Buffer
	rep.Print(&out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"recall@5":1.0000,"recall@10":1.0000,`) {
		t.Errorf("last line = %q", last)
	}
	if _, err := eval.LoadDir(t.TempDir()); err == nil {
		t.Error("LoadDir of an empty directory succeeded")
	}
}

// TestHeld pins the split of questions into replayed and held back to known values: the
// FNV-1a hash of "name\x00i\x00question", odd means held, computed by hand (Python) for the
// tiny conversation under two names. (FNV-1a's low bit is the parity of the odd bytes of its
// input, so here a name decides all three questions at once.)
func TestHeld(t *testing.T) {
	c, err := eval.Parse([]byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct {
		name string
		want [4]bool
	}{{"tiny", [4]bool{false, false, false, false}}, {"mini", [4]bool{true, true, true, true}}} {
		c.Name = k.name
		for i, q := range c.QA {
			if got := eval.Held(c, i, q); got != k.want[i] {
				t.Errorf("Held(%s, %d) = %v, want %v", k.name, i, got, k.want[i])
			}
		}
	}
}

// TestLearnReportsBothSides replays the tiny conversation as "tiny" (its three evaluable
// questions all replayed, TestHeld) and scores it as "mini" (all three held back).
func TestLearnReportsBothSides(t *testing.T) {
	var convs []*eval.Conversation
	for _, name := range []string{"tiny", "mini"} {
		c, err := eval.Parse([]byte(tiny))
		if err != nil {
			t.Fatal(err)
		}
		c.Name = name
		convs = append(convs, c)
	}
	rep, err := eval.Learn(context.Background(), engine(t, "a"), engine(t, "b"), convs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.With.N != 3 || rep.Without.N != 3 || rep.Replayed != 3 {
		t.Fatalf("held back %d/%d, replayed %d; want 3 held, 3 replayed", rep.With.N, rep.Without.N, rep.Replayed)
	}
	if rep.Replayed > 0 && rep.Events == 0 {
		t.Fatal("the replay reported no engagement")
	}
	var out bytes.Buffer
	rep.Print(&out)
	if !strings.Contains(out.String(), `"recall@10_without":`) || !strings.Contains(out.String(), eval.LearnPolicy) {
		t.Fatalf("report = %s", out.String())
	}
}
