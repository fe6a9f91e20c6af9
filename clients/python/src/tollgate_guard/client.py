"""The client: runs the ``tollgate`` binary with ``--json`` and turns its
answers and exit codes into values and exceptions.

Every call is a separate process, as a cron-driven agent's would be; the
ledger, not this object, holds the state, so an agent that crashes and
starts again asks the same questions and gets the same answers.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import time
import warnings
from types import TracebackType
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Type, Union

from .errors import BinaryNotFound, LeaseLapsed, NotFound, TollgateError, error_for, parse_time

Body = Union[str, Mapping[str, Any], Sequence[Any]]

#: Outcomes a permit holder reports.
OUTCOMES = ("succeeded", "failed", "unknown")


def authority_key(epoch: str, logical: str) -> str:
    """Return the epoch-qualified key ``hsr1:<epoch>:<logical>``.

    ``logical`` is the destination's stable business key (for example
    ``refund:ledger-entry-42``); keep passing that one to the destination
    as its own idempotency key.
    """
    if not epoch or not logical:
        raise ValueError("authority_key needs an epoch and a logical key")
    return "hsr1:%s:%s" % (epoch, logical)


def _body_text(body: Body) -> str:
    """A body is text; a mapping or list is sent as canonical JSON (sorted
    keys, no spaces), so the same arguments always give the same digest."""
    if isinstance(body, str):
        return body
    if isinstance(body, (bytes, bytearray)):
        raise TypeError("body must be text (str) or JSON-able data, not bytes")
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _duration(seconds: Union[float, _dt.timedelta]) -> str:
    """A Go duration string in whole milliseconds."""
    if isinstance(seconds, _dt.timedelta):
        seconds = seconds.total_seconds()
    return "%dms" % max(0, round(seconds * 1000))


class Client:
    """Runs ``tollgate`` for an agent.

    ``binary`` is the path of the ``tollgate`` binary; when omitted,
    ``$TOLLGATE_BIN``, then ``tollgate`` on ``PATH``. ``db`` is the ledger
    (a file path or a ``postgres://`` URL); when omitted the binary uses
    ``$TOLLGATE_DB``. ``agent`` names the calling agent in the evidence.
    ``timeout`` bounds each command in seconds. ``retry_for`` (seconds)
    is how long the binary rides out a transient fault before the call
    raises ``LedgerUnavailable`` or ``CommitUnknown``; ``attempt_timeout``
    (seconds) how long one attempt may wait for the database (a lock held
    by another session, a server that stopped answering) before it is
    abandoned and made again within ``retry_for``. ``None`` keeps the
    binary's defaults (``$TOLLGATE_RETRY_FOR``, ``$TOLLGATE_ATTEMPT_TIMEOUT``,
    else 30 s and 10 s).
    """

    def __init__(self, binary: Optional[str] = None, *, db: Optional[str] = None, agent: Optional[str] = None,
                 timeout: float = 60.0, env: Optional[Mapping[str, str]] = None,
                 retry_for: Optional[float] = None, attempt_timeout: Optional[float] = None) -> None:
        path = binary or os.environ.get("TOLLGATE_BIN") or shutil.which("tollgate")
        if not path:
            raise BinaryNotFound("no tollgate binary: pass binary=, set TOLLGATE_BIN, or put tollgate on PATH")
        self.binary = path
        self.db = db
        self.agent = agent
        self.timeout = timeout
        self.env = dict(env) if env is not None else None
        # How long each call rides out a transient fault (a database
        # restarting, a locked ledger) before LedgerUnavailable: passed to
        # the binary, which retries with backoff; None keeps its default.
        self.retry_for = retry_for
        # Each attempt's bound, passed as --attempt-timeout: without one a
        # hung attempt would wait out the whole of retry_for (or timeout).
        self.attempt_timeout = attempt_timeout

    def _run(self, command: Sequence[str], args: Sequence[str], stdin: Optional[str] = None) -> Tuple[int, Dict[str, Any]]:
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

    def _call(self, command: Sequence[str], args: Sequence[str], stdin: Optional[str] = None) -> Dict[str, Any]:
        code, answer = self._run(command, args, stdin)
        if code != 0:
            raise error_for(code, answer, " ".join(command))
        return answer

    def guard(self, key: str, *, kind: str, target: str, body: Body, agent: Optional[str] = None,
              lease: Union[float, _dt.timedelta, None] = None, redact: bool = False,
              failure_types: Union[Type[BaseException], Tuple[Type[BaseException], ...]] = (),
              context: Optional[Dict[str, Any]] = None) -> "Guard":
        """Return a context manager that enters only with a permit.

        ``with client.guard(key, kind=..., target=..., body=...) as permit:``
        raises ``ApprovalPending``, ``ActionDenied``, ``OutcomeUncertain``,
        ``AlreadySettled`` or ``KeyConflict`` instead of entering. Leaving
        the block reports ``succeeded``; an exception of one of
        ``failure_types`` reports ``failed``; any other exception reports
        ``unknown`` (the key becomes uncertain, for an operator). The
        exception is always re-raised. ``lease`` (seconds) is how long the
        permit holder has to report. ``context`` (a dict of strings,
        numbers, booleans and lists of strings) is what policy may read
        beside the payload; it is bound to the key like the payload.
        """
        return Guard(self, key, kind=kind, target=target, body=body, agent=agent or self.agent, lease=lease,
                     redact=redact, failure_types=failure_types, context=context)

    def request_permit(self, key: str, *, kind: str, target: str, body: Body, agent: Optional[str] = None,
                       lease: Union[float, _dt.timedelta, None] = None, redact: bool = False,
                       context: Optional[Dict[str, Any]] = None) -> "Permit":
        """Run ``tollgate guard`` once and return the permit, or raise what
        the answer says. Prefer ``guard``, which also reports."""
        payload = json.dumps({"kind": kind, "target": target, "body": _body_text(body)}, ensure_ascii=False)
        args = [key, "--payload-json", "-"]
        if agent or self.agent:
            args += ["--agent", agent or self.agent or ""]
        if lease is not None:
            args += ["--lease", _duration(lease)]
        if redact:
            args.append("--redact")
        if context:
            args += ["--context", json.dumps(context, ensure_ascii=False, allow_nan=False)]
        return Permit(self, self._call(["guard"], args, stdin=payload))

    def report(self, key: str, permit_id: str, outcome: str, *, ref: Optional[str] = None,
               latency: Union[float, _dt.timedelta, None] = None) -> Dict[str, Any]:
        """Report a permitted action's outcome: succeeded, failed or unknown."""
        if outcome not in OUTCOMES:
            raise ValueError("outcome must be one of %s (got %r)" % (", ".join(OUTCOMES), outcome))
        args = [key, "--permit", permit_id, "--outcome", outcome]
        if ref:
            args += ["--ref", ref]
        if latency is not None:
            args += ["--latency", _duration(latency)]
        return self._call(["report"], args)

    def status(self, key: str) -> Dict[str, Any]:
        """Everything the ledger knows about a key (``tollgate status``)."""
        return self._call(["status"], [key])

    def epoch(self) -> Optional[str]:
        """The active operator epoch, or None when none was activated
        (also before the ledger exists: an agent's first run on a new
        ledger has nothing to fence against)."""
        try:
            answer = self._call(["epoch", "show"], [])
        except NotFound:
            return None
        return answer.get("epoch") or None


class Permit:
    """A permit to execute one action once, before its lease runs out."""

    def __init__(self, client: Client, answer: Mapping[str, Any]) -> None:
        self._client = client
        self.answer: Dict[str, Any] = dict(answer)
        self.key: str = answer["key"]
        self.permit_id: str = answer["permit_id"]
        self.payload_sha256: str = answer.get("payload_sha256", "")
        self.lease_until: Optional[_dt.datetime] = parse_time(answer.get("lease_until"))
        self.reported: Optional[str] = None

    def validate_for_execution(self, now: Optional[_dt.datetime] = None) -> None:
        """Raise ``LeaseLapsed`` when the lease has run out: do not execute.

        Call it as the last step before the side effect.
        """
        now = now or _dt.datetime.now(_dt.timezone.utc)
        if self.lease_until is None or now >= self.lease_until:
            raise LeaseLapsed("tollgate permit for %s: the lease ran out at %s; do not execute (an operator reconciles the key)"
                              % (self.key, self.lease_until.isoformat() if self.lease_until else "?"), self.answer)

    def report(self, outcome: str, *, ref: Optional[str] = None, latency: Union[float, _dt.timedelta, None] = None) -> Dict[str, Any]:
        """Report the outcome by hand; leaving a ``guard`` block then reports nothing more.

        ``ref`` is a safe reference to the external effect (never the body).
        """
        answer = self._client.report(self.key, self.permit_id, outcome, ref=ref, latency=latency)
        self.reported = outcome
        return answer


class Guard:
    """The context manager ``Client.guard`` returns."""

    def __init__(self, client: Client, key: str, *, kind: str, target: str, body: Body, agent: Optional[str],
                 lease: Union[float, _dt.timedelta, None], redact: bool,
                 failure_types: Union[Type[BaseException], Tuple[Type[BaseException], ...]],
                 context: Optional[Dict[str, Any]] = None) -> None:
        self._client = client
        self._key = key
        self._request = dict(kind=kind, target=target, body=body, agent=agent, lease=lease, redact=redact,
                             context=context)
        self._failure_types = failure_types if isinstance(failure_types, tuple) else (failure_types,)
        self._started = 0.0
        self.permit: Optional[Permit] = None

    def __enter__(self) -> Permit:
        self.permit = self._client.request_permit(self._key, **self._request)
        self._started = time.monotonic()
        return self.permit

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> bool:
        permit = self.permit
        if permit is None or permit.reported is not None:
            return False
        if exc_type is not None and issubclass(exc_type, LeaseLapsed):
            return False  # not executed, and only an operator settles a lapsed permit
        if exc_type is None:
            outcome = "succeeded"
        elif self._failure_types and issubclass(exc_type, self._failure_types):
            outcome = "failed"
        else:
            outcome = "unknown"
        latency = time.monotonic() - self._started
        try:
            permit.report(outcome, latency=latency)
        except TollgateError as report_error:
            if exc_type is None:
                raise
            # The block's own exception is the one the caller must see.
            warnings.warn("tollgate: reporting %s for %s failed: %s" % (outcome, permit.key, report_error), RuntimeWarning)
        return False
