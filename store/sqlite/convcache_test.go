package sqlite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/salience-ai/salience/models"
)

// fullState is a conversation state at its bounds: twenty turns of ten 26-character memory
// ids, three turns of five concepts, eight topics, five message times.
func fullState(ns, id string, turn int) *models.ConversationState {
	st := &models.ConversationState{Namespace: ns, ConversationID: id, Type: models.ConvCasual, Turns: turn}
	for t := range 20 {
		var ids []string
		for i := range 10 {
			ids = append(ids, fmt.Sprintf("01JB%012d%010d", t+turn, i))
		}
		st.RecentSurfaced = append(st.RecentSurfaced, ids)
	}
	for range 3 {
		st.RecentTurns = append(st.RecentTurns, []string{"hiking", "trail", "boots", "weather", "camp"})
	}
	for i := range 8 {
		st.RecentTopics = append(st.RecentTopics, fmt.Sprintf("topic-%d", i))
	}
	for i := range 5 {
		st.MessageTimes = append(st.MessageTimes, time.Unix(int64(1_700_000_000+i), 0).UTC())
	}
	return st
}

func TestStateBytesOfAFullState(t *testing.T) {
	// convCacheBytes's comment counts on about 10 KB a full-length state.
	if n := stateBytes(fullState("ns", "conv-1", 1)); n < 9_000 || n > 12_000 {
		t.Errorf("stateBytes of a full state = %d, want about 10 KB", n)
	}
	small := &models.ConversationState{Namespace: "ns", ConversationID: "c"}
	if n, full := stateBytes(small), stateBytes(fullState("ns", "c", 1)); n >= full/10 {
		t.Errorf("stateBytes of an empty state = %d, of a full one %d; want far less", n, full)
	}
}

func TestConvCacheStaysWithinItsBudget(t *testing.T) {
	one := stateBytes(fullState("ns", "conv-0000", 1))
	cc := convCache{budget: 20 * one}
	for i := range 1000 {
		cc.put(fullState("ns", fmt.Sprintf("conv-%04d", i), 1))
		if _, b := cc.size(); b > cc.budget+one {
			t.Fatalf("after %d puts the cache holds %d bytes, budget %d", i+1, b, cc.budget)
		}
	}
	n, _ := cc.size()
	if n < 10 || n > 21 {
		t.Errorf("the cache holds %d states of a budget of 20; want between the last half and all 20", n)
	}
	// The latest ones are there, the first ones gone.
	if cc.get("ns", "conv-0999") == nil || cc.get("ns", "conv-0990") == nil {
		t.Error("the latest conversations are not cached")
	}
	if cc.get("ns", "conv-0000") != nil {
		t.Error("the first conversation is still cached after 1,000 others")
	}
}

func TestConvCacheKeepsWhatIsUsed(t *testing.T) {
	one := stateBytes(fullState("ns", "conv-0000", 1))
	cc := convCache{budget: 10 * one}
	cc.put(fullState("ns", "hot", 1))
	for i := range 500 {
		cc.put(fullState("ns", fmt.Sprintf("conv-%04d", i), 1))
		if i%3 == 0 {
			if cc.get("ns", "hot") == nil {
				t.Fatalf("the conversation read every third turn was evicted after %d others", i+1)
			}
		}
	}
	// Another namespace's conversation of the same id is another entry.
	if cc.get("other", "hot") != nil {
		t.Error("a conversation of namespace ns answered for namespace other")
	}
}

func TestConvCacheGivesTheNewestStateAndCopies(t *testing.T) {
	one := stateBytes(fullState("ns", "c", 1))
	cc := convCache{budget: 4 * one}
	cc.put(fullState("ns", "c", 1))
	cc.put(fullState("ns", "x", 1)) // turns the generations over: "c" is in the older one
	cc.put(fullState("ns", "c", 2)) // a newer state replaces the older generation's
	got := cc.get("ns", "c")
	if got == nil || got.Turns != 2 {
		t.Fatalf("get = %+v, want the state of turn 2", got)
	}
	if n, b := cc.size(); n != 2 || b != stateBytes(fullState("ns", "c", 2))+stateBytes(fullState("ns", "x", 1)) {
		t.Errorf("size = %d states, %d bytes; want 2 states and their bytes counted once", n, b)
	}
	// What get returns and what put was given are the caller's to change.
	got.RecentSurfaced[0][0] = "changed"
	in := fullState("ns", "d", 1)
	cc.put(in)
	in.RecentTurns[0][0] = "changed"
	if c := cc.get("ns", "c"); c.RecentSurfaced[0][0] == "changed" {
		t.Error("changing a returned state changed the cache")
	}
	if d := cc.get("ns", "d"); d == nil || slices.Contains(d.RecentTurns[0], "changed") {
		t.Error("changing a stored state changed the cache")
	}
}

func TestConvCacheDropsIdleConversations(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	cc := convCache{now: func() time.Time { return now }}
	cc.put(fullState("ns", "a", 1))
	now = t0.Add(16 * time.Minute) // a generation's age: the states so far become the older one
	cc.put(fullState("ns", "b", 1))
	now = t0.Add(17 * time.Minute)
	if cc.get("ns", "a") == nil { // used: back in the newer generation
		t.Fatal("conversation a dropped after 17 minutes")
	}
	now = t0.Add(32 * time.Minute)
	cc.put(fullState("ns", "c", 1))
	if cc.get("ns", "b") != nil {
		t.Error("conversation b, idle since minute 16, is still cached at minute 32")
	}
	if cc.get("ns", "a") == nil || cc.get("ns", "c") == nil {
		t.Error("conversations a and c, used at minutes 17 and 32, are not cached")
	}
	if n, _ := cc.size(); n != 2 {
		t.Errorf("the cache holds %d states, want 2", n)
	}
}
