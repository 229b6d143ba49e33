-- Salience's embedded store. Times are unix nanoseconds UTC (0 = unset), so they sort as
-- integers; list fields are JSON text ('' = empty); embeddings are little-endian float32 BLOBs.

-- The embedding dimension of each namespace, fixed by its first embedded memory.
CREATE TABLE namespaces (
	ns   TEXT NOT NULL PRIMARY KEY,
	dims INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- Memories and their chunks (parent_id set). Chunks are never listed, hence the partial
-- indexes on parent_id = ''.
CREATE TABLE memories (
	ns                  TEXT NOT NULL,
	id                  TEXT NOT NULL,
	parent_id           TEXT NOT NULL DEFAULT '',
	kind                TEXT NOT NULL,
	content             TEXT NOT NULL,
	created_at          INTEGER NOT NULL,
	valid_at            INTEGER NOT NULL DEFAULT 0,
	invalid_at          INTEGER NOT NULL DEFAULT 0,
	conversation_id     TEXT NOT NULL DEFAULT '',
	message_id          TEXT NOT NULL DEFAULT '',
	speaker             TEXT NOT NULL DEFAULT '',
	importance          REAL NOT NULL DEFAULT 0,
	domains             TEXT NOT NULL DEFAULT '',
	triggers            TEXT NOT NULL DEFAULT '',
	concepts            TEXT NOT NULL DEFAULT '',
	triple              TEXT NOT NULL DEFAULT '',
	sensitive           INTEGER NOT NULL DEFAULT 0,
	chunk_index         INTEGER NOT NULL DEFAULT 0,
	chunk_count         INTEGER NOT NULL DEFAULT 0,
	confidence          REAL NOT NULL DEFAULT 0,
	usage_count         INTEGER NOT NULL DEFAULT 0,
	last_used           INTEGER NOT NULL DEFAULT 0,
	surface_count       INTEGER NOT NULL DEFAULT 0,
	last_surfaced       INTEGER NOT NULL DEFAULT 0,
	recent_dismissals   REAL NOT NULL DEFAULT 0,
	irrelevant_contexts TEXT NOT NULL DEFAULT '',
	schedule            TEXT NOT NULL DEFAULT '',
	embedding           BLOB,
	PRIMARY KEY (ns, id)
);
CREATE INDEX memories_parent ON memories (ns, parent_id) WHERE parent_id != '';
CREATE INDEX memories_created ON memories (ns, created_at, id) WHERE parent_id = '';
CREATE INDEX memories_kind ON memories (ns, kind, created_at, id) WHERE parent_id = '';
CREATE INDEX memories_conversation ON memories (ns, conversation_id, created_at, id) WHERE parent_id = '';

CREATE TABLE concepts (
	ns         TEXT NOT NULL,
	name       TEXT NOT NULL,
	kind       TEXT NOT NULL,
	aliases    TEXT NOT NULL DEFAULT '',
	mentions   INTEGER NOT NULL DEFAULT 0,
	first_seen INTEGER NOT NULL DEFAULT 0,
	last_seen  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (ns, name)
) WITHOUT ROWID;

-- Edges are stored once per (src, dst, type) and traversed both ways, hence edges_dst.
CREATE TABLE edges (
	ns               TEXT NOT NULL,
	src              TEXT NOT NULL,
	dst              TEXT NOT NULL,
	type             TEXT NOT NULL,
	weight           REAL NOT NULL,
	co_occurrences   INTEGER NOT NULL DEFAULT 0,
	last_co_occurred INTEGER NOT NULL DEFAULT 0,
	last_decayed     INTEGER NOT NULL DEFAULT 0,
	predicate        TEXT NOT NULL DEFAULT '',
	fact             TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (ns, src, dst, type)
) WITHOUT ROWID;
CREATE INDEX edges_dst ON edges (ns, dst);

CREATE TABLE surfacings (
	ns                TEXT NOT NULL,
	id                TEXT NOT NULL,
	conversation_id   TEXT NOT NULL DEFAULT '',
	turn_id           TEXT NOT NULL DEFAULT '',
	memory_id         TEXT NOT NULL DEFAULT '',
	mode              TEXT NOT NULL DEFAULT '',
	rank              INTEGER NOT NULL DEFAULT 0,
	score             REAL NOT NULL DEFAULT 0,
	components        TEXT NOT NULL DEFAULT '',
	conversation_type TEXT NOT NULL DEFAULT '',
	threshold         REAL NOT NULL DEFAULT 0,
	arm_probability   REAL NOT NULL DEFAULT 0,
	variant           TEXT NOT NULL DEFAULT '',
	concepts          TEXT NOT NULL DEFAULT '',
	at                INTEGER NOT NULL,
	outcome           TEXT NOT NULL DEFAULT '',
	outcome_at        INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (ns, id)
);
CREATE INDEX surfacings_at ON surfacings (ns, at, id);
CREATE INDEX surfacings_conversation ON surfacings (ns, conversation_id, at, id);
CREATE INDEX surfacings_memory ON surfacings (ns, memory_id, at, id);
-- The implicit-ignore job looks for surfacings without an outcome across namespaces.
CREATE INDEX surfacings_pending ON surfacings (at, id) WHERE outcome = '';

-- The engagement log: append-only, idempotent by (ns, id).
CREATE TABLE events (
	ns              TEXT NOT NULL,
	id              TEXT NOT NULL,
	surfacing_id    TEXT NOT NULL DEFAULT '',
	memory_id       TEXT NOT NULL DEFAULT '',
	conversation_id TEXT NOT NULL DEFAULT '',
	type            TEXT NOT NULL,
	at              INTEGER NOT NULL,
	concepts        TEXT NOT NULL DEFAULT '',
	implicit        INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (ns, id)
);
CREATE INDEX events_at ON events (ns, at, id);
CREATE INDEX events_at_all ON events (at, id);

CREATE TABLE conversations (
	ns            TEXT NOT NULL,
	id            TEXT NOT NULL,
	type          TEXT NOT NULL DEFAULT '',
	turns         INTEGER NOT NULL DEFAULT 0,
	recent_topics TEXT NOT NULL DEFAULT '',
	message_times TEXT NOT NULL DEFAULT '',
	participants  TEXT NOT NULL DEFAULT '',
	updated_at    INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (ns, id)
) WITHOUT ROWID;

CREATE TABLE queue (
	ns        TEXT NOT NULL,
	memory_id TEXT NOT NULL,
	due_at    INTEGER NOT NULL DEFAULT 0,
	score     REAL NOT NULL DEFAULT 0,
	queued_at INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (ns, memory_id)
) WITHOUT ROWID;
CREATE INDEX queue_score ON queue (ns, score DESC, memory_id);

CREATE TABLE leases (
	name       TEXT NOT NULL PRIMARY KEY,
	holder     TEXT NOT NULL,
	expires_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE job_runs (
	id           TEXT NOT NULL PRIMARY KEY,
	job          TEXT NOT NULL,
	holder       TEXT NOT NULL DEFAULT '',
	trigger_kind TEXT NOT NULL DEFAULT '',
	started_at   INTEGER NOT NULL DEFAULT 0,
	ended_at     INTEGER NOT NULL DEFAULT 0,
	items        INTEGER NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT '',
	finished     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX job_runs_job ON job_runs (job, started_at, id);
CREATE INDEX job_runs_started ON job_runs (started_at, id);

CREATE TABLE state (
	key   TEXT NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
