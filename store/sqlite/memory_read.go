package sqlite

import (
	"context"
	"strings"

	"github.com/salience-ai/salience/models"
)

// Reads of memories: from the in-memory cache once the indexes are loaded, from SQLite
// before (and for lists, which the cache does not order).

// GetMemory returns one memory or chunk; ENOTFOUND when missing.
func (s *Store) GetMemory(ctx context.Context, ns, id string) (*models.Memory, error) {
	return models.GetMemory(ctx, s.GetMemories, ns, id)
}

// GetMemories returns the memories and chunks with these ids in the order asked, skipping
// missing ones. Once the indexes are loaded it answers from memory without touching SQLite.
func (s *Store) GetMemories(ctx context.Context, ns string, ids []string) ([]*models.Memory, error) {
	return s.ViewMemories(ctx, ns, ids, true)
}

// ViewMemories is GetMemories for a reader (see models.Store): once the indexes are loaded
// it unpacks the cached memories (memindex.Space.View), and decodes vectors only when asked.
func (s *Store) ViewMemories(ctx context.Context, ns string, ids []string, vectors bool) ([]*models.Memory, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if s.ready.Load() {
		sp, err := s.space(ctx, ns)
		if err != nil {
			return nil, err
		}
		return sp.View(ids, vectors), nil
	}
	ms, err := s.sqlMemories(ctx, ns, ids)
	if err != nil {
		return nil, err
	}
	if !vectors {
		for _, m := range ms {
			m.Embedding = nil
		}
	}
	return ms, nil
}

// sqlMemories reads memories from SQLite, in the order of ids.
func (s *Store) sqlMemories(ctx context.Context, ns string, ids []string) ([]*models.Memory, error) {
	if err := s.settleRead(ctx); err != nil { // the counters of every stored turn (surfaced.go)
		return nil, err
	}
	ms, err := queryAll(ctx, s.rdb, "get memories", memorySelect+` WHERE ns = ? AND id IN `+inList, []any{ns, jsonList(ids)}, scanMemory)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*models.Memory, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	return models.MemoriesInOrder(ids, byID), nil
}

// FindMemories lists memories (never chunks) matching f, with the total ignoring Offset and
// Limit. An empty f.Namespace lists every namespace. EINVALID for an unknown kind or sort, a
// negative offset, or a limit over 1000.
func (s *Store) FindMemories(ctx context.Context, f models.MemoryFilter) ([]*models.Memory, int, error) {
	limit, ascending, err := f.Check()
	if err != nil {
		return nil, 0, err
	}
	where := []string{"parent_id = ''"}
	var args []any
	if f.Namespace != "" {
		where, args = append(where, "ns = ?"), append(args, f.Namespace)
	}
	if len(f.Kinds) > 0 {
		kinds := make([]string, len(f.Kinds))
		for i, k := range f.Kinds {
			kinds[i] = string(k)
		}
		where, args = append(where, "kind IN "+inList), append(args, jsonList(kinds))
	}
	if f.ConversationID != "" {
		where, args = append(where, "conversation_id = ?"), append(args, f.ConversationID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "created_at >= ?"), append(args, filterTime(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "created_at < ?"), append(args, filterTime(f.Until))
	}
	if len(f.IDs) > 0 {
		where, args = append(where, "id IN "+inList), append(args, jsonList(f.IDs))
	}
	order := "created_at DESC, id DESC"
	if ascending {
		order = "created_at ASC, id ASC"
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := s.settleRead(ctx); err != nil { // the counters of every stored turn (surfaced.go)
		return nil, 0, err
	}
	if err := s.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM memories WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, wrap(err, "count memories")
	}
	ms, err := queryAll(ctx, s.rdb, "find memories", memorySelect+` WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, limit, f.Offset), scanMemory)
	if err != nil {
		return nil, 0, err
	}
	return ms, total, nil
}

// LastInConversation returns the newest memory (not chunk) of a conversation by CreatedAt
// then id; ENOTFOUND when there is none.
func (s *Store) LastInConversation(ctx context.Context, ns, conversationID string) (*models.Memory, error) {
	if err := models.ValidateConversationRef(ns, conversationID); err != nil {
		return nil, err
	}
	if err := s.settleRead(ctx); err != nil { // the counters of every stored turn (surfaced.go)
		return nil, err
	}
	ms, err := queryAll(ctx, s.rdb, "last in conversation", memorySelect+`
		WHERE ns = ? AND conversation_id = ? AND parent_id = '' ORDER BY created_at DESC, id DESC LIMIT 1`, []any{ns, conversationID}, scanMemory)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, notFound("conversation %s has no memories", conversationID)
	}
	return ms[0], nil
}

// DeleteMemory removes a memory with its chunks, their vectors and index entries, every edge
// touching any of them, and their resurfacing queue items. Surfacings and events stay: they
