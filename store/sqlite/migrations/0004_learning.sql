-- The relevance model (package learn): each event's position in its namespace's
-- application order, the words a surfacing's query had, the model's probability and version
-- when a memory was shown, and the words a memory learned from the turns that used it.
ALTER TABLE events ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
-- Events logged before this migration are numbered in the order they were inserted.
UPDATE events SET seq = r.n
FROM (SELECT rowid AS rid, ROW_NUMBER() OVER (PARTITION BY ns ORDER BY rowid) AS n FROM events) AS r
WHERE events.rowid = r.rid;
CREATE INDEX events_seq ON events (ns, seq);
ALTER TABLE surfacings ADD COLUMN terms TEXT NOT NULL DEFAULT '';
ALTER TABLE surfacings ADD COLUMN p_use REAL NOT NULL DEFAULT 0;
ALTER TABLE surfacings ADD COLUMN model_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN learned TEXT NOT NULL DEFAULT '';
