#!/usr/bin/env python3
"""An MCP client (standard library only) that starts `tollgate mcp proxy`
in front of notes_server.py and makes one tools/call through it: the call
is guarded (kind mcp.add_note), forwarded only with a permit, and its
result reported. An agent's MCP client (Claude, Cursor, an SDK) does the
same once `tollgate mcp install --proxy` has configured it.

    tollgate policy set mcp.add_note --mode auto     # or approval: the call then answers PENDING
    python3 examples/mcp-proxy/call.py "buy milk" note:milk

Exit 0 when the call went through, 75 when it waits for an operator, 10
when the same call already ran (it is not forwarded again: the proxy
answers with the result it stored, marked replayed in _meta), 1 for any
other refusal (denied, conflict...), printed.
"""

import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
text, key = sys.argv[1], sys.argv[2]
proxy = subprocess.Popen([os.environ.get("TOLLGATE_BIN", "tollgate"), "mcp", "proxy", "--agent", "notes-bot", "--",
                          sys.executable, os.path.join(here, "notes_server.py")],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def rpc(id, method, params):
    proxy.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n")
    proxy.stdin.flush()
    for line in proxy.stdout:
        msg = json.loads(line)
        if msg.get("id") == id:
            if "error" in msg:
                sys.exit("%s: %s" % (method, msg["error"]))
            return msg["result"]
    sys.exit("the proxy closed before answering %s" % method)


rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "notes-example", "version": "1"}})
proxy.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
tools = [t["name"] for t in rpc(2, "tools/list", {})["tools"]]
print("tools:", ", ".join(tools))
# idempotency_key is the proxy's own argument: the same key is the same
# action, however often the agent retries it.
result = rpc(3, "tools/call", {"name": "add_note", "arguments": {"text": text, "idempotency_key": key}})
said = " ".join(c.get("text", "") for c in result.get("content", []))
action = result.get("_meta", {}).get("io.tollgate/action", {})
replayed = action.get("replayed") and action.get("state") in ("succeeded", "failed") and not said.startswith("SETTLED")
print(("replayed: " if replayed else "refused: " if result.get("isError") else "result: ") + said)
proxy.stdin.close()
proxy.wait()
if replayed:
    sys.exit(10)
if not result.get("isError"):
    sys.exit(0)
sys.exit(75 if said.startswith("PENDING") else 10 if said.startswith("SETTLED") else 1)
