package neo4j

import (
	"context"
	"fmt"
	"slices"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/salience-ai/salience/models"
)

func surfacingProps(s *models.Surfacing) map[string]any {
	return map[string]any{
		"ns": s.Namespace, "id": s.ID, "conv": s.ConversationID, "turn": s.TurnID, "memory": s.MemoryID,
		"mode": string(s.Mode), "rank": int64(s.Rank), "score": s.Score,
		"components": encJSON(s.Components, s.Components == (models.Components{})),
		"conv_type":  s.ConvType, "threshold": s.Threshold, "arm_prob": s.ArmProb, "variant": s.Variant,
		"experiment": s.Experiment, "concepts": encStrings(s.Concepts), "latency": s.LatencyMS,
		"settings_version": int64(s.SettingsVersion), "at": encTime(s.At),
		"outcome": string(s.Outcome), "outcome_at": encTime(s.OutcomeAt),
		"terms": encStrings(s.Terms), "p_use": s.PUse, "model_version": s.ModelVersion,
	}
}

const surfacingReturn = ` s {.*, lk: null} AS s`

func decSurfacing(v any) (*models.Surfacing, error) {
	p := asProps(v)
	if p.err != nil {
		return nil, p.err
	}
	s := &models.Surfacing{
		ID: p.str("id"), Namespace: p.str("ns"), ConversationID: p.str("conv"), TurnID: p.str("turn"),
		MemoryID: p.str("memory"), Mode: models.Mode(p.str("mode")), Rank: p.int("rank"), Score: p.f64("score"),
		ConvType: p.str("conv_type"), Threshold: p.f64("threshold"), ArmProb: p.f64("arm_prob"), Variant: p.str("variant"),
		Experiment: p.str("experiment"), Concepts: p.strs("concepts"), LatencyMS: p.f64("latency"),
		SettingsVersion: p.int("settings_version"), At: p.time("at"),
		Outcome: models.EventType(p.str("outcome")), OutcomeAt: p.time("outcome_at"),
		Terms: p.strs("terms"), PUse: p.f64("p_use"), ModelVersion: p.i64("model_version"),
	}
	p.json("components", &s.Components)
	return s, p.err
}

func surfacingRecords(recs []*neo4j.Record) ([]*models.Surfacing, error) {
	out := make([]*models.Surfacing, 0, len(recs))
	for _, r := range recs {
		s, err := decSurfacing(r.Values[0])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

const (
	// recordTurn writes a turn in one statement (one round trip on recall's path): the
	// surfacings; each memory's count (SurfaceCount + n, LastSurfaced the latest; a missing
	// memory is skipped); the conversation's state when $state is not null.
	recordTurn = `CALL () { UNWIND $rows AS r CREATE (s:Surfacing) SET s = r }
		CALL () {
			UNWIND $bumps AS b MATCH (m:Memory {ns: b.ns, id: b.id})
			SET m.surfaces = coalesce(m.surfaces, 0) + b.n,
				m.last_surfaced = CASE WHEN b.at > coalesce(m.last_surfaced, ` + noTimeCypher + `) THEN b.at ELSE m.last_surfaced END
		}
		CALL () {
			WITH $state AS st WHERE st IS NOT NULL
			MERGE (c:Conversation {ns: st.ns, id: st.id}) SET c.state = st.state, c.updated = st.updated
		}`
)

// conversationJSON is how a conversation's state is stored: one JSON text, read and written
// whole on every turn.
type conversationJSON struct {
	Type           string     `json:"type,omitempty"`
	Turns          int        `json:"turns,omitempty"`
	RecentTopics   []string   `json:"recent_topics,omitempty"`
	MessageTimes   []int64    `json:"message_times,omitempty"`
	Participants   []string   `json:"participants,omitempty"`
	RecentSurfaced [][]string `json:"recent_surfaced,omitempty"`
	RecentTurns    [][]string `json:"recent_turns,omitempty"`
	UpdatedAt      *int64     `json:"updated_at,omitempty"` // nil: unset (0 is the epoch)
}

// RecordSurfacings stores the surfacings of one turn and the conversation's new state
// (state may be nil) in one transaction (one statement), and counts each surfacing on its memory.
// ECONFLICT when a surfacing id exists.
func (s *Store) RecordSurfacings(ctx context.Context, ss []*models.Surfacing, state *models.ConversationState) error {
	if err := models.ValidateStoredTurn(ss, state); err != nil {
		return err
	}
	seen := map[[2]string]bool{}
	rows := make([]map[string]any, 0, len(ss))
	for _, sf := range ss {
		k := [2]string{sf.Namespace, sf.ID}
		if seen[k] {
			return conflict("surfacing %s appears twice", sf.ID)
		}
		seen[k] = true
		rows = append(rows, surfacingProps(sf))
	}
	var stateParams map[string]any
	if state != nil {
		cj := conversationJSON{Type: state.Type, Turns: state.Turns, RecentTopics: state.RecentTopics,
			Participants: state.Participants, RecentSurfaced: state.RecentSurfaced, RecentTurns: state.RecentTurns}
		if !state.UpdatedAt.IsZero() {
			u := encTime(state.UpdatedAt)
			cj.UpdatedAt = &u
		}
		for i, t := range state.MessageTimes {
			if err := models.CheckStoredTime(fmt.Sprintf("state.message_times[%d]", i), t); err != nil {
				return err
			}
			cj.MessageTimes = append(cj.MessageTimes, encTime(t))
		}
		stateParams = map[string]any{"ns": state.Namespace, "id": state.ConversationID,
			"state": encJSON(cj, false), "updated": encTime(state.UpdatedAt)}
	}
	if len(ss) == 0 && state == nil {
		return nil
	}
	// One count per memory: SurfaceCount + n, LastSurfaced = the latest At.
	type key struct{ ns, id string }
	bumps := map[key]map[string]any{}
	var order []key
	for _, sf := range ss {
		k := key{sf.Namespace, sf.MemoryID}
		b, ok := bumps[k]
		if !ok {
			b = map[string]any{"ns": k.ns, "id": k.id, "n": int64(0), "at": int64(noTime)} // At may be before 1970
			bumps[k] = b
			order = append(order, k)
		}
		b["n"] = b["n"].(int64) + 1
		b["at"] = max(b["at"].(int64), encTime(sf.At))
	}
	// Sorted, so concurrent turns lock memories in one order and rarely deadlock.
	slices.SortFunc(order, func(a, b key) int {
		if a.ns != b.ns {
			return cmpString(a.ns, b.ns)
		}
		return cmpString(a.id, b.id)
	})
	bumpRows := make([]map[string]any, len(order))
	for i, k := range order {
		bumpRows[i] = bumps[k]
	}
	// An id that exists fails the uniqueness constraint: ECONFLICT, all rolled back. One
	// statement, so one auto-commit transaction: recall's record is one round trip, and it
	// returns once the commit is durable, so a surfacing id recall hands out is never lost.
	var st any
	if stateParams != nil {
		st = stateParams
	}
	return s.writeOne(ctx, "record surfacings", recordTurn, map[string]any{"rows": rows, "bumps": bumpRows, "state": st})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

const getSurfacing = `MATCH (s:Surfacing {ns: $ns, id: $id}) RETURN` + surfacingReturn

// GetSurfacing returns one surfacing; ENOTFOUND when missing.
func (s *Store) GetSurfacing(ctx context.Context, ns, id string) (*models.Surfacing, error) {
	if err := models.ValidateKey(ns, id, "id"); err != nil {
		return nil, err
	}
	var out []*models.Surfacing
	err := s.read(ctx, "get surfacing", func(tx runner) error {
		recs, err := collect(ctx, tx, getSurfacing, map[string]any{"ns": ns, "id": id})
		if err != nil {
			return err
		}
		out, err = surfacingRecords(recs)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, notFound("surfacing %s not found", id)
	}
	return out[0], nil
}

// FindSurfacings queries: one namespace or all, oldest or newest first; unused filters are
// null parameters.
const (
	findSurfacingsNS    = `MATCH (s:Surfacing {ns: $ns}) WHERE true`
	findSurfacingsAll   = `MATCH (s:Surfacing) WHERE true`
	findSurfacingsWhere = `
		AND ($conv IS NULL OR s.conv = $conv)
		AND ($turn IS NULL OR s.turn = $turn)
		AND ($memory IS NULL OR s.memory = $memory)
		AND ($since IS NULL OR s.at >= $since)
		AND ($until IS NULL OR s.at < $until)
		AND (NOT $noOutcome OR s.outcome = '')
		RETURN` + surfacingReturn
	findSurfacingsAsc  = ` ORDER BY s.at ASC, s.id ASC LIMIT $limit`
	findSurfacingsDesc = ` ORDER BY s.at DESC, s.id DESC LIMIT $limit`
)

// findSurfacingsQueries[allNamespaces][descending].
var findSurfacingsQueries = [2][2]string{
	{findSurfacingsNS + findSurfacingsWhere + findSurfacingsAsc, findSurfacingsNS + findSurfacingsWhere + findSurfacingsDesc},
	{findSurfacingsAll + findSurfacingsWhere + findSurfacingsAsc, findSurfacingsAll + findSurfacingsWhere + findSurfacingsDesc},
}

// FindSurfacings lists surfacings matching f, oldest first unless f.Desc.
func (s *Store) FindSurfacings(ctx context.Context, f models.SurfacingFilter) ([]*models.Surfacing, error) {
	var out []*models.Surfacing
	err := s.read(ctx, "find surfacings", func(tx runner) error {
		var err error
		out, err = findSurfacings(ctx, tx, f)
		return err
	})
	return out, err
}

func findSurfacings(ctx context.Context, tx runner, f models.SurfacingFilter) ([]*models.Surfacing, error) {
	limit, err := f.Check()
	if err != nil {
		return nil, err
	}
	all := 1
	if f.Namespace != "" {
		all = 0
	}
	desc := 0
	if f.Desc {
		desc = 1
	}
	recs, err := collect(ctx, tx, findSurfacingsQueries[all][desc], map[string]any{
		"ns": optString(f.Namespace), "conv": optString(f.ConversationID), "turn": optString(f.TurnID),
		"memory": optString(f.MemoryID), "since": optTime(f.Since), "until": optTime(f.Until),
		"noOutcome": f.NoOutcome, "limit": int64(limit),
	})
	if err != nil {
		return nil, err
	}
	return surfacingRecords(recs)
}

const getConversation = `MATCH (c:Conversation {ns: $ns, id: $id}) RETURN c.state AS state`

// GetConversation returns a conversation's state; ENOTFOUND when none was recorded.
func (s *Store) GetConversation(ctx context.Context, ns, id string) (*models.ConversationState, error) {
	if err := models.ValidateKey(ns, id, "conversation_id"); err != nil {
		return nil, err
	}
	var text string
	found := false
	err := s.read(ctx, "get conversation", func(tx runner) error {
		recs, err := collect(ctx, tx, getConversation, map[string]any{"ns": ns, "id": id})
		if err != nil {
			return err
		}
		found = len(recs) > 0
		if found {
			text, _ = recs[0].Values[0].(string)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, notFound("conversation %s not found", id)
	}
	var cj conversationJSON
	if err := decJSON(text, &cj, "conversation"); err != nil {
		return nil, fmt.Errorf("neo4j: get conversation: %w", err)
	}
	c := &models.ConversationState{Namespace: ns, ConversationID: id, Type: cj.Type, Turns: cj.Turns,
		RecentTopics: cj.RecentTopics, Participants: cj.Participants, RecentSurfaced: cj.RecentSurfaced,
		RecentTurns: cj.RecentTurns,
	}
	if cj.UpdatedAt != nil {
		c.UpdatedAt = decTime(*cj.UpdatedAt)
	}
	for _, t := range cj.MessageTimes {
		c.MessageTimes = append(c.MessageTimes, decTime(t))
	}
	return c, nil
}

func eventProps(e *models.Event) map[string]any {
	return map[string]any{
		"ns": e.Namespace, "id": e.ID, "surfacing": e.SurfacingID, "memory": e.MemoryID, "conv": e.ConversationID,
		"type": string(e.Type), "at": encTime(e.At), "concepts": encStrings(e.Concepts), "implicit": e.Implicit,
		"seq": e.Seq,
	}
}

func decEvent(v any) (*models.Event, error) {
	p := asProps(v)
	e := &models.Event{
		ID: p.str("id"), Namespace: p.str("ns"), SurfacingID: p.str("surfacing"), MemoryID: p.str("memory"),
		ConversationID: p.str("conv"), Type: models.EventType(p.str("type")), At: p.time("at"),
		Concepts: p.strs("concepts"), Implicit: p.bool("implicit"), Seq: p.i64("seq"),
	}
	return e, p.err
}

const (
	findEventsNS  = `MATCH (e:Event {ns: $ns}) WHERE true`
	findEventsAll = `MATCH (e:Event) WHERE true`
	findEventsEnd = `
		AND ($since IS NULL OR e.at >= $since)
		AND ($until IS NULL OR e.at < $until)
		AND ($after IS NULL OR e.seq > $after)
		RETURN e {.*} AS e ORDER BY `
	byTime = `e.at, e.id LIMIT $limit`
	bySeq  = `e.seq LIMIT $limit`
)

// findEventsQueries[allNamespaces][bySeq].
var findEventsQueries = [2][2]string{
	{findEventsNS + findEventsEnd + byTime, findEventsNS + findEventsEnd + bySeq},
	{findEventsAll + findEventsEnd + byTime, findEventsAll + findEventsEnd + bySeq},
}

// countEventsQueries[allNamespaces] count events by type and implicit.
var countEventsQueries = [2]string{findEventsNS + countEventsEnd, findEventsAll + countEventsEnd}

const countEventsEnd = `
		AND ($since IS NULL OR e.at >= $since)
		AND ($until IS NULL OR e.at < $until)
		AND ($after IS NULL OR e.seq > $after)
		WITH e.type AS type, coalesce(e.implicit, false) AS implicit, count(*) AS n
		RETURN type, implicit, n ORDER BY type, implicit`

// CountEvents counts the events matching f (its order and Limit aside) by type and
// Implicit, in the database: the metrics need the counts, not every event.
func (s *Store) CountEvents(ctx context.Context, f models.EventFilter) ([]models.EventTally, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	all := 1
	if f.Namespace != "" {
		all = 0
	}
	var after any
	if f.AfterSeq > 0 {
		after = f.AfterSeq
	}
	var out []models.EventTally
	err := s.read(ctx, "count events", func(tx runner) error {
		recs, err := collect(ctx, tx, countEventsQueries[all], map[string]any{"ns": optString(f.Namespace),
			"since": optTime(f.Since), "until": optTime(f.Until), "after": after})
		if err != nil {
			return err
		}
		out = make([]models.EventTally, 0, len(recs))
		for _, r := range recs {
			typ, _ := r.Values[0].(string)
			implicit, _ := r.Values[1].(bool)
			n, ok := r.Values[2].(int64)
			if !ok {
				return fmt.Errorf("count events: count is %T", r.Values[2])
			}
			out = append(out, models.EventTally{Type: models.EventType(typ), Implicit: implicit, Count: int(n)})
		}
		return nil
	})
	return out, err
}

// noLimit stands for "all rows" where a query takes a LIMIT.
const noLimit = int64(1) << 62

// FindEvents lists engagement events matching f, oldest first (then by id).
func (s *Store) FindEvents(ctx context.Context, f models.EventFilter) ([]*models.Event, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	all := 1
	if f.Namespace != "" {
		all = 0
	}
	limit := noLimit
	if f.Limit > 0 {
		limit = int64(f.Limit)
	}
	var out []*models.Event
	err := s.read(ctx, "find events", func(tx runner) error {
		order := 0
		if f.BySeq {
			order = 1
		}
		var after any
		if f.AfterSeq > 0 {
			after = f.AfterSeq
		}
		recs, err := collect(ctx, tx, findEventsQueries[all][order], map[string]any{"ns": optString(f.Namespace),
			"since": optTime(f.Since), "until": optTime(f.Until), "after": after, "limit": limit})
		if err != nil {
			return err
		}
		out = make([]*models.Event, 0, len(recs))
		for _, r := range recs {
			e, err := decEvent(r.Values[0])
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
