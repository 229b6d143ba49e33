-- No query reads surfacings by experiment any more: since 0016 the reports read counters that
-- the write paths keep (models/tally.go). The index only cost every experiment surfacing an
-- entry to insert, and every outcome reported on one an entry to rewrite.
DROP INDEX IF EXISTS surfacings_experiment;
