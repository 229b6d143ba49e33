-- The name of the embedder that made each namespace's vectors (embed.Embedder.Name), recorded
-- with its first vectors: two models' vectors of one size cannot be compared either. Namespaces
-- embedded before keep '' until a server's start records the embedder that serves them
-- (embed.Resolve): the data cannot tell a lexical vector from an OpenAI-compatible one.
ALTER TABLE namespaces ADD COLUMN embedder TEXT NOT NULL DEFAULT '';
