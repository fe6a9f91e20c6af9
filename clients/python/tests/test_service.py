"""Tests of tollgate_guard's service transport (``Client(url=...)``)
against a real ``tollgate serve`` process started from $TOLLGATE_BIN, over
its Unix socket and over TCP with tokens an operator made, on SQLite and,
when $TOLLGATE_PY_TEST_PG names a database, on PostgreSQL; and of its
retries against scripted servers that misbehave on purpose.

The operator's part is played through the CLI, as an operator would.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
sys.path.insert(0, SRC)

from tollgate_guard import (  # noqa: E402
    ActionDenied,
    AlreadySettled,
    ApprovalPending,
    Client,
    CommitUnknown,
    InvalidInput,
    KeyConflict,
    LedgerUnavailable,
    NotFound,
    NotPermitted,
    OutcomeUncertain,
    TollgateError,
    Unauthenticated,
)

BIN = os.environ.get("TOLLGATE_BIN", "")
PG = os.environ.get("TOLLGATE_PY_TEST_PG", "")


#: This login user, as the server names a socket peer (from its uid).
ME = pwd.getpwuid(os.getuid()).pw_name


def uniq(prefix: str) -> str:
    """A key no other test (or run, on a shared PostgreSQL database) used."""
    return "%s:%s" % (prefix, secrets.token_hex(5))


def clean_env(home: str) -> Dict[str, str]:
    """This process's environment without the settings that would point
    a command elsewhere (a service, another ledger, the host's keys)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOLLGATE_", "XDG_")) and k != "SSH_AUTH_SOCK"}
    env.update(XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_STATE_HOME=os.path.join(home, "state"),
               XDG_DATA_HOME=os.path.join(home, "data"))
    return env


class Server:
    """A ``tollgate serve`` process over db, listening on a Unix socket
    (this user admitted by --socket-user) and on 127.0.0.1 (tokens only)."""

    def __init__(self, db: str, home: str, *extra: str) -> None:
        self.db, self.home = db, home
        self.env = clean_env(home)
        self.sock = os.path.join(home, "s.sock")
        self.unix_url = "unix://" + self.sock
        args = [BIN, "--db", db, "serve", "--listen", "unix:" + self.sock, "--socket-user", ME,
                "--listen", "127.0.0.1:0"] + list(extra)
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=self.env, text=True)
        self.log: List[str] = []
        listening: List[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.log.append(line)
                if line.startswith("tollgate serve: listening on "):
                    listening.append(line.split("listening on ", 1)[1].strip())
                    if len(listening) == 2:
                        ready.set()
            ready.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not ready.wait(30) or len(listening) < 2:
            self.stop()
            raise AssertionError("tollgate serve did not listen:\n" + "".join(self.log))
        tcp = [a for a in listening if not a.startswith("unix:")][0]
        self.tls = tcp.endswith("(TLS)")
        self.tcp_url = ("https://" if self.tls else "http://") + tcp.split(" ")[0]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(10)
        if self.proc.stderr is not None:
            self.proc.stderr.close()


class ServiceCase(unittest.TestCase):
    """A server over a fresh ledger (a SQLite file, or the PostgreSQL test
    database shared by the run, where every key is unique)."""

    backend = "sqlite"
    serve_flags: Tuple[str, ...] = ()

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.home = self.tmp.name
        self.db = PG if self.backend == "postgres" else os.path.join(self.home, "ledger.db")
        self.env = clean_env(self.home)
        self.operator("policy", "set", "report.*", "--mode", "auto")
        self.operator("policy", "set", "system.maintenance", "--mode", "approval", "--ttl", "1h")
        self.server = Server(self.db, self.home, *self.serve_flags)
        self.addCleanup(self.server.stop)
        self.client = self.service(self.server.unix_url)

    def service(self, url: str, **kw: Any) -> Client:
        """A service client whose environment is this test's."""
        c = Client(url=url, env=self.env, **kw)
        self.addCleanup(c.close)
        return c

    def operator(self, *args: str) -> Dict[str, Any]:
        """Run tollgate on the ledger as an operator would; fail the test on an error."""
        proc = subprocess.run([BIN, "--db", self.db] + list(args) + ["--json"], capture_output=True, text=True,
                              env=self.env, timeout=60)
        if proc.returncode != 0:
            self.fail("tollgate %s: exit %d: %s %s" % (" ".join(args), proc.returncode, proc.stdout, proc.stderr))
        return json.loads(proc.stdout) if proc.stdout.strip() else {}

    def token(self, name: str) -> Tuple[str, str]:
        """A new agent token for name: (its id, its secret)."""
        out = self.operator("agents", "token", "create", name)
        return out["token"]["id"], out["secret"]


def _raised(fn: Callable[[], Any]) -> Any:
    """What fn returned, or the exception it raised."""
    try:
        return fn()
    except TollgateError as exc:
        return exc


# The fields of an answer that name the call rather than what it did: a
# key, its digest, a permit, a time, a row id, the agent.
_VOLATILE = {"key", "logical_key", "permit_id", "lease_until", "approval_expires_at", "approval_requested_at",
             "recorded_at", "permit_issued_at", "conflict_id", "agent", "permit_holder", "rule", "reports", "decision",
             "votes", "error", "reason", "stored_sha256", "attempted_sha256", "payload_sha256", "at", "context"}


def _shape(result: Any) -> Tuple[str, Optional[int], Dict[str, Any]]:
    """An answer or exception as user code sees it, without what names
    the call: its class, exit code, and the answer's other fields."""
    if isinstance(result, TollgateError):
        return type(result).__name__, result.exit_code, {k: v for k, v in result.answer.items() if k not in _VOLATILE}
    answer = result.answer if hasattr(result, "answer") else result
    if isinstance(answer, dict):
        return type(result).__name__, None, {k: v for k, v in answer.items() if k not in _VOLATILE}
    return type(result).__name__, None, {"value": answer}


@unittest.skipUnless(BIN, "TOLLGATE_BIN is not set: go test ./clients/... builds the binary and sets it")
class ServiceTest(ServiceCase):
    def test_same_answers_as_the_binary(self) -> None:
        """Every answer an agent acts on, through the service, through the
        spawned binary on the same ledger, and through the binary on the
        service: the same class, exit code and answer fields, so user code
        cannot tell which it holds."""
        spawned = Client(BIN, db=self.db, env=self.env)

        def script(c: Client, tag: str) -> List[Any]:
            k_ok, k_maint, k_crash, k_fail = (uniq("report-" + tag), uniq("maint-" + tag), uniq("report-" + tag),
                                              uniq("report-" + tag))
            out: List[Any] = [_raised(c.epoch)]
            permit = c.request_permit(k_ok, kind="report.daily", target="acct-7", body={"n": 1}, context={"amount": 3})
            out.append(permit)
            out.append(_raised(lambda: c.request_permit(k_ok, kind="report.daily", target="acct-7", body={"n": 1},
                                                        context={"amount": 3})))  # executing elsewhere
            out.append(_raised(lambda: c.request_permit(k_ok, kind="report.daily", target="acct-7", body={"n": 2},
                                                        context={"amount": 3})))
            out.append(c.report(k_ok, permit.permit_id, "succeeded", ref="ext-1", latency=0.25))
            out.append(_raised(lambda: c.report(k_ok, permit.permit_id, "succeeded", ref="ext-1", latency=0.25)))
            out.append(_raised(lambda: c.request_permit(k_ok, kind="report.daily", target="acct-7", body={"n": 1},
                                                        context={"amount": 3})))
            out.append(c.status(k_ok))
            out.append(_raised(lambda: c.request_permit(k_maint, kind="system.maintenance", target="db-1", body="v")))
            out.append(_raised(lambda: c.request_permit(k_maint, kind="system.maintenance", target="db-1", body="v")))
            self.operator("reject", k_maint, "--reason", "not tonight", "--operator", "alice")
            out.append(_raised(lambda: c.request_permit(k_maint, kind="system.maintenance", target="db-1", body="v")))
            with self.assertRaises(RuntimeError):
                with c.guard(k_crash, kind="report.daily", target="acct-7", body="x"):
                    raise RuntimeError("the network dropped mid-call")
            out.append(_raised(lambda: c.request_permit(k_crash, kind="report.daily", target="acct-7", body="x")))
            with self.assertRaises(ValueError):
                with c.guard(k_fail, kind="report.daily", target="acct-7", body="x", failure_types=ValueError):
                    raise ValueError("the destination said no")
            out.append(c.status(k_fail))
            out.append(_raised(lambda: c.status(uniq("nope"))))
            out.append(_raised(lambda: c.request_permit("Not A Key", kind="report.daily", target="t", body="b")))
            out.append(_raised(lambda: c.request_permit(uniq("report"), kind="report.daily", target="t", body="x" * 4001)))
            out.append(_raised(lambda: c.request_permit(uniq("report"), kind="report.daily", target="t", body="b",
                                                        lease=0.001)))
            return out

        via_service = script(self.client, "svc")
        via_binary = script(spawned, "bin")
        # The binary given $TOLLGATE_URL goes through the service too.
        via_both = script(Client(BIN, env=dict(self.env, TOLLGATE_URL=self.server.unix_url)), "both")
        self.assertEqual(len(via_service), len(via_binary))
        for i, (s, b, sb) in enumerate(zip(via_service, via_binary, via_both)):
            self.assertEqual(_shape(s), _shape(b), "answer %d differs between the service and the binary" % i)
            self.assertEqual(_shape(s), _shape(sb), "answer %d differs between this client and the binary over the service" % i)
        # What the script met is what it was written to meet.
        self.assertEqual([_shape(r)[0] for r in via_service],
                         ["NoneType", "Permit", "ApprovalPending", "KeyConflict", "dict", "dict", "AlreadySettled", "dict",
                          "ApprovalPending", "ApprovalPending", "ActionDenied", "OutcomeUncertain", "dict", "NotFound",
                          "InvalidInput", "InvalidInput", "InvalidInput"])
        self.assertEqual(via_service[3].differs, ["body"])
        self.assertTrue(via_service[5]["replayed"])
        self.assertEqual(via_service[7]["reports"][0]["ref"], "ext-1")
        self.assertIn("not tonight", via_service[10].reason or "")
        self.assertIn("logical key", str(via_service[14]))

    def test_unix_socket_and_tcp_with_tokens(self) -> None:
        """On the socket the agent is this login user; over TCP the holder
        of a token (given, read from a file, or from TOLLGATE_TOKEN with
        TOLLGATE_URL). An agent's token reads its own keys only."""
        _, secret = self.token("py-tcp")
        tcp = self.service(self.server.tcp_url, token=secret)
        k_sock, k_tcp = uniq("report"), uniq("report")
        with self.client.guard(k_sock, kind="report.daily", target="a", body="x"):
            pass
        with tcp.guard(k_tcp, kind="report.daily", target="a", body="x") as permit:
            permit.validate_for_execution()
        self.assertEqual(self.client.status(k_sock)["agent"], ME)
        self.assertEqual((tcp.status(k_tcp)["agent"], tcp.status(k_tcp)["state"]), ("py-tcp", "succeeded"))
        with self.assertRaises(NotPermitted) as other:
            tcp.status(k_sock)
        self.assertNotIsInstance(other.exception, Unauthenticated)
        self.assertEqual(other.exception.exit_code, 77)

        token_file = os.path.join(self.home, "token")
        with open(token_file, "w") as f:
            f.write(secret + "\n")
        self.assertEqual(self.service(self.server.tcp_url, token_file=token_file).status(k_tcp)["agent"], "py-tcp")
        from_env = Client(env=dict(self.env, TOLLGATE_URL=self.server.tcp_url, TOLLGATE_TOKEN=secret))
        self.addCleanup(from_env.close)
        self.assertEqual((from_env.url, from_env.binary), (self.server.tcp_url, None))
        self.assertEqual(from_env.status(k_tcp)["agent"], "py-tcp")
        # A ledger named here wins over the environment's service, as --db does.
        local = Client(BIN, db=self.db, env=dict(self.env, TOLLGATE_URL="unix:///nonexistent.sock"))
        self.assertIsNone(local.url)
        self.assertEqual(local.status(k_tcp)["state"], "succeeded")
        # Another agent's name needs an operator's allowance.
        with self.assertRaises(NotPermitted):
            tcp.request_permit(uniq("report"), kind="report.daily", target="a", body="x", agent="someone-else")

    def test_identical_retry_returns_the_stored_answer(self) -> None:
        """The same call again gets the stored answer, never a second
        permit: the same attempt id is given its permit again (replayed),
        another attempt waits, a settled key answers settled."""
        key = uniq("report")
        first = self.client.request_permit(key, kind="report.daily", target="a", body={"v": 1}, attempt_id="a" * 16 + "-1")
        again = self.client.request_permit(key, kind="report.daily", target="a", body={"v": 1}, attempt_id="a" * 16 + "-1")
        self.assertEqual(again.permit_id, first.permit_id)
        self.assertTrue(again.answer["replayed"])
        with self.assertRaises(ApprovalPending) as elsewhere:
            self.client.request_permit(key, kind="report.daily", target="a", body={"v": 1})
        self.assertEqual(elsewhere.exception.answer["state"], "executing")
        self.assertNotIn("permit_id", elsewhere.exception.answer)
        first.report("succeeded")
        with self.assertRaises(AlreadySettled) as settled:
            self.client.request_permit(key, kind="report.daily", target="a", body={"v": 1})
        self.assertEqual((settled.exception.exit_code, settled.exception.answer["state"]), (10, "succeeded"))
        self.assertTrue(settled.exception.answer["replayed"])

        pending = uniq("maint")
        with self.assertRaises(ApprovalPending) as p1:
            self.client.request_permit(pending, kind="system.maintenance", target="db", body="v")
        with self.assertRaises(ApprovalPending) as p2:
            self.client.request_permit(pending, kind="system.maintenance", target="db", body="v")
        self.assertEqual(p1.exception.expires_at, p2.exception.expires_at)  # one request, not two
        self.assertTrue(p2.exception.answer["replayed"])
        with self.assertRaises(InvalidInput):
            self.client.request_permit(uniq("report"), kind="report.daily", target="a", body="x", attempt_id="short")

    def test_reused_key_with_another_payload_is_a_conflict(self) -> None:
        key = uniq("report")
        self.client.request_permit(key, kind="report.daily", target="acct-7", body="secret totals", context={"amount": 4})
        with self.assertRaises(KeyConflict) as conflict:
            self.client.request_permit(key, kind="report.daily", target="acct-8", body="other totals", context={"amount": 5})
        e = conflict.exception
        self.assertEqual((e.exit_code, e.key), (4, key))
        self.assertIn("target", e.differs)
        self.assertIn("body", e.differs)
        self.assertIn("context.amount", e.differs)
        self.assertNotEqual(e.stored_sha256, e.attempted_sha256)
        self.assertNotIn("totals", str(e))  # keys, never bodies
        self.assertNotIn("type", e.answer)  # the CLI's object, not the problem document's own members

    def test_revoked_token_is_refused_on_its_next_call(self) -> None:
        token_id, secret = self.token("py-revoked")
        tcp = self.service(self.server.tcp_url, token=secret)
        key = uniq("report")
        tcp.request_permit(key, kind="report.daily", target="a", body="x")
        self.operator("agents", "token", "revoke", token_id)
        with self.assertRaises(Unauthenticated) as refused:
            tcp.status(key)  # the same kept-alive connection
        self.assertIsInstance(refused.exception, NotPermitted)
        self.assertEqual(refused.exception.exit_code, 77)
        self.assertIn("unauthenticated", str(refused.exception))
        with self.assertRaises(Unauthenticated):
            self.service(self.server.tcp_url).epoch()  # no token at all

    def test_dropped_answer_is_given_again_to_its_attempt(self) -> None:
        """A relay forwards the guard and drops the server's answer: the
        client retries under the same attempt id and is given the permit
        that was issued. Another caller sharing the token is not."""
        _, secret = self.token("py-relay")
        relay = LossyRelay(self.server.tcp_url[len("http://"):], drop=1)
        self.addCleanup(relay.close)
        c = self.service(relay.url, token=secret, retry_for=10)
        key = uniq("report")
        permit = c.request_permit(key, kind="report.daily", target="a", body="x")
        self.assertEqual(relay.dropped, 1)
        guards = [h for h in relay.heads if h["path"] == "/v1/guard"]
        self.assertEqual(len(guards), 2, relay.heads)
        self.assertEqual(guards[0]["tollgate-attempt"], guards[1]["tollgate-attempt"])
        self.assertGreaterEqual(len(guards[0]["tollgate-attempt"]), 16)
        self.assertTrue(permit.answer["replayed"])
        twin = self.service(self.server.tcp_url, token=secret)
        with self.assertRaises(ApprovalPending) as waiting:
            twin.request_permit(key, kind="report.daily", target="a", body="x")
        self.assertNotIn("permit_id", waiting.exception.answer)
        detail = twin.status(key)
        self.assertEqual((detail["state"], detail["permit_id"]), ("executing", permit.permit_id))
        permit.report("succeeded")
        self.assertEqual(twin.status(key)["state"], "succeeded")

    def test_agent_processes_at_once(self) -> None:
        """Eight Python agent processes through one server at once, half on
        the socket (one login user) and half over TCP sharing one token:
        distinct keys each get their permit, and a key a group all guard
        gets exactly one, run once (two workers under one name stay two
        callers)."""
        _, secret = self.token("py-fleet")
        shared = {"unix": uniq("report-shared"), "tcp": uniq("report-shared")}
        runs = os.path.join(self.home, "runs")
        script = textwrap.dedent('''
            import json, sys
            sys.path.insert(0, sys.argv[1])
            from tollgate_guard import Client, ApprovalPending, AlreadySettled
            url, token, shared, me, runs = sys.argv[2:7]
            client = Client(url=url, token=token or None, retry_for=30)
            out = {"distinct": [], "shared": None}
            for i in range(5):
                key = "report-%s:%d" % (me, i)
                with client.guard(key, kind="report.daily", target="acct", body={"i": i}) as permit:
                    out["distinct"].append(permit.permit_id)
            try:
                with client.guard(shared, kind="report.daily", target="acct", body="once") as permit:
                    with open(runs, "a") as f:
                        f.write(shared + "\\n")
                out["shared"] = "ran"
            except (ApprovalPending, AlreadySettled) as e:
                out["shared"] = type(e).__name__
            print(json.dumps(out))
        ''')
        procs = []
        for n in range(8):
            group = "unix" if n % 2 == 0 else "tcp"
            url, token = (self.server.unix_url, "") if group == "unix" else (self.server.tcp_url, secret)
            me = "p%d%s" % (n, secrets.token_hex(3))
            procs.append((group, subprocess.Popen([sys.executable, "-c", script, SRC, url, token, shared[group], me, runs],
                                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)))
        done = []
        for group, p in procs:
            out, err = p.communicate(timeout=120)
            done.append((group, p.returncode, out, err))
        results: Dict[str, List[Dict[str, Any]]] = {"unix": [], "tcp": []}
        for group, code, out, err in done:
            self.assertEqual(code, 0, err)
            results[group].append(json.loads(out))
        everything = [r for rs in results.values() for r in rs]
        self.assertTrue(all(len(set(r["distinct"])) == 5 for r in everything))
        self.assertEqual(len({pid for r in everything for pid in r["distinct"]}), 40)
        for group, rs in results.items():
            self.assertEqual([r["shared"] for r in rs].count("ran"), 1, (group, rs))
        with open(runs) as f:
            self.assertEqual(sorted(f.read().split()), sorted(shared.values()))
        tcp = self.service(self.server.tcp_url, token=secret)
        for group, c in (("unix", self.client), ("tcp", tcp)):
            detail = c.status(shared[group])
            self.assertEqual((detail["state"], len(detail["reports"])), ("succeeded", 1))
        verify = subprocess.run([BIN, "--db", self.db, "verify", "--json"], capture_output=True, text=True, env=self.env,
                                timeout=120)
        self.assertEqual(verify.returncode, 0, verify.stdout + verify.stderr)

    def test_keeps_one_connection(self) -> None:
        """Calls reuse one connection: the server sees one peer for many calls."""
        relay = LossyRelay(self.server.tcp_url[len("http://"):], drop=0)
        self.addCleanup(relay.close)
        _, secret = self.token("py-keepalive")
        c = self.service(relay.url, token=secret)
        for _ in range(5):
            c.epoch()
        with c.guard(uniq("report"), kind="report.daily", target="a", body="x"):
            pass
        self.assertEqual((relay.connections, len(relay.heads)), (1, 7))
        c.close()
        c.epoch()
        self.assertEqual(relay.connections, 2)

    def test_operator_commands_are_not_served(self) -> None:
        with self.assertRaises(NotPermitted):
            self.client._call(["approve"], ["maint:1"])


@unittest.skipUnless(BIN, "TOLLGATE_BIN is not set: go test ./clients/... builds the binary and sets it")
class TLSServiceTest(ServiceCase):
    """HTTPS with a certificate of the test's own: trusted through ca_file,
    refused at once (not retried) without it."""

    def setUp(self) -> None:
        self.certdir = tempfile.TemporaryDirectory()
        self.addCleanup(self.certdir.cleanup)
        self.ca = os.path.join(self.certdir.name, "cert.pem")
        key = os.path.join(self.certdir.name, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", key, "-out", self.ca, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        self.serve_flags = ("--tls-cert", self.ca, "--tls-key", key)
        super().setUp()

    def test_https_with_a_ca_file(self) -> None:
        self.assertTrue(self.server.tls)
        _, secret = self.token("py-tls")
        c = self.service(self.server.tcp_url, token=secret, ca_file=self.ca)
        key = uniq("report")
        with c.guard(key, kind="report.daily", target="a", body="x"):
            pass
        self.assertEqual(c.status(key)["state"], "succeeded")
        untrusted = self.service(self.server.tcp_url, token=secret, retry_for=10)
        start = time.monotonic()
        with self.assertRaises(TollgateError) as refused:
            untrusted.epoch()
        self.assertIn("not trusted", str(refused.exception))
        self.assertLess(time.monotonic() - start, 5, "a certificate refusal is not retried")


if PG:
    class PostgresServiceTest(ServiceTest):
        """The same tests over a PostgreSQL ledger."""

        backend = "postgres"


class Listener:
    """A TCP listener on 127.0.0.1 that hands each connection it accepts to
    _handle, counting them."""

    def __init__(self) -> None:
        self.connections = 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            self._handle(conn)

    def _handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.listener.close()


class LossyRelay(Listener):
    """A TCP relay in front of the server that forwards each connection's
    bytes both ways, except that on its first ``drop`` connections it
    forwards the request and then closes both sides as the server's answer
    arrives: the server answered (and committed), the caller never hears
    it. ``heads`` records each request's path and headers as they passed."""

    def __init__(self, upstream: str, drop: int) -> None:
        host, port = upstream.rsplit(":", 1)
        self.upstream = (host, int(port))
        self.drop = drop
        self.dropped = 0
        self.heads: List[Dict[str, str]] = []
        self.lock = threading.Lock()
        self.socks: List[socket.socket] = []
        super().__init__()

    def _handle(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        with self.lock:
            lose = self.dropped < self.drop
            if lose:
                self.dropped += 1
            self.socks += [client, upstream]
        threading.Thread(target=self._up, args=(client, upstream), daemon=True).start()
        threading.Thread(target=self._down, args=(client, upstream, lose), daemon=True).start()

    def _up(self, client: socket.socket, upstream: socket.socket) -> None:
        buf, skip = b"", 0
        try:
            while True:
                b = client.recv(65536)
                if not b:
                    break
                buf += b
                while True:  # record every whole request head, skipping bodies
                    n = min(skip, len(buf))
                    buf, skip = buf[n:], skip - n
                    if skip or b"\r\n\r\n" not in buf:
                        break
                    head, buf = buf.split(b"\r\n\r\n", 1)
                    skip = int(self._record(head).get("content-length", "0"))
                upstream.sendall(b)
        except OSError:
            pass
        finally:
            _close(upstream)

    def _record(self, head: bytes) -> Dict[str, str]:
        lines = head.decode("latin-1").split("\r\n")
        h = {"method": lines[0].split(" ")[0], "path": lines[0].split(" ")[1]}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            h[name.strip().lower()] = value.strip()
        with self.lock:
            self.heads.append(h)
        return h

    def _down(self, client: socket.socket, upstream: socket.socket, lose: bool) -> None:
        try:
            while True:
                b = upstream.recv(65536)
                if not b:
                    break
                if lose:
                    break  # the answer arrived: the caller never hears it
                client.sendall(b)
        except OSError:
            pass
        finally:
            _close(client)
            _close(upstream)

    def close(self) -> None:
        super().close()
        with self.lock:
            for s in self.socks:
                _close(s)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()


class Scripted(Listener):
    """A scripted HTTP server on 127.0.0.1: answers[i] answers the i-th
    request (the last one repeats); "reset" closes the connection without
    an answer. Each request's headers and time are kept."""

    def __init__(self, answers: List[Any]) -> None:
        self.answers = answers
        self.seen: List[Tuple[float, Dict[str, str]]] = []
        super().__init__()

    def _handle(self, conn: socket.socket) -> None:
        threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        f = conn.makefile("rb")
        try:
            while True:
                line = f.readline()
                if not line:
                    return
                headers: Dict[str, str] = {}
                while True:
                    h = f.readline().decode("latin-1").strip()
                    if not h:
                        break
                    name, _, value = h.partition(":")
                    headers[name.strip().lower()] = value.strip()
                f.read(int(headers.get("content-length", "0")))
                self.seen.append((time.monotonic(), headers))
                a = self.answers[min(len(self.seen) - 1, len(self.answers) - 1)]
                if a == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    return
                status, ctype, extra, body = a
                data = json.dumps(body).encode()
                head = "HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n" % (
                    status, ctype, len(data), "".join("%s: %s\r\n" % kv for kv in extra.items()))
                conn.sendall(head.encode() + data)
        except OSError:
            pass
        finally:
            f.close()
            conn.close()



PERMIT = {"key": "k:1", "logical_key": "k:1", "epoch": "", "payload_sha256": "ab", "state": "executing",
          "verdict": "permitted", "replayed": False, "safe_new_key": False, "permit_id": "p-1",
          "lease_until": "2099-01-01T00:00:00Z", "authority": "x", "exit_code": 0}
PROBLEM = "application/problem+json"
UNAVAILABLE = (503, PROBLEM, {"Retry-After": "1"}, {"type": "urn:tollgate:problem:unavailable", "title": "Ledger unavailable",
                                                    "status": 503, "error": "the ledger is busy", "exit_code": 75,
                                                    "safe_to_repeat": True})
RATE = (429, PROBLEM, {"Retry-After": "1"}, {"type": "urn:tollgate:problem:rate-limited", "title": "Too many requests",
                                             "status": 429, "error": "rate limited", "exit_code": 75, "safe_to_repeat": True})
OK = (200, "application/json", {}, PERMIT)


class RetryTest(unittest.TestCase):
    """Retries against scripted servers: refused and reset connections,
    503 and 429 are retried with backoff within retry_for, Retry-After
    honoured, every try of one call carrying the same attempt id; what is
    raised when the budget runs out says whether anything can have been
    recorded."""

    def scripted(self, answers: List[Any]) -> Scripted:
        s = Scripted(answers)
        self.addCleanup(s.close)
        return s

    def client(self, url: str, **kw: Any) -> Client:
        c = Client(url=url, env={}, **kw)
        self.addCleanup(c.close)
        return c

    def test_503_and_429_honour_retry_after_with_one_attempt_id(self) -> None:
        s = self.scripted([UNAVAILABLE, RATE, OK])
        permit = self.client(s.url, retry_for=10).request_permit("k:1", kind="email.send", target="t", body="b")
        self.assertEqual(permit.permit_id, "p-1")
        self.assertEqual(len(s.seen), 3)
        attempts = {h["tollgate-attempt"] for _, h in s.seen}
        self.assertEqual(len(attempts), 1, "one attempt id for every try of one call")
        self.assertTrue(all(h["idempotency-key"] == "k:1" for _, h in s.seen))
        self.assertGreaterEqual(s.seen[1][0] - s.seen[0][0], 0.95, "Retry-After: 1 honoured")
        self.assertGreaterEqual(s.seen[2][0] - s.seen[1][0], 0.95, "Retry-After: 1 honoured")
        self.assertEqual(s.connections, 1, "the connection is kept across an answered retry")

    def test_retry_after_as_an_http_date(self) -> None:
        """A proxy's Retry-After may be a date: it is waited for too."""
        import email.utils as eu
        at = eu.formatdate(time.time() + 2, usegmt=True)
        s = self.scripted([(503, PROBLEM, {"Retry-After": at}, UNAVAILABLE[3]), OK])
        self.client(s.url, retry_for=10).request_permit("k:1", kind="e", target="t", body="b")
        self.assertGreaterEqual(s.seen[1][0] - s.seen[0][0], 0.9)

    def test_unavailable_past_the_budget(self) -> None:
        s = self.scripted([UNAVAILABLE])
        with self.assertRaises(LedgerUnavailable) as unavailable:
            self.client(s.url, retry_for=1.5).epoch()
        self.assertTrue(unavailable.exception.answer["safe_to_repeat"])
        self.assertNotIn("type", unavailable.exception.answer)
        self.assertIn(len(s.seen), (2, 3))
        with self.assertRaises(LedgerUnavailable):
            self.client(self.scripted([RATE]).url, retry_for=0).epoch()

    def test_reset_is_retried_and_a_lost_write_is_commit_unknown(self) -> None:
        s = self.scripted(["reset", OK])
        self.assertEqual(self.client(s.url, retry_for=5).request_permit("k:1", kind="e", target="t", body="b").permit_id, "p-1")
        self.assertEqual(s.seen[0][1]["tollgate-attempt"], s.seen[1][1]["tollgate-attempt"])
        lost = self.scripted(["reset"])
        with self.assertRaises(CommitUnknown) as unknown:
            self.client(lost.url, retry_for=0.4).request_permit("k:1", kind="e", target="t", body="b")
        self.assertEqual((unknown.exception.exit_code, unknown.exception.key), (74, "k:1"))
        self.assertGreaterEqual(len(lost.seen), 2)
        # A lost answer, then a service that stays unavailable: a write may
        # have been recorded; a read has nothing to commit.
        then = self.scripted(["reset", (503, PROBLEM, {"Retry-After": "0"}, UNAVAILABLE[3])])
        c = self.client(then.url, retry_for=0.5)
        with self.assertRaises(CommitUnknown):
            c.report("k:1", "p-1", "succeeded")
        with self.assertRaises(LedgerUnavailable):
            c.epoch()

    def test_refused_connection_is_retried_for_the_budget(self) -> None:
        free = socket.socket()
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
        free.close()  # nothing listens there now
        start = time.monotonic()
        with self.assertRaises(LedgerUnavailable) as refused:
            self.client("http://127.0.0.1:%d" % port, retry_for=0.6).request_permit("k:1", kind="e", target="t", body="b")
        took = time.monotonic() - start
        self.assertGreaterEqual(took, 0.59, "it retried for its whole budget")
        self.assertLess(took, 3)
        self.assertTrue(refused.exception.answer["safe_to_repeat"])
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(LedgerUnavailable):
                self.client("unix://" + os.path.join(d, "absent.sock"), retry_for=0).epoch()

    def test_stale_kept_connection_is_made_again(self) -> None:
        """A kept connection the server drops (an idle timeout, a restart)
        costs nothing: the call is made again at once on a new one, under
        the same attempt id, even with no retry budget."""
        s = self.scripted([OK])
        c = self.client(s.url, retry_for=0)
        c.request_permit("k:1", kind="e", target="t", body="b")
        assert c._transport._conn is not None  # type: ignore[union-attr]
        # The server side goes away without a word, as an idle timeout does.
        s.answers = ["reset", OK]
        s.seen.clear()
        self.assertEqual(c.request_permit("k:1", kind="e", target="t", body="b").permit_id, "p-1")
        self.assertEqual(s.connections, 2)
        self.assertEqual(s.seen[0][1]["tollgate-attempt"], s.seen[1][1]["tollgate-attempt"])

    def test_threads_take_turns_on_the_connection(self) -> None:
        s = self.scripted([OK])
        c = self.client(s.url, retry_for=0)
        failures: List[BaseException] = []

        def calls() -> None:
            try:
                for _ in range(20):
                    c.request_permit("k:1", kind="e", target="t", body="b")
            except BaseException as exc:  # noqa: B036 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=calls) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        self.assertEqual((len(s.seen), s.connections), (160, 1))

    def test_forked_child_opens_its_own_connection(self) -> None:
        s = self.scripted([OK])
        c = self.client(s.url, retry_for=0)
        c.epoch()
        pid = os.fork()
        if pid == 0:
            try:
                code = 0 if c.epoch() is None else 1
            except BaseException:
                code = 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0)
        c.epoch()
        self.assertEqual((len(s.seen), s.connections), (3, 2))

    def test_answers_that_are_not_the_service(self) -> None:
        s = self.scripted([(200, "text/html", {}, "<html>")])
        with self.assertRaises(TollgateError) as odd:
            self.client(s.url).epoch()
        self.assertIn("without a JSON object", str(odd.exception))

    def test_urls_and_settings(self) -> None:
        for url in ("http://example.com:8080", "http://10.0.0.1:80", "ftp://127.0.0.1", "unix:relative.sock",
                    "https://u:p@h:1", "https://h:1/path", "http://localhost:9", ""):
            with self.assertRaises(InvalidInput, msg=url):
                Client(url=url, env={})
        for url in ("http://127.0.0.1:9", "http://[::1]:9", "https://tollgate.example:8443", "unix:///run/t.sock",
                    "unix:/run/t.sock"):
            Client(url=url, env={}).close()
        with self.assertRaises(InvalidInput):
            Client(url="http://127.0.0.1:9", db="ledger.db", env={})
        with self.assertRaises(InvalidInput):
            Client(url="http://127.0.0.1:9", token="a b", env={})
        with self.assertRaises(InvalidInput):
            Client(url="http://127.0.0.1:9", token="t", token_file="f", env={})
        with self.assertRaises(InvalidInput):
            Client("/bin/true", token="t", env={})
        with self.assertRaises(InvalidInput):
            Client(url="http://127.0.0.1:9", env={"TOLLGATE_RETRY_FOR": "soon"})
        c = Client(env={"TOLLGATE_URL": "http://127.0.0.1:9", "TOLLGATE_RETRY_FOR": "1m30s",
                        "TOLLGATE_ATTEMPT_TIMEOUT": "250ms", "TOLLGATE_TOKEN": "tg1_x_y"})
        t = c._transport
        self.assertEqual((c.url, t.retry_for, t.attempt_timeout, t._token), ("http://127.0.0.1:9", 90.0, 0.25, "tg1_x_y"))  # type: ignore[union-attr]
        with self.assertRaises(TypeError):
            Client("/bin/true", db="x.db").request_permit("k:1", kind="e", target="t", body="b", attempt_id="a" * 16)

    def test_not_a_key_is_refused_before_sending(self) -> None:
        s = self.scripted([OK])
        with self.assertRaises(InvalidInput):
            self.client(s.url).request_permit("bad\r\nX-Injected: 1", kind="e", target="t", body="b")
        with self.assertRaises(InvalidInput):
            self.client(s.url).request_permit(" k:1", kind="e", target="t", body="b")  # the server would trim it
        self.assertEqual(s.seen, [])


if __name__ == "__main__":
    unittest.main()
