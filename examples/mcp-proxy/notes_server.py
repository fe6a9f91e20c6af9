#!/usr/bin/env python3
"""A tiny MCP server (stdio, standard library only) to put `tollgate mcp
proxy` in front of: add_note writes a line to $NOTES_FILE (an action,
guarded by the proxy), list_notes reads them (marked read-only, so the
proxy lets it pass unguarded). Any MCP server is wrapped the same way.
"""

import json
import os
import sys

NOTES = os.environ.get("NOTES_FILE", "notes.txt")
TOOLS = [
    {"name": "add_note", "description": "Append a note.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "list_notes", "description": "Read the notes.", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {}}},
]


def call(name, args):
    if name == "add_note":
        with open(NOTES, "a") as f:
            f.write(args["text"] + "\n")
        return "noted"
    if name == "list_notes":
        return open(NOTES).read() if os.path.exists(NOTES) else ""
    raise KeyError(name)


def answer(msg):
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}},
                "serverInfo": {"name": "notes", "version": "1.0.0"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        try:
            text = call(params["name"], params.get("arguments") or {})
            return {"content": [{"type": "text", "text": text}]}
        except (KeyError, OSError) as e:
            return {"content": [{"type": "text", "text": "error: %s" % e}], "isError": True}
    raise LookupError(method)


for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue  # a notification (notifications/initialized)
    try:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": answer(msg)}
    except LookupError as e:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no method %s" % e}}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
