package predict

import (
	"reflect"
	"testing"
	"time"
)

func TestBuild(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	min := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Minute) }
	turns := []Turn{
		// c1, given out of order: [k8s deploy] → [helm] → [rollback].
		{ConversationID: "c1", TurnID: "t3", At: min(3), Concepts: []string{"rollback"}},
		{ConversationID: "c1", TurnID: "t1", At: min(1), Concepts: []string{"k8s", "deploy"}},
		{ConversationID: "c2", TurnID: "a2", At: min(5), Concepts: []string{"helm"}},
		{ConversationID: "c1", TurnID: "t2", At: min(2), Concepts: []string{"helm"}},
		// c2: the same time, so the turn ids order them: [k8s] → [helm].
		{ConversationID: "c2", TurnID: "a1", At: min(5), Concepts: []string{"k8s"}},
		// No conversation: cannot be placed, skipped.
		{TurnID: "x", At: min(4), Concepts: []string{"k8s", "helm"}},
	}
	uses := []Use{
		{MemoryID: "m1", ConversationID: "c1", TurnID: "t3"}, // after [k8s deploy] [helm]
		{MemoryID: "m1", ConversationID: "c2", TurnID: "a2"}, // after [k8s]
		{MemoryID: "m2", ConversationID: "c1", TurnID: "t1"}, // first turn: no history
		{MemoryID: "m3", ConversationID: "c1", TurnID: "nope"},
		{MemoryID: "m3", ConversationID: "c9", TurnID: "t1"},
	}
	tr, us := Build(turns, uses)
	if tr.Turns != 5 {
		t.Errorf("turns = %v, want 5 (the one without a conversation skipped)", tr.Turns)
	}
	wantFollow := map[string]map[string]float64{
		"k8s":    {"helm": 2, "rollback": 1},
		"deploy": {"helm": 1, "rollback": 1},
		"helm":   {"rollback": 1},
	}
	if !reflect.DeepEqual(tr.Follow, wantFollow) {
		t.Errorf("follow = %v, want %v", tr.Follow, wantFollow)
	}
	if want := map[string]float64{"k8s": 2, "deploy": 1, "helm": 2, "rollback": 1}; !reflect.DeepEqual(tr.Seen, want) {
		t.Errorf("seen = %v, want %v", tr.Seen, want)
	}
	m1 := us.Memories["m1"]
	if m1 == nil || m1.Uses != 2 {
		t.Fatalf("m1 = %+v, want 2 uses", m1)
	}
	wantBefore := map[string]*ConceptUsage{
		"k8s":    {Count: 2, LeadSum: 3}, // lead 2 in c1, 1 in c2
		"deploy": {Count: 1, LeadSum: 2},
		"helm":   {Count: 1, LeadSum: 1},
	}
	if !reflect.DeepEqual(m1.Before, wantBefore) {
		t.Errorf("m1 before = %+v, want %+v", m1.Before, wantBefore)
	}
	if got := us.Triggers("m1", MinPatternShare); !reflect.DeepEqual(got, []string{"k8s"}) {
		t.Errorf("m1 triggers = %v, want [k8s]", got)
	}
	if got := us.Lead("m1", MinPatternShare); got != 1.5 {
		t.Errorf("m1 lead = %v, want 1.5", got)
	}
	if m2 := us.Memories["m2"]; m2 == nil || m2.Uses != 1 || len(m2.Before) != 0 {
		t.Errorf("m2 = %+v, want one use with nothing before it", m2)
	}
	if _, ok := us.Memories["m3"]; ok {
		t.Error("m3's uses are of turns not in the log, yet recorded")
	}
	// The same log in another order builds the same models.
	rev := make([]Turn, len(turns))
	for i, tn := range turns {
		rev[len(turns)-1-i] = tn
	}
	tr2, us2 := Build(rev, uses)
	if !reflect.DeepEqual(tr, tr2) || !reflect.DeepEqual(us, us2) {
		t.Error("the models depend on the log's order")
	}
	// Empty log: empty models that predict nothing.
	tr3, us3 := Build(nil, nil)
	if tr3.Turns != 0 || len(us3.Memories) != 0 || len(tr3.Predict([]string{"k8s"}, 0)) != 0 {
		t.Errorf("empty log built %+v, %+v", tr3, us3)
	}
}
