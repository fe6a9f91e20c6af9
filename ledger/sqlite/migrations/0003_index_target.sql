-- The console's filter matches the target too. Redacted payloads keep no
-- target, so theirs stays empty; intents recorded outside tollgate have none.
ALTER TABLE action_index ADD COLUMN target TEXT NOT NULL DEFAULT '';
UPDATE action_index SET target = (
    SELECT json_extract(p.canonical, '$.target') FROM payloads p
    WHERE p.action_key = action_index.action_key AND p.canonical IS NOT NULL)
WHERE EXISTS (SELECT 1 FROM payloads p WHERE p.action_key = action_index.action_key AND p.canonical IS NOT NULL);
