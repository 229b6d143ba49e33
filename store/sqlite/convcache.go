package sqlite

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/salience-ai/salience/models"
)

// convCacheBytes bounds the conversation cache by the approximate size of the states it
// holds. A state that has reached its bounds (twenty turns of surfaced ids, three turns of
// concepts, a few topics and message times) takes about 10 KB, so the cache keeps the latest
// three thousand or so conversations of full length, and more of short ones. A state
// evicted is read from SQLite the next time its conversation has a turn (about 0.1 ms).
const convCacheBytes = 32 << 20

// convCacheAge is how long a generation of the conversation cache takes writes before it
// turns over: a state not used for convCacheAge to twice that is dropped, so the cache
// holds the conversations active in the last half hour or so, not every one since the
// start, and reaches its steady size within that time. A conversation that comes back
// after a longer pause reads its state from SQLite once.
const convCacheAge = 15 * time.Minute

// convCache holds conversation states, bounded by bytes, keeping the most recently used.
// It has two generations: every write and every hit goes to the newer one; when the newer
// holds half the budget or has taken writes for convCacheAge, the older is dropped and the
// newer takes its place. So whatever was used since the last turnover stays, the whole
// holds at most about the budget, and each operation is a map lookup or two, with no list
// to keep in order.
//
// Before, the cache held at most 10,000 states and was dropped whole when full: up to
// about 100 MB of full-length states, and after each drop every conversation missed at once.
type convCache struct {
	mu       sync.Mutex
	budget   int // bytes; 0 means convCacheBytes
	cur, old map[[2]string]*models.ConversationState
	curBytes int
	oldBytes int
	curSince time.Time        // when the newer generation took its first write
	now      func() time.Time // nil: time.Now
}

// put stores a copy of c, the conversation's newest state.
func (cc *convCache) put(c *models.ConversationState) {
	k := [2]string{c.Namespace, c.ConversationID}
	n := cloneConversation(c)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if o, ok := cc.old[k]; ok {
		delete(cc.old, k)
		cc.oldBytes -= stateBytes(o)
	}
	cc.insert(k, n)
}

// drop forgets these conversations (ns, id), as their states were deleted.
func (cc *convCache) drop(keys [][2]string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for _, k := range keys {
		if c, ok := cc.cur[k]; ok {
			delete(cc.cur, k)
			cc.curBytes -= stateBytes(c)
		}
		if c, ok := cc.old[k]; ok {
			delete(cc.old, k)
			cc.oldBytes -= stateBytes(c)
		}
	}
}

// dropNamespace forgets every conversation of ns, as the namespace was deleted.
func (cc *convCache) dropNamespace(ns string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for k, c := range cc.cur {
		if k[0] == ns {
			delete(cc.cur, k)
			cc.curBytes -= stateBytes(c)
		}
	}
	for k, c := range cc.old {
		if k[0] == ns {
			delete(cc.old, k)
			cc.oldBytes -= stateBytes(c)
		}
	}
}

// get returns a copy of the cached state of conversation id in ns, or nil.
func (cc *convCache) get(ns, id string) *models.ConversationState {
	k := [2]string{ns, id}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if c, ok := cc.cur[k]; ok {
		return cloneConversation(c)
	}
	c, ok := cc.old[k]
	if !ok {
		return nil
	}
	delete(cc.old, k)
	cc.oldBytes -= stateBytes(c)
	cc.insert(k, c)
	return cloneConversation(c)
}

// insert puts c under k in the newer generation, turning the generations over when it is
// full. Called with mu held; c is the cache's own copy.
func (cc *convCache) insert(k [2]string, c *models.ConversationState) {
	now := time.Now
	if cc.now != nil {
		now = cc.now
	}
	t := now()
	if cc.cur == nil {
		cc.cur, cc.curSince = make(map[[2]string]*models.ConversationState), t
	}
	if o, ok := cc.cur[k]; ok {
		cc.curBytes -= stateBytes(o)
	}
	cc.cur[k] = c
	cc.curBytes += stateBytes(c)
	budget := cc.budget
	if budget <= 0 {
		budget = convCacheBytes
	}
	if cc.curBytes >= budget/2 || t.Sub(cc.curSince) >= convCacheAge {
		cc.old, cc.oldBytes = cc.cur, cc.curBytes
		cc.cur, cc.curBytes, cc.curSince = make(map[[2]string]*models.ConversationState), 0, t
	}
}

// size returns how many states the cache holds and their approximate bytes.
func (cc *convCache) size() (n, bytes int) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.cur) + len(cc.old), cc.curBytes + cc.oldBytes
}

// stateBytes approximates the memory a cached state takes: the struct, its map entry, and
// every string and slice it holds, headers included. It counts each string's bytes as the
// state's own, though a surfaced memory's id usually shares them with the memory cache, so
// the cache tends to take less than it counts: never more.
func stateBytes(c *models.ConversationState) int {
	const str, slice, entry = 16, 24, 64
	n := entry + 2*str + int(unsafe.Sizeof(models.ConversationState{})) + len(c.Namespace) + len(c.ConversationID) + len(c.Type)
	for _, list := range [][]string{c.RecentTopics, c.Participants} {
		for _, s := range list {
			n += str + len(s)
		}
	}
	n += 24 * len(c.MessageTimes)
	for _, lists := range [][][]string{c.RecentSurfaced, c.RecentTurns} {
		for _, turn := range lists {
			n += slice
			for _, s := range turn {
				n += str + len(s)
			}
		}
	}
	return n
}

func cloneConversation(c *models.ConversationState) *models.ConversationState {
	n := *c
	n.RecentTopics = slices.Clone(c.RecentTopics)
	n.MessageTimes = slices.Clone(c.MessageTimes)
	n.Participants = slices.Clone(c.Participants)
	n.RecentSurfaced = nil
	for _, turn := range c.RecentSurfaced {
		n.RecentSurfaced = append(n.RecentSurfaced, slices.Clone(turn))
	}
	n.RecentTurns = nil
	for _, turn := range c.RecentTurns {
		n.RecentTurns = append(n.RecentTurns, slices.Clone(turn))
	}
	return &n
}
