package engagement

import (
	"fmt"
	"time"

	"github.com/salience-ai/salience/decay"
	"github.com/salience-ai/salience/ids"
	"github.com/salience-ai/salience/learn"
	"github.com/salience-ai/salience/models"
	"github.com/salience-ai/salience/nlp"
)

// apply applies one checked event — a bot's report or the implicit-ignore job's — inside
// the batch's transaction. It is the one place where an event takes effect; in order:
//  1. its surfacing: by id, or for the memory+conversation form the memory's latest
//     surfacing in the conversation at or before the event's time. Every event needs one
//     (ENOTFOUND otherwise) and must not be dated before it (EINVALID "at"); an event
//     without a time is dated now, or at its surfacing when the clock reads earlier;
//  2. its memory (a chunk stands for its memory): a report on a deleted memory is
//     ENOTFOUND; the job's event is still logged and sets the outcome, so the job does not
//     find the surfacing again;
//  3. one outcome per surfacing: a surfacing that has its outcome makes the event a
//     duplicate that changes nothing, except that a report replaces the job's outcome (the
//     bot's word beats the timeout);
//  4. the log, carrying the resolved surfacing and memory: an id already logged for the
//     same surfacing is a duplicate (an idempotent replay) and changes nothing; for another
//     surfacing, a conflict naming the id (replay), so the event is not silently dropped;
//  5. the memory's confidence and counters (Rules.ApplyToMemory) with the event's concepts
//     or, when it has none, the surfacing's context, then its schedule (the namespace's
//     decay policy, OnEvent);
//     4b. the namespace's relevance model trains on the event (package learn);
//  6. a positive event strengthens memory→concept edges for those concepts (the surfacing's
//     only as far as the message that asked said them and links to the memory:
//     learn.LinkedConcepts) and co_retrieved edges to the memories of the same turn whose
//     surfacings were already used or helpful; a surfacing turns positive once, so each
//     pair counts once per turn; and the memory learns the words of the message that asked
//     which link to it (learn.Linked, Expand);
//  7. the surfacing's outcome becomes the event.
//
// A report that replaces the job's outcome does not undo the job's event: that moved the
// memory by −0.02 confidence, one recent dismissal and an FSRS Hard review, and none of
// these can be inverted exactly (floors, the weekly halving, the review's state are not
// kept), while the log keeps both events. The outcome, and with it the metrics, the turn's
// reward and the co_retrieved pairs, is the report's.
//
// It returns the event's status, or a rejection (with StatusRejected), or an error that
// must abort the transaction.
func (s *Service) apply(b *batch, policy decay.Policy, ev *models.Event, now time.Time) (Status, *models.Error, error) {
	// 1, 2. The surfacing by id, the memory, then the memory+conversation form's surfacing.
	var sf *models.Surfacing
	if ev.SurfacingID != "" {
		got, err := b.surfacing(ev.SurfacingID)
		switch {
		case models.ErrorCode(err) == models.ENOTFOUND:
			return StatusRejected, &models.Error{Code: models.ENOTFOUND, Field: "surfacing_id",
				Message: fmt.Sprintf("surfacing %s not found in namespace %s", models.Clip(ev.SurfacingID, 60), b.ns)}, nil
		case err != nil:
			return "", nil, err
		}
		sf = got
		if ev.MemoryID != "" && ids.MemoryOf(ev.MemoryID) != ids.MemoryOf(sf.MemoryID) {
			return StatusRejected, models.Invalid("memory_id", "memory_id does not match the surfacing's memory %s", sf.MemoryID), nil
		}
		if ev.ConversationID != "" && ev.ConversationID != sf.ConversationID {
			return StatusRejected, models.Invalid("conversation_id", "conversation_id does not match the surfacing's conversation"), nil
		}
		ev.MemoryID, ev.ConversationID = sf.MemoryID, sf.ConversationID
	}

	ev.MemoryID = ids.MemoryOf(ev.MemoryID)
	m, err := b.memory(ev.MemoryID)
	switch {
	case err == nil:
	case models.ErrorCode(err) != models.ENOTFOUND:
		return "", nil, err
	case ev.Implicit:
		m = nil
	case sf != nil:
		return StatusRejected, &models.Error{Code: models.ENOTFOUND, Field: "surfacing_id",
			Message: fmt.Sprintf("the memory %s of surfacing %s no longer exists", sf.MemoryID, sf.ID)}, nil
	default:
		return StatusRejected, &models.Error{Code: models.ENOTFOUND, Field: "memory_id",
			Message: fmt.Sprintf("memory %s not found in namespace %s", models.Clip(ev.MemoryID, 60), b.ns)}, nil
	}

	if sf == nil {
		got, rej, err := b.latestSurfacing(ev)
		switch {
		case err != nil:
			return "", nil, err
		case rej != nil:
			return StatusRejected, rej, nil
		}
		sf = got
		ev.SurfacingID = sf.ID
	}
	// 1. The event's time lies between its surfacing and now + skew (check saw the skew).
	if ev.At.IsZero() {
		ev.At = now
		if ev.At.Before(sf.At) {
			ev.At = sf.At // the clock reads earlier than the surfacing's time, which a caller may set (recall's Now)
		}
	}
	if ev.At.Before(sf.At) {
		return StatusRejected, models.Invalid("at", "at %s is before its surfacing (%s): an event reports on what was shown",
			ev.At.Format(time.RFC3339Nano), sf.At.UTC().Format(time.RFC3339Nano)), nil
	}

	// 3. One outcome per surfacing.
	if sf.Outcome != "" && (ev.Implicit || !implicitOutcome(sf)) {
		return replay(b, ev)
	}

	// 4. The log.
	switch err := b.tx.InsertEvent(ev); {
	case models.ErrorCode(err) == models.EDUPLICATE:
		return replay(b, ev)
	case err != nil:
		return "", nil, err
	}

	// 4b. The namespace's relevance model learns from every logged event, in log order.
	if err := b.train(s.learn, sf, ev); err != nil {
		return "", nil, err
	}

	// 5, 6. The memory, its schedule, the edges, the words it learned.
	if m != nil {
		var own []string // the memory's analysed words, for what a use teaches it
		if ev.Type.Positive() && len(sf.Terms) > 0 {
			own = nlp.Terms(m.Content)
		}
		concepts := ev.Concepts
		if len(concepts) == 0 {
			concepts = sf.Concepts
			if own != nil {
				// A use ties the memory to the concepts of the message it answered, not of
				// the window (a surfacing without terms, recorded before they were, keeps all).
				concepts = learn.LinkedConcepts(sf.Concepts, sf.Terms, own, learn.Informative)
			}
		}
		s.rules.ApplyToMemory(m, ev.Type, concepts, ev.At)
		policy.OnEvent(m, ev.Type, ev.At)
		b.touchMemory(m)
		if err := s.strengthen(b, m, sf, ev, concepts); err != nil {
			return "", nil, err
		}
		if own != nil {
			if ts := learn.Linked(sf.Terms, own, learn.Informative); len(ts) > 0 {
				m.Learned = learn.Expand(m.Learned, ts, ev.At)
			}
		}
	}

	// 7. The outcome.
	sf.Outcome, sf.OutcomeAt = ev.Type, ev.At
	if ev.Implicit {
		sf.OutcomeAt = time.Time{} // marks the outcome as the job's (implicitOutcome)
	}
	b.touchSurfacing(sf)
	return StatusApplied, nil, nil
}

// strengthen applies the edges of a positive event on m's surfacing sf (step 6 of apply),
// before sf's outcome is set.
func (s *Service) strengthen(b *batch, m *models.Memory, sf *models.Surfacing, ev *models.Event, concepts []string) error {
	if !ev.Type.Positive() {
		return nil
	}
	var coUsed []string
	if sf.TurnID != "" {
		turn, err := b.turn(sf.ConversationID, sf.TurnID)
		if err != nil {
			return err
		}
		for _, o := range turn {
			if o.ID != sf.ID && o.Outcome.Positive() {
				coUsed = append(coUsed, o.MemoryID)
			}
		}
	}
	for _, k := range s.rules.EdgesFor(b.ns, m.ID, ev.Type, concepts, coUsed) {
		e, found, err := b.edge(k)
		if err != nil {
			return err
		}
		b.putEdge(s.rules.Strengthen(e, found, ev.At))
	}
	return nil
}

// implicitOutcome reports whether sf's outcome is the implicit-ignore job's: ignored, with no
// time, as apply records it (the job's event in the log is dated at the surfacing). A
// report's outcome always has its time.
func implicitOutcome(sf *models.Surfacing) bool {
	return sf.Outcome == models.EventIgnored && sf.OutcomeAt.IsZero()
}

// latestSurfacing resolves the memory+conversation form: the batch's copy of the memory's
// latest surfacing in the event's conversation at or before the event's time (the latest
// of all when the event has no time). Without one the event is rejected: dated before the
// memory's surfacings in the conversation (EINVALID "at"), or about a memory never surfaced
// there (ENOTFOUND "conversation_id").
func (b *batch) latestSurfacing(ev *models.Event) (*models.Surfacing, *models.Error, error) {
	f := models.SurfacingFilter{Namespace: b.ns, ConversationID: ev.ConversationID, MemoryID: ev.MemoryID, Desc: true, Limit: 1}
	if !ev.At.IsZero() {
		f.Until = ev.At.Add(time.Nanosecond) // Until is exclusive; a surfacing at the event's time counts
	}
	ss, err := b.tx.FindSurfacings(f)
	if err != nil {
		return nil, nil, err
	}
	if len(ss) > 0 {
		return b.keepSurfacing(ss[0]), nil, nil
	}
	if !f.Until.IsZero() {
		f.Until = time.Time{}
		later, err := b.tx.FindSurfacings(f)
		if err != nil {
			return nil, nil, err
		}
		if len(later) > 0 {
			return nil, models.Invalid("at", "at %s is before every surfacing of memory %s in this conversation: an event reports on what was shown",
				ev.At.Format(time.RFC3339Nano), ev.MemoryID), nil
		}
	}
	return nil, &models.Error{Code: models.ENOTFOUND, Field: "conversation_id",
		Message: fmt.Sprintf("memory %s was never surfaced in conversation %s", ev.MemoryID, models.Clip(ev.ConversationID, 60))}, nil
}

// replay classifies an event that changes nothing, because its surfacing has its outcome or
// its id is logged: a duplicate when no event holds its id or the one that does is on the
// same surfacing (a retry; its first report decided); a conflict naming the id when that
// event is on another surfacing (issue 39: an id reused for a different surfacing was answered duplicate, and the
// report was lost without a word). The rule lives here; the stores only find the event.
func replay(b *batch, ev *models.Event) (Status, *models.Error, error) {
	prev, err := b.tx.GetEvent(b.ns, ev.ID)
	switch {
	case models.ErrorCode(err) == models.ENOTFOUND:
		return StatusDuplicate, nil, nil
	case err != nil:
		return "", nil, err
	case prev.SurfacingID == ev.SurfacingID:
		return StatusDuplicate, nil, nil
	}
	return StatusRejected, &models.Error{Code: models.ECONFLICT, Field: "id", Message: fmt.Sprintf(
		"event id %s was already recorded for another surfacing (%s): give each event its own id",
		models.Clip(ev.ID, 60), models.Clip(prev.SurfacingID, 60))}, nil
}
