-- A/B experiments (DESIGN §8). The variants and their overrides are one JSON document: they
-- are read and written whole, never queried. A namespace runs at most one experiment at a
-- time, which the partial unique index enforces under concurrent creates.
CREATE TABLE experiments (
    ns          TEXT    NOT NULL,
    id          TEXT    NOT NULL,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    status      TEXT    NOT NULL,
    variants    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    created_by  TEXT    NOT NULL DEFAULT '',
    stopped_at  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ns, id)
);
CREATE UNIQUE INDEX experiments_running ON experiments (ns) WHERE status = 'running';
-- Each surfacing and each threshold decision records the experiment its variant belongs to;
-- a decision also records the turn's latency, so a report counts every turn, empty ones
-- included. The partial indexes cover the report's tally and cost nothing outside
-- experiments.
ALTER TABLE surfacings ADD COLUMN experiment_id TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN experiment_id TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN latency_ms REAL NOT NULL DEFAULT 0;
CREATE INDEX surfacings_experiment ON surfacings (ns, experiment_id, variant, at, mode, outcome, outcome_at) WHERE experiment_id != '';
CREATE INDEX decisions_experiment ON decisions (ns, experiment_id, variant, at, conversation_id, latency_ms) WHERE experiment_id != '';
