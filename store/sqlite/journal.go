package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/salience-ai/salience/models"
)

// The surfacing journal takes recording a turn off recall's critical path (issue #10).
//
// Recording a turn's surfacings in SQLite costs about a millisecond and a quarter at 100,000
// memories: ten rows into a table with six indexes, each memory's counters in its row, and
// the commit's WAL frames. A recall must not return a surfacing id that a crash can lose, so
// the write cannot simply move to the background. Instead RecordSurfacings appends the turn
// to a journal file beside the database — one write(2) of one line — updates the in-memory
// caches, and returns; a background applier moves journaled turns into SQLite in batches, so
// many turns share one transaction. The journal is as durable as the database's own commits
// (synchronous=NORMAL writes the WAL without fsync): what was acknowledged survives the
// process being killed, and Open replays what SQLite had not yet received.
//
// The database stays the one place readers look. Every read of surfacings, of memory rows or
// of an experiment's counts first settles the journal (applies what is pending, usually
// nothing: the applier runs within journalDelay of a write), so a surfacing is readable as
// soon as RecordSurfacings has returned. A write transaction that reads or writes memories or
// surfacings applies what is pending inside itself first and holds the journal until it
// ends, so the memory counters it reads from the cache are exactly the database's (the
// cache counts journaled turns at once, and no turn is journaled while it runs).
//
// Each line is "crc32 seq body\n", the body a turn's surfacings and state (journal_codec.go);
// the number of the last record applied is kept in the state table in the transaction that
// applied it, so a replay applies each record once. A line that does not check out is a write that
// failed half-way (never acknowledged) and is skipped. One process owns a journal (an
// exclusive flock); a second process opening the same database, such as a command run
// beside a server, records its surfacings directly in SQLite, as before the journal.

// journalDelay is how long the applier waits after a turn is journaled before applying: the
// turns journaled meanwhile share the transaction.
const journalDelay = time.Millisecond

// Before a batch the applier waits for quiet: no recall turn (TurnStarted) and no search in
// flight, looked for every journalPoll, and still none journalQuiet later; for at most
// journalMaxDefer, or until journalMaxPending turns wait. A batch costs SQLite a third of a
// millisecond a turn or more, and run beside a recall it slowed the recall by a fifth: it
// took the core a vector scan splits its work over, and the machine's shared resources. Between a bot's turns there
// is quiet, and the batch runs there; under a steady stream of turns there is none, and the
// turns of up to journalMaxDefer share one batch, which costs less a turn and meets fewer
// recalls. Measured on `salience bench recall` at 100,000 memories, six interleaved runs
// each on a busy host: p95 4.61 → 3.78 ms, CPU a call 4.15 → 3.48 ms (with the applier never
// running, in an earlier set: p95 4.08 → 2.83 ms); looking for quiet every millisecond
// instead of every 100 µs then took p95 3.46 → 3.27 ms and CPU a call 3.24 → 3.12 ms (the
// wake-ups). Reads settle the journal first, so they never see the delay.
const (
	journalQuiet = 300 * time.Microsecond
	journalPoll  = time.Millisecond // a turn takes longer; a wake-up costs a few µs of CPU
	// journalMaxPending bounds a batch at about 20 ms of SQLite: what a write waiting for the
	// writer, or a read settling the journal, may wait for. (256 measured the same for
	// recall: p95 means 3.26 against 3.34 ms in six interleaved runs each.)
	journalMaxPending = 64
)

var journalMaxDefer = 200 * time.Millisecond // a variable: tests set it

// journalCompactSize is the journal's size from which, once applied, it is rewritten with
// only what is still pending instead of being left to grow (it is emptied whenever nothing
// is pending, which is nearly always).
const journalCompactSize = 8 << 20

// journalSeqKey is the state key holding the sequence number of the last record applied.
const journalSeqKey = "sqlite.surfacing_journal_seq"

// journalRecord is one RecordSurfacings call: a turn's surfacings and its conversation state.
type journalRecord struct {
	Seq        uint64                    `json:"seq"`
	Surfacings []*models.Surfacing       `json:"surfacings,omitempty"`
	State      *models.ConversationState `json:"state,omitempty"`
}

type journal struct {
	// mu guards what follows and is held across each append, by a transaction that reads
	// the caches it must agree with (wtx.settle), and while indexes load.
	mu      sync.Mutex
	f       *os.File
	size    int64 // the file's length as written: appends go here
	seq     uint64
	pending []*journalRecord // journaled, not yet applied, in sequence order
	ids     map[[2]string]bool
	states  map[[2]string]*models.ConversationState // each conversation's latest pending state
	closed  bool
	// applied counts batches applied, so RecordSurfacings can tell whether a surfacing it
	// found in neither the database nor the pending list was applied in between.
	applied atomic.Uint64
	// pendingN mirrors len(pending) for readers that only want to know whether to settle.
	pendingN atomic.Int64
	// readWarned is when settleRead last logged a failure (unix nanoseconds).
	readWarned atomic.Int64
	wake       chan struct{}
	stop       context.CancelFunc
	stmtMu     sync.Mutex
	stmts      map[int]*sql.Stmt // existStmt's, by the number of ids
	// ceilings holds, per namespace, an id no surfacing in the database sorts above (see
	// surelyNew); guarded by ceilMu.
	ceilMu   sync.Mutex
	ceilings map[string]*ceiling
	// asked counts the turns whose ids were looked up in the database (for tests).
	asked atomic.Int64
	done  sync.WaitGroup
}

// openJournal opens (creating) the journal at path and takes it for this process; nil with no
// error when another process holds it.
func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open surfacing journal: %w", err)
	}
	held, err := lockJournal(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: lock surfacing journal: %w", err)
	}
	if !held {
		f.Close()
		return nil, nil
	}
	return &journal{f: f, ids: map[[2]string]bool{}, states: map[[2]string]*models.ConversationState{},
		wake: make(chan struct{}, 1)}, nil
}

// readJournal returns the records of the journal's lines, in sequence order. A torn or
// damaged line (its checksum fails: the tail of a crash) is skipped; a whole line that does
// not decode is an error, never skipped.
func readJournal(f *os.File) ([]*journalRecord, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	var out []*journalRecord
	r := bufio.NewReaderSize(f, 1<<20)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		switch rec := decodeJournalLine(line); {
		case rec != nil:
			out = append(out, rec)
		case lineChecks(line):
			// Not torn: whole, as its checksum says, yet unreadable — a newer version's
			// format, most likely. Skipping it would drop acknowledged turns.
			return nil, fmt.Errorf("line %d of %s is whole (its checksum holds) but this version cannot read it: "+
				"was it written by a newer version of salience? Run that version until it has applied its journal "+
				"(it does so at every start), or move the file aside to start without those turns", n, f.Name())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(out, func(a, b *journalRecord) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return slices.CompactFunc(out, func(a, b *journalRecord) bool { return a.Seq == b.Seq }), nil
}

// journalBody is what a record's body holds: all but its sequence number, so it can be encoded before
// the number is known.
type journalBody struct {
	Surfacings []*models.Surfacing       `json:"surfacings,omitempty"`
	State      *models.ConversationState `json:"state,omitempty"`
}

// journalLine is a record's line: "crc32 seq body\n", the checksum (8 hex digits) covering
// "seq body".
func journalLine(seq uint64, body []byte) []byte {
	line := make([]byte, 9, 9+21+len(body)+1)
	line = strconv.AppendUint(line, seq, 10)
	line = append(line, ' ')
	line = append(line, body...)
	hex.Encode(line[:8], binaryCRC(line[9:]))
	line[8] = ' '
	return append(line, '\n')
}

func encodeJournalLine(rec *journalRecord) ([]byte, error) {
	body, err := encodeJournalBody(rec.Surfacings, rec.State)
	if err != nil {
		return nil, err
	}
	return journalLine(rec.Seq, body), nil
}

func binaryCRC(b []byte) []byte {
	c := crc32.ChecksumIEEE(b)
	return []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)}
}

// lineChecks reports whether a line's checksum covers what it holds: a line torn by a crash
// or damaged on disk fails it.
func lineChecks(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) < 10 || line[8] != ' ' {
		return false
	}
	sum, err := hex.DecodeString(string(line[:8]))
	return err == nil && bytes.Equal(sum, binaryCRC(line[9:]))
}

// decodeJournalLine returns the line's record, or nil when the line is torn or damaged, or
// does not decode (readJournal tells those apart with lineChecks).
func decodeJournalLine(line []byte) *journalRecord {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) < 10 || line[8] != ' ' {
		return nil
	}
	sum, err := hex.DecodeString(string(line[:8]))
	if err != nil || !bytes.Equal(sum, binaryCRC(line[9:])) {
		return nil
	}
	seqText, body, ok := bytes.Cut(line[9:], []byte{' '})
	if !ok {
		return nil
	}
	seq, err := strconv.ParseUint(string(seqText), 10, 64)
	if err != nil || seq == 0 {
		return nil
	}
	var b *journalBody
	switch {
	case len(body) > 0 && body[0] == journalBinary:
		raw := make([]byte, b64.DecodedLen(len(body)-1))
		n, err := b64.Decode(raw, body[1:])
		if err != nil {
			return nil
		}
		if b, err = decodeJournalBinary(raw[:n]); err != nil {
			return nil
		}
	default: // JSON, as journals were written before the binary form
		b = &journalBody{}
		if err := json.Unmarshal(body, b); err != nil {
			return nil
		}
	}
	if slices.Contains(b.Surfacings, nil) {
		return nil // a turn's surfacings are all there: RecordSurfacings checked them
	}
	return &journalRecord{Seq: seq, Surfacings: b.Surfacings, State: b.State}
}

// startJournal replays what the journal holds that SQLite has not applied, empties it, and
// starts the applier. Called by Open before anything else uses the store.
func (s *Store) startJournal(ctx context.Context, j *journal) error {
	recs, err := readJournal(j.f)
	if err != nil {
		return fmt.Errorf("sqlite: read surfacing journal: %w", err)
	}
	var applied uint64
	var v string
	err = s.wdb.QueryRowContext(ctx, `SELECT value FROM state WHERE key = ?`, journalSeqKey).Scan(&v)
	switch {
	case err == nil:
		if applied, err = strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("sqlite: surfacing journal: bad %s %q", journalSeqKey, v)
		}
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlite: surfacing journal: %w", err)
	}
	j.seq = applied
	for _, r := range recs {
		if r.Seq > applied {
			j.add(r)
		}
		j.seq = max(j.seq, r.Seq)
	}
	j.size = 0
	if st, err := j.f.Stat(); err == nil {
		j.size = st.Size()
	}
	s.jr = j
	if n := len(j.pending); n > 0 {
		if err := s.settle(ctx); err != nil {
			s.jr = nil
			return fmt.Errorf("sqlite: replay surfacing journal: %w", err)
		}
		s.log.Info("sqlite: replayed the surfacing journal", "turns", n)
	}
	j.mu.Lock()
	err = j.truncateLocked()
	j.mu.Unlock()
	if err != nil {
		s.jr = nil
		return err
	}
	actx, cancel := context.WithCancel(context.Background())
	j.stop = cancel
	j.done.Add(1)
	go s.applyLoop(actx)
	return nil
}

// add puts a journaled record on the pending list. The caller holds mu (or owns j).
func (j *journal) add(r *journalRecord) {
	j.pending = append(j.pending, r)
	for _, sf := range r.Surfacings {
		j.ids[[2]string{sf.Namespace, sf.ID}] = true
	}
	if st := r.State; st != nil {
		j.states[[2]string{st.Namespace, st.ConversationID}] = st
	}
	j.pendingN.Store(int64(len(j.pending)))
}

// truncateLocked empties the file when nothing is pending, or rewrites a large one with only
// the pending records. The caller holds mu.
func (j *journal) truncateLocked() error {
	if len(j.pending) == 0 {
		if j.size == 0 {
			return nil
		}
		if err := j.f.Truncate(0); err != nil {
			return fmt.Errorf("sqlite: truncate surfacing journal: %w", err)
		}
		j.size = 0
		return nil
	}
	if j.size < journalCompactSize {
		return nil
	}
	// Pending records are written at the start, over applied ones, then the rest is cut:
	// until the cut each pending record is whole somewhere in the file (the prefix is under
	// half the file, and the originals sit at its end), and a replay applies a sequence
	// number once.
	var buf []byte
	for _, r := range j.pending {
		line, err := encodeJournalLine(r)
		if err != nil {
			return err
		}
		buf = append(buf, line...)
	}
	if int64(len(buf)) > j.size/2 {
		return nil // mostly pending: leave it until the applier catches up
	}
	if _, err := j.f.WriteAt(buf, 0); err != nil {
		return fmt.Errorf("sqlite: compact surfacing journal: %w", err)
	}
	if err := j.f.Truncate(int64(len(buf))); err != nil {
		return fmt.Errorf("sqlite: compact surfacing journal: %w", err)
	}
	j.size = int64(len(buf))
	return nil
}

// journalTurn appends one turn to the journal and counts it in the caches: RecordSurfacings
// when this process owns a journal. The surfacings are valid; ids are checked for conflicts
// here, against the database and the pending turns.
func (s *Store) journalTurn(ctx context.Context, ss []*models.Surfacing, state *models.ConversationState) error {
	j := s.jr
	// The existence check and the encoding run side by side; only the append waits for mu.
	gen := j.applied.Load()
	var taken bool
	var existErr error
	checked := make(chan struct{})
	fast := j.surelyNew(ss)
	if fast {
		close(checked)
	} else {
		go func() {
			defer close(checked)
			if taken, existErr = s.surfacingsExist(ctx, ss); existErr == nil {
				existErr = s.loadCeilings(ctx, ss)
			}
		}()
	}
	body, encErr := encodeJournalBody(ss, state)
	<-checked
	if existErr != nil {
		return existErr
	}
	if encErr != nil {
		return models.Errorf(models.EINVALID, "record surfacings: %v", encErr)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return models.Errorf(models.EUNAVAILABLE, "the store is closed")
	}
	if fast && !j.surelyNew(ss) {
		// A turn journaled meanwhile raised a ceiling past one of these ids: ask.
		var err error
		if taken, err = s.surfacingsExist(ctx, ss); err != nil {
			return err
		}
	} else if !fast && !taken && j.applied.Load() != gen {
		// A batch was applied since the database was asked: a pending duplicate may have
		// moved there. Ask again (no batch can be applied while mu is held).
		var err error
		if taken, err = s.surfacingsExist(ctx, ss); err != nil {
			return err
		}
	}
	seen := make(map[[2]string]bool, len(ss))
	for _, sf := range ss {
		k := [2]string{sf.Namespace, sf.ID}
		if taken || seen[k] || j.ids[k] {
			return models.Errorf(models.ECONFLICT, "record surfacings: a surfacing of the batch exists")
		}
		seen[k] = true
	}
	rec := &journalRecord{Seq: j.seq + 1}
	line := journalLine(rec.Seq, body)
	if _, err := j.f.WriteAt(line, j.size); err != nil {
		_ = j.f.Truncate(j.size) // cut a torn line; the next append writes here anyway
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("sqlite: record surfacings: %w: %w", errDiskFull, err)
		}
		return fmt.Errorf("sqlite: record surfacings: %w: %w", errDiskIO, err)
	}
	j.size += int64(len(line))
	j.seq = rec.Seq
	j.raiseCeilings(ss)
	// The caller's values are the record's from here on: copies, so a caller reusing its
	// slices cannot change what is applied.
	rec.Surfacings = make([]*models.Surfacing, len(ss))
	for i, sf := range ss {
		c := *sf
		c.Concepts, c.Terms = slices.Clone(sf.Concepts), slices.Clone(sf.Terms)
		rec.Surfacings[i] = &c
	}
	if state != nil {
		rec.State = cloneConversation(state)
	}
	j.add(rec)
	if s.ready.Load() {
		s.bumpSurfaced(ss)
		if state != nil {
			s.cacheConversation(state)
		}
	}
	select {
	case j.wake <- struct{}{}:
	default:
	}
	return nil
}

// surfacingsExist reports whether any of ss's ids is in the database.
func (s *Store) surfacingsExist(ctx context.Context, ss []*models.Surfacing) (bool, error) {
	s.jr.asked.Add(1)
	// A point lookup, not worth cancelling: with a context that cannot be cancelled the
	// driver runs it without a watcher goroutine of its own.
	ctx = context.WithoutCancel(ctx)
	byNS := map[string][]string{}
	for _, sf := range ss {
		byNS[sf.Namespace] = append(byNS[sf.Namespace], sf.ID)
	}
	for ns, ids := range byNS {
		for chunk := range slices.Chunk(ids, 500) {
			var one int
			args := append([]any{ns}, anys(chunk)...)
			var row *sql.Row
			if st := s.jr.existStmt(s.rdb, len(chunk)); st != nil {
				row = st.QueryRowContext(ctx, args...)
			} else {
				row = s.rdb.QueryRowContext(ctx, existSQL(len(chunk)), args...)
			}
			err := row.Scan(&one)
			if err == nil {
				return true, nil
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return false, wrap(err, "record surfacings")
			}
		}
	}
	return false, nil
}

// ceiling is what a journal knows of a namespace's largest surfacing id: max is at least
// every id this process has journaled there, and once loaded, every id the database held
// when it was read.
type ceiling struct {
	max    string
	loaded bool
}

// surelyNew reports whether every id of ss sorts above its namespace's loaded ceiling: then
// none is in the database, and asking it (a read transaction and a point lookup, about a
// fifth of recording a turn) can be skipped. Recall's ids are ULIDs made at the request's
// time, which sort after every earlier one, so this holds for nearly every turn of a live
// server. It is exact for what this process writes: every surfacing it stores is journaled
// first, raising the ceiling. Another process writing the same database directly (a
// command run beside the server) is not seen; an id of its could collide with one made here
// only as two random 80-bit ULID tails do.
func (j *journal) surelyNew(ss []*models.Surfacing) bool {
	j.ceilMu.Lock()
	defer j.ceilMu.Unlock()
	for _, sf := range ss {
		c := j.ceilings[sf.Namespace]
		if c == nil || !c.loaded || sf.ID <= c.max {
			return false
		}
	}
	return true
}

// raiseCeilings counts ss's ids in their namespaces' ceilings. The caller holds mu.
func (j *journal) raiseCeilings(ss []*models.Surfacing) {
	j.ceilMu.Lock()
	defer j.ceilMu.Unlock()
	if j.ceilings == nil {
		j.ceilings = map[string]*ceiling{}
	}
	for _, sf := range ss {
		c := j.ceilings[sf.Namespace]
		if c == nil {
			c = &ceiling{}
			j.ceilings[sf.Namespace] = c
		}
		c.max = max(c.max, sf.ID)
	}
}

// loadCeilings reads the largest stored surfacing id of each of ss's namespaces whose
// ceiling is not loaded yet.
func (s *Store) loadCeilings(ctx context.Context, ss []*models.Surfacing) error {
	j := s.jr
	for _, sf := range ss {
		j.ceilMu.Lock()
		c := j.ceilings[sf.Namespace]
		done := c != nil && c.loaded
		j.ceilMu.Unlock()
		if done {
			continue
		}
		var top sql.NullString
		if err := s.rdb.QueryRowContext(ctx, `SELECT max(id) FROM surfacings WHERE ns = ?`, sf.Namespace).Scan(&top); err != nil {
			return wrap(err, "record surfacings")
		}
		j.ceilMu.Lock()
		if j.ceilings == nil {
			j.ceilings = map[string]*ceiling{}
		}
		if c = j.ceilings[sf.Namespace]; c == nil {
			c = &ceiling{}
			j.ceilings[sf.Namespace] = c
		}
		c.max, c.loaded = max(c.max, top.String), true
		j.ceilMu.Unlock()
	}
	return nil
}

func existSQL(n int) string {
	return `SELECT 1 FROM surfacings WHERE ns = ? AND id IN (` + placeholders(n) + `) LIMIT 1`
}

// existStmt returns the read pool's prepared statement asking whether any of n ids exists
// (nil past a turn's usual size, or when it cannot be prepared): preparing costs this
// driver more than running the lookup.
func (j *journal) existStmt(db *sql.DB, n int) *sql.Stmt {
	if n > 64 {
		return nil
	}
	j.stmtMu.Lock()
	defer j.stmtMu.Unlock()
	if st := j.stmts[n]; st != nil {
		return st
	}
	st, err := db.Prepare(existSQL(n))
	if err != nil {
		return nil
	}
	if j.stmts == nil {
		j.stmts = map[int]*sql.Stmt{}
	}
	j.stmts[n] = st
	return st
}

// applyLoop applies journaled turns in the background, journalDelay after the first of a
// batch arrives. It folds the stored surfacings into the counters (surfaced.go) once
// foldRows of them wait, and when no turn has come for foldIdle.
func (s *Store) applyLoop(ctx context.Context) {
	j := s.jr
	defer j.done.Done()
	failing := false
	for {
		var idle <-chan time.Time
		if s.unfolded.Load() > 0 {
			idle = time.After(foldIdle)
		}
		var err error
		select {
		case <-ctx.Done():
			return
		case <-idle:
			err = s.settle(context.WithoutCancel(ctx))
		case <-j.wake:
			select {
			case <-ctx.Done():
				return
			case <-time.After(journalDelay):
			}
			s.awaitQuiet(ctx)
			// The batch runs to its end once begun (uncancellable: the driver then spares
			// each statement a watcher goroutine); the loop stops between batches.
			err = s.apply(context.WithoutCancel(ctx))
			if err == nil && s.unfolded.Load() >= foldRows {
				err = s.settle(context.WithoutCancel(ctx))
			}
		}
		switch {
		case err != nil && ctx.Err() == nil:
			if !failing {
				s.log.Error("sqlite: applying journaled surfacings failed; retrying each second (they are safe in the journal)", "err", err)
			}
			failing = true
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			select {
			case j.wake <- struct{}{}:
			default:
			}
		case err == nil && failing:
			s.log.Info("sqlite: journaled surfacings applied again")
			failing = false
		}
	}
}

// awaitQuiet returns once it finds no recall turn and no search in flight, and still none
// journalQuiet later; after journalMaxDefer at the latest, as soon as journalMaxPending turns
// wait, or when ctx ends.
func (s *Store) awaitQuiet(ctx context.Context) {
	deadline := time.Now().Add(journalMaxDefer)
	busy := func() bool { return s.turns.Load() > 0 || s.searching.Load() > 0 }
	for ctx.Err() == nil && s.jr.pendingN.Load() < journalMaxPending && time.Now().Before(deadline) {
		if busy() {
			time.Sleep(journalPoll)
			continue
		}
		time.Sleep(journalQuiet)
		if !busy() {
			return
		}
	}
}

// TurnStarted tells the store that a recall turn has begun, until the returned func is
// called: the journal's applier waits for quiet (awaitQuiet).
func (s *Store) TurnStarted() (ended func()) {
	s.turns.Add(1)
	return func() { s.turns.Add(-1) }
}

// settleRead is settle for a read. When the journal cannot be applied (a full disk, say)
// the read answers from what SQLite holds, as every read does on a full disk, instead of
// failing: the turns stay safe in the journal, and the applier retries. Logged at most
// every ten seconds.
func (s *Store) settleRead(ctx context.Context) error {
	err := s.settle(ctx)
	if err == nil || ctx.Err() != nil {
		return err
	}
	now := time.Now().UnixNano()
	if last := s.jr.readWarned.Load(); now-last >= int64(10*time.Second) && s.jr.readWarned.CompareAndSwap(last, now) {
		s.log.Warn("sqlite: a read could not apply the journaled surfacings and answers without the newest turns", "err", err)
	}
	return nil
}

// settle applies every journaled turn to SQLite and folds the stored surfacings into the
// memories' counters (surfaced.go), so that a read sees them: a no-op when nothing waits.
func (s *Store) settle(ctx context.Context) error {
	if (s.jr == nil || s.jr.pendingN.Load() == 0) && s.unfolded.Load() == 0 {
		return nil
	}
	return s.write(ctx, "apply surfacings", func(tx *wtx) (func(), error) {
		if err := tx.applyPending(ctx); err != nil {
			return nil, err
		}
		return nil, tx.foldIfNeeded(ctx)
	})
}

// apply is settle for the applier, which folds only now and then (applyLoop).
func (s *Store) apply(ctx context.Context) error {
	if s.jr == nil || s.jr.pendingN.Load() == 0 {
		return nil
	}
	return s.write(ctx, "apply surfacings", func(tx *wtx) (func(), error) {
		return nil, tx.applyPending(ctx)
	})
}

// settle makes the transaction agree with the journal: it applies the pending turns inside
// the transaction and holds the journal until the transaction ends, so none is journaled
// (and counted in the caches) meanwhile; and it folds the stored surfacings into the
// counters. Idempotent.
func (w *wtx) settle(ctx context.Context) error {
	if j := w.s.jr; j != nil && !w.holds && !w.heldByCaller {
		j.mu.Lock()
		w.holds = true
		if err := w.applyJournal(ctx, j.pending); err != nil {
			return err
		}
	}
	return w.foldIfNeeded(ctx)
}

// applyPending applies the turns pending when it is called inside the transaction, without
// holding the journal meanwhile: what the applier and reads do, which use no cache.
func (w *wtx) applyPending(ctx context.Context) error {
	j := w.s.jr
	if j == nil || w.holds || w.heldByCaller {
		return nil
	}
	j.mu.Lock()
	recs := slices.Clone(j.pending)
	j.mu.Unlock()
	return w.applyJournal(ctx, recs)
}

// applyJournal applies recs, the first pending records, inside the transaction; they leave
// the pending list once it commits.
func (w *wtx) applyJournal(ctx context.Context, recs []*journalRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `SAVEPOINT journal`); err != nil {
		return err
	}
	err := w.s.applyRecords(ctx, w, recs)
	if err != nil && models.ErrorCode(err) == models.ECONFLICT {
		// Ids are checked before they are journaled, so this is a record the database
		// cannot take (another process wrote its id meanwhile): apply the others one by one.
		if _, err := w.tx.ExecContext(ctx, `ROLLBACK TO journal`); err != nil {
			return err
		}
		err = nil
		for _, r := range recs {
			if _, err := w.tx.ExecContext(ctx, `SAVEPOINT one`); err != nil {
				return err
			}
			if err := w.s.applyRecords(ctx, w, []*journalRecord{r}); err != nil {
				if models.ErrorCode(err) != models.ECONFLICT {
					return err
				}
				w.s.log.Error("sqlite: a journaled turn conflicts with the database; dropped", "seq", r.Seq, "err", err)
				if _, err := w.tx.ExecContext(ctx, `ROLLBACK TO one`); err != nil {
					return err
				}
			}
			if _, err := w.tx.ExecContext(ctx, `RELEASE one`); err != nil {
				return err
			}
		}
	}
	if err != nil {
		return err
	}
	last := recs[len(recs)-1].Seq
	if err := w.putState(ctx, journalSeqKey, strconv.FormatUint(last, 10)); err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(ctx, `RELEASE journal`); err != nil {
		return err
	}
	w.appliedSeq = last
	return nil
}

// applyRecords writes records' surfacings, counters and conversation states in tx, in
// sequence order, as recordTx does for one turn. The caches counted them when journaled.
func (s *Store) applyRecords(ctx context.Context, tx *wtx, recs []*journalRecord) error {
	turns := make([]turn, len(recs))
	for i, r := range recs {
		turns[i] = turn{r.Surfacings, r.State}
	}
	_, err := s.recordTurnsTx(ctx, tx, turns) // the caches counted them when journaled
	return err
}

// dropApplied drops the records up to seq, which a committed transaction applied, from the
// pending list. The caller holds mu.
func (j *journal) dropApplied(seq uint64) {
	{
		i := 0
		for i < len(j.pending) && j.pending[i].Seq <= seq {
			for _, sf := range j.pending[i].Surfacings {
				delete(j.ids, [2]string{sf.Namespace, sf.ID})
			}
			if st := j.pending[i].State; st != nil {
				k := [2]string{st.Namespace, st.ConversationID}
				if j.states[k] == st {
					delete(j.states, k)
				}
			}
			i++
		}
		j.pending = slices.Delete(j.pending, 0, i)
		if len(j.pending) == 0 {
			j.pending = nil // let the applied records go
		}
		j.pendingN.Store(int64(len(j.pending)))
		j.applied.Add(1)
		// A failed truncation leaves applied records in the file; a replay skips them.
		_ = j.truncateLocked()
	}
}

// holdJournalLocked applies the pending turns, folds the stored surfacings into the counters,
// and returns holding the journal, so that no turn is journaled (and counted in the caches)
// until release is called: indexes load under it. The caller holds wmu. With no journal it
// only folds.
func (s *Store) holdJournalLocked(ctx context.Context) (release func(), err error) {
	j := s.jr
	if j == nil {
		if s.unfolded.Load() == 0 {
			return func() {}, nil
		}
		err := s.writeLocked(ctx, "fold surfacings", func(tx *wtx) (func(), error) {
			return nil, tx.fold(ctx)
		})
		return func() {}, err
	}
	j.mu.Lock()
	err = s.writeLocked(ctx, "apply surfacings", func(tx *wtx) (func(), error) {
		tx.heldByCaller = true
		if err := tx.applyJournal(ctx, j.pending); err != nil {
			return nil, err
		}
		return nil, tx.foldIfNeeded(ctx)
	})
	if err != nil {
		j.mu.Unlock()
		return nil, err
	}
	return j.mu.Unlock, nil
}

// pendingState returns a copy of the conversation's latest journaled state not yet applied.
func (j *journal) pendingState(ns, id string) *models.ConversationState {
	if j == nil || j.pendingN.Load() == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if st := j.states[[2]string{ns, id}]; st != nil {
		return cloneConversation(st)
	}
	return nil
}

// close stops the applier; the caller then applies what is pending and closes the file.
func (j *journal) stopApplier() {
	if j.stop != nil {
		j.stop()
	}
	j.done.Wait()
}
