#!/usr/bin/env python3
"""Fold PostgreSQL migrations into the schema's definition files.

Usage: pgschema-fold.py DUMP MIGRATIONS_DIR OUT_DIR

DUMP is `pg_dump --schema-only --no-owner` of a database that the
migrations in MIGRATIONS_DIR made (and tollgate identified). The dump's
objects are written to OUT_DIR by what they define (schemas, functions,
tables with their indexes and constraints, triggers, grants), each once,
each after the comment block that preceded its last definition in the
migrations, which says why it is so. What the Go code defines itself
(tollgate_refresh_index, made from the state machine's SQL) is left out.
Prose above a file's objects and the static rows below them are kept
(see ABOVE and BELOW).

This is how the baseline was made from development migrations 7-42; it
is kept so that folding is mechanical, not for everyday changes (those
edit the files and add a forward migration).
"""
import os
import re
import sys

GO_DEFINED = {"tollgate_refresh_index"}
VIEW_FUNCTIONS = {"tollgate_sees_bodies"}  # defined with the views that call it
# Tables come first, then the views (with the function they call), then
# the functions (whose arguments and results may be the tables' and
# views' row types).
FILES = {
    "SCHEMA": "10_schemas.sql",
    "TABLE": "20_tables.sql", "SEQUENCE": "20_tables.sql",
    "SEQUENCE OWNED BY": "20_tables.sql", "DEFAULT": "20_tables.sql", "CONSTRAINT": "20_tables.sql",
    "FK CONSTRAINT": "20_tables.sql", "INDEX": "20_tables.sql", "ROW SECURITY": "20_tables.sql",
    "FUNCTION": "40_functions.sql",
    "VIEW": "30_views.sql",
    "TRIGGER": "50_triggers.sql",
    "ACL": "60_grants.sql", "POLICY": "60_grants.sql",
}
# An output file keeps what is written above this line (its prose, the
# roles), and what is written below it (the static rows, say), by hand.
ABOVE = "-- Objects (pgschema-fold.py writes what follows, up to the rows):\n"
BELOW = "-- Rows (kept by pgschema-fold.py):\n"
HEADER = re.compile(r"^--\n-- Name: (?P<name>.*?); Type: (?P<type>[A-Z ]+); Schema: (?P<schema>[^;]*); Owner: .*\n--\n", re.M)


def migrations(d):
    out = []
    for f in sorted(os.listdir(d)):
        if f.endswith(".sql"):
            out.append((f, open(os.path.join(d, f)).read()))
    return out


def comment_before(text, pos):
    """The comment lines right above pos, or else those that open the
    paragraph (lines up to a blank one) that pos is in: a migration may
    explain a few statements with one comment."""
    lines = text[:pos].split("\n")[:-1]
    block = []
    while lines and lines[-1].startswith("--"):
        block.insert(0, lines.pop())
    if block:
        return block
    para = []
    while lines and lines[-1].strip():
        para.insert(0, lines.pop())
    for line in para:
        if not line.startswith("--"):
            break
        block.append(line)
    return block


def why(migs, typ, name):
    """The comment above the last definition of the object in the migrations."""
    base = name.split("(")[0].split(".")[-1]
    if typ == "FUNCTION":
        pat = r"CREATE (OR REPLACE )?FUNCTION (public\.|tollgate_private\.)?%s\s*\(" % re.escape(base)
    elif typ in ("TABLE", "VIEW"):
        # A table and a view may share a name in the two schemas.
        pat = r"CREATE (OR REPLACE )?%s (IF NOT EXISTS )?(public\.|tollgate_private\.)?%s\b" % (typ, re.escape(base))
    elif typ == "TRIGGER":
        pat = r"CREATE (OR REPLACE )?(CONSTRAINT )?TRIGGER %s\b" % re.escape(name.split(" ")[-1])
    else:
        return [], None
    for f, text in reversed(migs):
        ms = list(re.finditer(pat, text))
        if ms:
            block = comment_before(text, ms[-1].start())
            return block, f
    return [], None


def changed_in_place(migs):
    """Functions each migration changed one statement of
    (tollgate_private.replace_in_function), with the migration's title:
    their why is that migration's, which the catalog's text cannot carry."""
    out = {}
    for f, text in migs:
        if "replace_in_function(" not in text:
            continue
        para = []
        for line in text.split("\n"):
            if not line.startswith("--") or line.strip() == "--":
                break
            para.append(line[2:].strip())
        title = " ".join(para)
        for call in text.split("replace_in_function(")[1:]:
            call = re.split(r"\n(?:CREATE |--|SELECT |ALTER |GRANT |REVOKE |DROP )", call, maxsplit=1)[0]
            for m in re.finditer(r"'(?:public\.|tollgate_private\.)?([a-z_]+)\(", call):
                out.setdefault(m.group(1), [])
                if title not in out[m.group(1)]:
                    out[m.group(1)].append(title)
    return out


def main():
    dump, migdir, out = sys.argv[1:4]
    text = open(dump).read()
    migs = migrations(migdir)
    in_place = changed_in_place(migs)
    heads = list(HEADER.finditer(text))
    files = {}
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[h.end():end].strip()
        body = "\n".join(l for l in body.split("\n") if not l.startswith("\\") and not l.startswith("-- PostgreSQL database dump")).strip()
        typ, name = h.group("type"), h.group("name")
        if any(g in name for g in GO_DEFINED):
            continue
        if typ not in FILES:
            raise SystemExit("unknown object type %s (%s)" % (typ, name))
        block, src = why(migs, typ, name)
        dest = FILES[typ]
        if typ == "FUNCTION" and name.split("(")[0] in VIEW_FUNCTIONS:
            dest = FILES["VIEW"]
        parts = []
        if block:
            parts.append("\n".join(block))
        if typ == "FUNCTION":
            for title in in_place.get(name.split("(")[0], []):
                words = ("Changed in place since by development " + title[0].lower() + title[1:] +
                         " (that migration, in the history, says more).").split()
                lines, cur = [], "--"
                for w in words:
                    if len(cur) + 1 + len(w) > 72:
                        lines.append(cur)
                        cur = "--"
                    cur += " " + w
                parts.append("\n".join(lines + [cur]))
        parts.append(body)
        files.setdefault(dest, []).append("\n".join(parts))
    for f, objs in files.items():
        path = os.path.join(out, f)
        above, below = "", ""
        if os.path.exists(path):
            old = open(path).read()
            if ABOVE in old:
                above = old[:old.index(ABOVE) + len(ABOVE)] + "\n"
            if BELOW in old:
                below = "\n" + old[old.index(BELOW):]
        with open(path, "w") as w:
            w.write(above + "\n\n".join(objs).rstrip() + "\n" + below)


if __name__ == "__main__":
    main()
