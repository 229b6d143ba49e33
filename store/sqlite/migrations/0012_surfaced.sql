-- A memory's surfacing counters (surface_count, last_surfaced) move to their own compact
-- table, folded from the surfacings in the background (surfaced.go). Bumping them in the
-- memories rows cost every turn ten random pages of the largest table (a row holds the
-- embedding: two or three rows a page); folding a few thousand turns at once into this
-- table writes each of its pages (about 75 memories a page) once. The memories columns stay
-- for older builds but are no longer read or kept.
CREATE TABLE surfaced (
	ns   TEXT NOT NULL,
	id   TEXT NOT NULL,
	n    INTEGER NOT NULL,
	last INTEGER NOT NULL,
	PRIMARY KEY (ns, id)
) WITHOUT ROWID;
INSERT INTO surfaced (ns, id, n, last)
	SELECT ns, id, surface_count, last_surfaced FROM memories
	WHERE surface_count != 0 OR last_surfaced != -9223372036854775807 - 1;
-- Every surfacing stored so far was counted in its memory's row: the fold starts after them.
INSERT INTO state (key, value) SELECT 'sqlite.surfaced_through', CAST(coalesce(max(rowid), 0) AS TEXT) FROM surfacings WHERE true;
