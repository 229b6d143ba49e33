-- A memory's surfacing counters are now written with the turn that surfaces it, instead of
-- folded later from the surfacings after a watermark: the surfacings an older build stored
-- but had not folded are counted here, once, and the watermark goes.
INSERT INTO surfaced (ns, id, n, last)
	SELECT ns, memory_id, count(*), max(at) FROM surfacings
	WHERE rowid > coalesce((SELECT CAST(value AS INTEGER) FROM state WHERE key = 'sqlite.surfaced_through'), 0)
		AND EXISTS (SELECT 1 FROM memories m WHERE m.ns = surfacings.ns AND m.id = surfacings.memory_id)
	GROUP BY ns, memory_id
	ON CONFLICT (ns, id) DO UPDATE SET n = n + excluded.n, last = max(last, excluded.last);
DELETE FROM state WHERE key = 'sqlite.surfaced_through';
