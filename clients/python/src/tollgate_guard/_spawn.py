"""The process transport: runs the ``tollgate`` binary with ``--json`` for
each call and reads its answer and exit code.

Every call is a separate process, as a cron-driven agent's would be; the
ledger, not this object, holds the state, so an agent that crashes and
starts again asks the same questions and gets the same answers.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from .errors import BinaryNotFound, NotFound, TollgateError, error_for


class SpawnTransport:
    """The agent's calls as ``tollgate`` processes: the Client's transport
    for ``binary=`` and ``db=``."""

    def __init__(self, binary: str, *, db: Optional[str], timeout: float, env: Optional[Mapping[str, str]],
                 retry_for: Optional[float], attempt_timeout: Optional[float]) -> None:
        self.binary = binary
        self.db = db
        self.timeout = timeout
        self.env = dict(env) if env is not None else None
        # How long each call rides out a transient fault (a database
        # restarting, a locked ledger) before LedgerUnavailable: passed to
        # the binary, which retries with backoff; None keeps its default.
        self.retry_for = retry_for
        # Each attempt's bound, passed as --attempt-timeout: without one a
        # hung attempt would wait out the whole of retry_for (or timeout).
        self.attempt_timeout = attempt_timeout

    def close(self) -> None:
        """Nothing is kept between calls."""

    def run(self, command: Sequence[str], args: Sequence[str], stdin: Optional[str] = None) -> Tuple[int, Dict[str, Any]]:
        """Run one command; return its exit code and JSON answer."""
        argv = [self.binary]
        if self.db:
            argv += ["--db", self.db]
        argv += list(command) + list(args) + ["--json"]
        if self.retry_for is not None:
            argv += ["--retry-for", "%dms" % int(self.retry_for * 1000)]
        if self.attempt_timeout is not None:
            argv += ["--attempt-timeout", "%dms" % int(self.attempt_timeout * 1000)]
        name = " ".join(command)
        try:
            proc = subprocess.run(argv, input=stdin if stdin is not None else "", capture_output=True, text=True,
                                  timeout=self.timeout, env=self.env)
        except (FileNotFoundError, PermissionError, OSError) as exc:
            raise BinaryNotFound("cannot run tollgate at %r: %s" % (self.binary, exc.strerror or exc)) from None
        except subprocess.TimeoutExpired:
            raise TollgateError("tollgate %s did not answer within %gs; the same call again is safe (every write is idempotent)"
                                % (name, self.timeout)) from None
        try:
            answer = json.loads(proc.stdout)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise BinaryNotFound("%r is not a tollgate binary this client understands: %s printed no JSON answer (exit %d)"
                                 % (self.binary, name, proc.returncode))
        return proc.returncode, answer

    def call(self, command: Sequence[str], args: Sequence[str], stdin: Optional[str] = None) -> Dict[str, Any]:
        """Run one command and return its answer, or raise what it says."""
        code, answer = self.run(command, args, stdin)
        if code != 0:
            raise error_for(code, answer, " ".join(command))
        return answer

    def guard(self, key: str, payload: Mapping[str, str], *, agent: Optional[str], lease_ms: Optional[int],
              redact: bool, context: Optional[Mapping[str, Any]], attempt_id: Optional[str]) -> Dict[str, Any]:
        """``tollgate guard KEY --payload-json -``. The binary makes its own
        attempt id when it talks to a service, so one cannot be chosen."""
        if attempt_id is not None:
            raise TypeError("attempt_id is for the service transport (url=): the tollgate binary makes its own")
        args = [key, "--payload-json", "-"]
        if agent:
            args += ["--agent", agent]
        if lease_ms is not None:
            args += ["--lease", "%dms" % lease_ms]
        if redact:
            args.append("--redact")
        if context:
            args += ["--context", json.dumps(context, ensure_ascii=False, allow_nan=False)]
        return self.call(["guard"], args, stdin=json.dumps(dict(payload), ensure_ascii=False))

    def report(self, key: str, permit_id: str, outcome: str, *, ref: Optional[str],
               latency_ms: Optional[int]) -> Dict[str, Any]:
        """``tollgate report KEY --permit ID --outcome O``."""
        args = [key, "--permit", permit_id, "--outcome", outcome]
        if ref:
            args += ["--ref", ref]
        if latency_ms is not None:
            args += ["--latency", "%dms" % latency_ms]
        return self.call(["report"], args)

    def status(self, key: str) -> Dict[str, Any]:
        """``tollgate status KEY``."""
        return self.call(["status"], [key])

    def epoch(self) -> Optional[str]:
        """``tollgate epoch show``: the active epoch, or None (also before
        the ledger exists: an agent's first run has nothing to fence
        against)."""
        try:
            answer = self.call(["epoch", "show"], [])
        except NotFound:
            return None
        return answer.get("epoch") or None
