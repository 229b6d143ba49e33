package sqlite

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/salience-ai/salience/models"
)

// RecordSurfacings stores the surfacings of one turn and the conversation's state (may be
// nil) in one transaction. ECONFLICT when a surfacing id exists.
func (s *Store) RecordSurfacings(ctx context.Context, ss []*models.Surfacing, state *models.ConversationState) error {
	if err := models.ValidateStoredTurn(ss, state); err != nil {
		return err
	}
	if len(ss) == 0 && state == nil {
		return nil
	}
	err := s.write(ctx, "record surfacings", func(tx *wtx) (func(), error) {
		return s.recordTx(ctx, tx, ss, state)
	})
	s.foldInBackground()
	return err
}

// recordTx writes one turn's surfacings and conversation state inside tx and returns what
// to apply to the caches once tx commits.
func (s *Store) recordTx(ctx context.Context, tx *wtx, ss []*models.Surfacing, state *models.ConversationState) (func(), error) {
	if err := insertSurfacings(ctx, tx, ss); err != nil {
		return nil, err
	}
	if state != nil {
		if _, err := tx.ExecContext(ctx, upsertConversation.sql, upsertConversation.bind(state)...); err != nil {
			return nil, err
		}
	}
	return func() {
		s.mem.Surfaced(ss)
		if state != nil {
			s.convs.Add([2]string{state.Namespace, state.ConversationID}, cloneConversation(state))
		}
	}, nil
}

// convCacheSize bounds the conversation states kept in memory (at most about 10 KB each):
// recall reads its conversation's state every turn, about 0.1 ms from its row and 5 µs from
// here (BenchmarkGetConversation). The cache holds the newest state of the conversations used last, written
// through by RecordSurfacings in commit order; a state read from SQLite is not cached, as a
// write committed meanwhile may have cached a newer one.
const convCacheSize = 4096

func cloneConversation(c *models.ConversationState) *models.ConversationState {
	n := *c
	n.RecentTopics = slices.Clone(c.RecentTopics)
	n.MessageTimes = slices.Clone(c.MessageTimes)
	n.Participants = slices.Clone(c.Participants)
	n.RecentSurfaced, n.RecentTurns = nil, nil
	for _, t := range c.RecentSurfaced {
		n.RecentSurfaced = append(n.RecentSurfaced, slices.Clone(t))
	}
	for _, t := range c.RecentTurns {
		n.RecentTurns = append(n.RecentTurns, slices.Clone(t))
	}
	return &n
}

// insertSurfacings writes ss inside tx.
func insertSurfacings(ctx context.Context, tx *wtx, ss []*models.Surfacing) error {
	for _, sf := range ss {
		if _, err := tx.ExecContext(ctx, insertSurfacing.sql, insertSurfacing.bind(sf)...); err != nil {
			if isConstraintUnique(err) {
				return models.Errorf(models.ECONFLICT, "a surfacing of the batch exists")
			}
			return err
		}
	}
	// The memories' counters are folded from these rows later (surfaced.go).
	tx.surfaced += len(ss)
	return tallySurfacings(ctx, tx, ss) // the experiment counters (experiment_tally.go)
}

func getSurfacing(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) scanner
}, ns, id string) (*models.Surfacing, error) {
	if err := models.ValidateNamespace(ns); err != nil {
		return nil, err
	}
	if err := models.ValidateStoredID(id, "id"); err != nil {
		return nil, err
	}
	sf, err := scanSurfacing(q.QueryRowContext(ctx, selectSurfacing, ns, id))
	if errors.Is(err, errNoRows) {
		return nil, notFound("surfacing %s not found", id)
	}
	return sf, wrap(err, "get surfacing")
}

// GetSurfacing returns one surfacing; ENOTFOUND when missing.
func (s *Store) GetSurfacing(ctx context.Context, ns, id string) (*models.Surfacing, error) {
	return getSurfacing(ctx, s.rdb, ns, id)
}

// FindSurfacings lists surfacings matching f, oldest first (by At, then id) unless f.Desc.
// An empty f.Namespace matches every namespace. Limit 0 means 1000; EINVALID when negative.
func (s *Store) FindSurfacings(ctx context.Context, f models.SurfacingFilter) ([]*models.Surfacing, error) {
	return findSurfacings(ctx, s.rdb, f)
}

func findSurfacings(ctx context.Context, q querier, f models.SurfacingFilter) ([]*models.Surfacing, error) {
	query, args, scan, err := surfacingQuery(f)
	if err != nil {
		return nil, err
	}
	return queryAll(ctx, q, "find surfacings", query, args, scan)
}

// surfacingQuery is the SELECT of FindSurfacings for f, with its arguments and row scanner.
func surfacingQuery(f models.SurfacingFilter) (string, []any, func(scanner) (*models.Surfacing, error), error) {
	limit, err := f.Check()
	if err != nil {
		return "", nil, nil, err
	}
	var where []string
	var args []any
	if f.Namespace != "" {
		where, args = append(where, "ns = ?"), append(args, f.Namespace)
	}
	if f.ConversationID != "" {
		where, args = append(where, "conversation_id = ?"), append(args, f.ConversationID)
	}
	if f.TurnID != "" {
		where, args = append(where, "turn_id = ?"), append(args, f.TurnID)
	}
	if f.MemoryID != "" {
		where, args = append(where, "memory_id = ?"), append(args, f.MemoryID)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, filterTime(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "at < ?"), append(args, filterTime(f.Until))
	}
	if f.NoOutcome {
		where = append(where, "outcome = ''")
	}
	order := "at ASC, id ASC"
	if f.Desc {
		order = "at DESC, id DESC"
	}
	query, scan := surfacingRows.sel, scanSurfacing
	if f.Brief {
		query, scan = selectBriefSurfacing, scanBriefSurfacing
	}
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	return query + ` ORDER BY ` + order + ` LIMIT ?`, append(args, limit), scan, nil
}

// selectBriefSurfacing reads the columns of SurfacingFilter.Brief.
const selectBriefSurfacing = `SELECT ns, id, conversation_id, turn_id, memory_id, mode, conversation_type, at,
	outcome, latency_ms, p_use, components FROM surfacings`

func scanBriefSurfacing(r scanner) (*models.Surfacing, error) {
	sf := &models.Surfacing{}
	var at int64
	err := r.Scan(&sf.Namespace, &sf.ID, &sf.ConversationID, &sf.TurnID, &sf.MemoryID, (*string)(&sf.Mode),
		&sf.ConvType, &at, (*string)(&sf.Outcome), &sf.LatencyMS, &sf.PUse, componentsDest{&sf.Components})
	sf.At = decTime(at)
	return sf, err
}

// GetConversation returns a conversation's state; ENOTFOUND when none was recorded.
func (s *Store) GetConversation(ctx context.Context, ns, id string) (*models.ConversationState, error) {
	if err := models.ValidateKey(ns, id, "conversation_id"); err != nil {
		return nil, err
	}
	if c, ok := s.convs.Get([2]string{ns, id}); ok {
		return cloneConversation(c), nil
	}
	c, err := scanConversation(s.rdb.QueryRowContext(ctx, selectConversation, ns, id))
	if errors.Is(err, errNoRows) {
		return nil, notFound("conversation %s not found", id)
	}
	if err != nil {
		return nil, wrap(err, "get conversation")
	}
	for i, t := range c.MessageTimes {
		c.MessageTimes[i] = t.UTC()
	}
	return c, nil
}

// FindEvents lists engagement events matching f, oldest first (by At, then id). An empty
// f.Namespace matches every namespace; Limit 0 means all, EINVALID when negative.
func (s *Store) FindEvents(ctx context.Context, f models.EventFilter) ([]*models.Event, error) {
	where, args, err := eventWhere(f)
	if err != nil {
		return nil, err
	}
	q := eventRows.sel
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	if f.BySeq {
		q += ` ORDER BY seq`
	} else {
		q += ` ORDER BY at, id`
	}
	if f.Limit > 0 {
		q, args = q+` LIMIT ?`, append(args, f.Limit)
	}
	return queryAll(ctx, s.rdb, "find events", q, args, scanEvent)
}

// CountEvents counts the events matching f (but its Limit and order) by type and Implicit,
// in SQL: the metrics need the counts, not 50,000 decoded rows.
func (s *Store) CountEvents(ctx context.Context, f models.EventFilter) ([]models.EventTally, error) {
	where, args, err := eventWhere(f)
	if err != nil {
		return nil, err
	}
	q := `SELECT type, implicit, COUNT(*) FROM events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` GROUP BY type, implicit ORDER BY type, implicit`
	return queryAll(ctx, s.rdb, "count events", q, args, func(r scanner) (models.EventTally, error) {
		var t models.EventTally
		err := r.Scan((*string)(&t.Type), &t.Implicit, &t.Count)
		return t, err
	})
}

// eventWhere is the WHERE clause of f's filters (all but its order and Limit).
func eventWhere(f models.EventFilter) ([]string, []any, error) {
	if err := f.Check(); err != nil {
		return nil, nil, err
	}
	var where []string
	var args []any
	if f.Namespace != "" {
		where, args = append(where, "ns = ?"), append(args, f.Namespace)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, filterTime(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "at < ?"), append(args, filterTime(f.Until))
	}
	if f.AfterSeq > 0 {
		where, args = append(where, "seq > ?"), append(args, f.AfterSeq)
	}
	return where, args, nil
}
