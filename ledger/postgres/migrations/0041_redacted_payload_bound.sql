-- Schema 41: a redacted payload's kind, target and body digests are
-- bound to its payload digest on every path (issue 41).
--
-- A redacted payload row keeps no text, and up to here the database took
-- its kind and digests as sent: tollgate_guard('refund:77', <the digest
-- of a refund payload>, NULL /* redacted */, 'job', ...) was stored as
-- kind job under the auto rule for job*, status showed a job permitted
-- beside a refund's digest, and verify said ok, since without the text
-- nothing can be recomputed. The honest client cannot produce that row.
--
-- Now the writer of a redacted row sends its canonical text to the
-- database for that row alone, in the transaction-local setting
-- tollgate.redacted_text (set_config(..., true): held in the session's
-- memory until the transaction ends, never written to a table or the
-- WAL), and the payload row's trigger, which checks a retained row's
-- text, checks the sent text the same way: the canonical encoding of its
-- fields, hashing to the row's payload digest, its kind the row's kind,
-- its target's and body's digests the row's. It then clears the setting,
-- so one text binds one row. A redacted row written without its text is
-- refused (TG002, exit 77). The check sits where the row is written, so
-- the one-call functions (tollgate's client sets the text in the same
-- statement as the call) and the client's key transaction (a statement
-- before the payload's insert) are held to it alike; a copy (tollgate.copying)
-- brings rows checked where they were made. Rows written before this
-- version stay as they were: verify checks a redacted row's kind digest,
-- and cannot recompute the rest without the text (docs/postgres-roles.md).
SELECT tollgate_private.replace_in_function(41, 'tollgate_check_payload_row()'::regprocedure, t.old, t.new) FROM (VALUES
        (E'    v_text text := NEW.canonical;',
         E'    v_sent text := CASE WHEN NEW.redacted = 1 AND NEW.canonical IS NULL THEN nullif(current_setting(''tollgate.redacted_text'', true), '''') END;\n    v_text text := coalesce(NEW.canonical, v_sent);'),
        (E'    ELSIF NEW.canonical IS NOT NULL THEN',
         E'    ELSIF NEW.redacted = 1 AND NEW.canonical IS NULL AND v_sent IS NULL THEN\n        v_bad := ''a redacted payload whose text was not sent: the database hashes it, binds its kind, target and body digests to the payload digest, and keeps the digests only (tollgate.redacted_text, schema 41)'';\n    ELSIF v_text IS NOT NULL THEN'),
        (E'tollgate_sha256_hex(NEW.canonical)',
         E'tollgate_sha256_hex(coalesce(NEW.canonical, v_sent))'),
        (E'    RETURN NEW;\nEND',
         E'    IF v_sent IS NOT NULL THEN\n        PERFORM set_config(''tollgate.redacted_text'', '''', true);\n    END IF;\n    RETURN NEW;\nEND')
    ) AS t(old, new);
