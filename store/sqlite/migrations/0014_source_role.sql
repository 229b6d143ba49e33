-- Whose words a memory holds: 'user', 'assistant' (the bot's own reply), or '' — unknown, as
-- every memory stored before has, and read as the user's.
ALTER TABLE memories ADD COLUMN role TEXT NOT NULL DEFAULT '';
