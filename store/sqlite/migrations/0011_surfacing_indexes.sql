-- A surfacing is written once per result of every turn, so each of its indexes costs every
-- turn: ten entries, and the memory-keyed one ten random pages of the write-ahead log. The
-- lookups run by a conversation — engagement resolving a memory's latest surfacing in the
-- conversation it reports on — are served by one index keyed by conversation and memory
-- (ten entries near each other), which replaces both the conversation index and the
-- memory-keyed one. No query looks surfacings up by memory alone; one that does scans.
DROP INDEX surfacings_memory;
DROP INDEX surfacings_conversation;
CREATE INDEX surfacings_conversation_memory ON surfacings (ns, conversation_id, memory_id, at, id);
