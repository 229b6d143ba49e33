-- Each surfacing records the server-side latency of the recall call that produced it (the
-- retrieval-latency metric), and the surfacings of one turn are found by turn id (engagement
-- strengthens co_retrieved edges between the memories used in the same turn).
ALTER TABLE surfacings ADD COLUMN latency_ms REAL NOT NULL DEFAULT 0;
CREATE INDEX surfacings_turn ON surfacings (ns, turn_id, at, id);
