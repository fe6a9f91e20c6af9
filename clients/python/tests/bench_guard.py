"""The Python client's guard over HTTP against the same client spawning
the CLI, driven by Go's BenchmarkPythonGuard (clients/bench_test.go).

Usage: bench_guard.py SRC URL BINARY DB. Each line read from stdin is one
round: a guard of a new key through the service and one through the
binary, on the same ledger, in an order that alternates round by round
(so neither always runs second); the round prints both durations in
nanoseconds. Standard input closing ends the run.
"""

import os
import secrets
import sys
import time

sys.path.insert(0, sys.argv[1])
from tollgate_guard import Client  # noqa: E402

url, binary, db = sys.argv[2:5]
over_http = Client(url=url)
spawning = Client(binary, db=db, env=os.environ)
run = secrets.token_hex(4)


def timed(client: Client, key: str) -> int:
    start = time.perf_counter_ns()
    client.request_permit(key, kind="report.daily", target="acct-7", body={"run": run})
    return time.perf_counter_ns() - start


# The kept-alive connection is opened before the first round, as an
# agent's first call opens it once.
over_http.epoch()
for n, _ in enumerate(sys.stdin):
    http_key, spawn_key = "report-http-%s:%d" % (run, n), "report-spawn-%s:%d" % (run, n)
    if n % 2 == 0:
        h, s = timed(over_http, http_key), timed(spawning, spawn_key)
    else:
        s, h = timed(spawning, spawn_key), timed(over_http, http_key)
    print(h, s, flush=True)
