"""Tests of tollgate_guard against a real tollgate binary ($TOLLGATE_BIN).

Each test has its own ledger in a temporary folder; the operator's part is
played through the CLI, as an operator would.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import warnings
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from tollgate_guard import (  # noqa: E402
    ActionDenied,
    AlreadySettled,
    ApprovalPending,
    BinaryNotFound,
    Client,
    InvalidInput,
    KeyConflict,
    LeaseLapsed,
    LedgerUnavailable,
    NotFound,
    NotPermitted,
    OutcomeUncertain,
    TollgateError,
    authority_key,
)

BIN = os.environ.get("TOLLGATE_BIN", "")


@unittest.skipUnless(BIN, "TOLLGATE_BIN is not set: go test ./clients/... builds the binary and sets it")
class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.tmp.name, "ledger.db")
        self.env = dict(os.environ, TOLLGATE_OPERATOR="", SSH_AUTH_SOCK="", TOLLGATE_OPERATORS_FILE="",
                        TOLLGATE_OPERATOR_KEY="", XDG_CONFIG_HOME=os.path.join(self.tmp.name, "config"),
                        XDG_STATE_HOME=os.path.join(self.tmp.name, "state"))
        self.env.pop("TOLLGATE_DB", None)
        self.client = Client(BIN, db=self.db, agent="py-bot", env=self.env)
        self.operator("policy", "set", "system.maintenance", "--mode", "approval", "--ttl", "1h")
        self.operator("policy", "set", "report.*", "--mode", "auto")

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def operator(self, *args: str) -> str:
        """Run tollgate as an operator would; fail the test on an error."""
        proc = subprocess.run([BIN, "--db", self.db] + list(args), capture_output=True, text=True, env=self.env)
        if proc.returncode != 0:
            self.fail("tollgate %s: exit %d: %s" % (" ".join(args), proc.returncode, proc.stderr))
        return proc.stdout

    def state(self, key: str) -> str:
        return self.client.status(key)["state"]

    def test_cron_exit_and_retry(self) -> None:
        """The seed's pattern: each run is a new process; pending exits 0,
        an operator approves, the next run executes and reports, the next
        finds it settled. The action runs exactly once."""
        runs = os.path.join(self.tmp.name, "executed")
        script = os.path.join(self.tmp.name, "cron_agent.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent('''
                import sys
                sys.path.insert(0, sys.argv[1])
                from tollgate_guard import Client, ApprovalPending, ActionDenied, AlreadySettled
                client = Client(sys.argv[2], db=sys.argv[3], agent="cron-bot")
                key = "maintenance-2026-12-02"
                try:
                    with client.guard(key, kind="system.maintenance", target="db-1", body={"task": "vacuum"}) as permit:
                        permit.validate_for_execution()
                        with open(sys.argv[4], "a") as out:
                            out.write("ran\\n")
                    print("executed")
                except ApprovalPending as p:
                    print("pending until", p.expires_at.isoformat())
                except AlreadySettled:
                    print("settled")
                except ActionDenied as d:
                    print("denied", d.reason)
                    sys.exit(1)
            '''))

        def run_once() -> str:
            proc = subprocess.run([sys.executable, script, os.path.join(HERE, "..", "src"), BIN, self.db, runs],
                                  capture_output=True, text=True, env=self.env, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return proc.stdout.strip()

        self.assertTrue(run_once().startswith("pending until 20"))
        self.assertTrue(run_once().startswith("pending until"))  # the same request, not a second one
        self.assertFalse(os.path.exists(runs))
        self.operator("approve", "maintenance-2026-12-02", "--operator", "alice")
        self.assertEqual(run_once(), "executed")
        self.assertEqual(run_once(), "settled")
        with open(runs) as f:
            self.assertEqual(f.read(), "ran\n")
        detail = self.client.status("maintenance-2026-12-02")
        self.assertEqual(detail["state"], "succeeded")
        self.assertEqual([r["outcome"] for r in detail["reports"]], ["succeeded"])

    def test_each_answer_is_its_exception(self) -> None:
        with self.assertRaises(ApprovalPending) as pending:
            with self.client.guard("maint:1", kind="system.maintenance", target="db-1", body="vacuum"):
                self.fail("entered without a permit")
        p = pending.exception
        self.assertEqual((p.exit_code, p.key, p.approvers), (75, "maint:1", 1))
        self.assertIsInstance(p.expires_at, dt.datetime)
        self.assertGreater(p.expires_at, dt.datetime.now(dt.timezone.utc))

        with self.assertRaises(KeyConflict) as conflict:
            with self.client.guard("maint:1", kind="system.maintenance", target="db-1", body="vacuum full"):
                self.fail("entered on a conflict")
        self.assertEqual(conflict.exception.differs, ["body"])
        self.assertNotEqual(conflict.exception.stored_sha256, conflict.exception.attempted_sha256)
        self.assertNotIn("vacuum", str(conflict.exception))  # keys, never bodies

        self.operator("reject", "maint:1", "--reason", "not tonight", "--operator", "alice")
        with self.assertRaises(ActionDenied) as denied:
            with self.client.guard("maint:1", kind="system.maintenance", target="db-1", body="vacuum"):
                self.fail("entered after a rejection")
        self.assertTrue(denied.exception.safe_new_key)
        self.assertIn("not tonight", denied.exception.reason or "")

        with self.client.guard("report:1", kind="report.daily", target="acct-7", body="totals") as permit:
            self.assertTrue(permit.permit_id)
        self.assertEqual(self.state("report:1"), "succeeded")
        with self.assertRaises(AlreadySettled):
            with self.client.guard("report:1", kind="report.daily", target="acct-7", body="totals"):
                self.fail("entered a settled key")

        with self.assertRaises(InvalidInput) as invalid:
            self.client.guard("Not A Key", kind="report.daily", target="t", body="b").__enter__()
        self.assertIn("logical key", str(invalid.exception))
        with self.assertRaises(InvalidInput):  # bounds checked before anything is stored
            self.client.guard("report:big", kind="report.daily", target="t", body="x" * 4001).__enter__()
        with self.assertRaises(NotFound):
            self.client.status("report:big")
        with self.assertRaises(NotFound):
            self.client.status("nope:1")

        # An operator's act on a signed ledger without the operator's key.
        with self.assertRaises(ApprovalPending):
            self.client.request_permit("maint:2", kind="system.maintenance", target="db-1", body="vacuum")
        pub = json.loads(self.operator("operator", "init", "--json"))["public_key"]
        self.operator("operators", "add", "alice", pub)
        keyless = Client(BIN, db=self.db, env=dict(self.env, XDG_CONFIG_HOME=os.path.join(self.tmp.name, "elsewhere")))
        with self.assertRaises(NotPermitted) as refused:
            keyless._call(["approve"], ["maint:2", "--operator", "alice"])
        self.assertEqual(refused.exception.exit_code, 77)

    def test_crash_inside_block_is_unknown_and_uncertain(self) -> None:
        """Any other exception reports unknown, is re-raised, and the key is
        uncertain: the next guard raises OutcomeUncertain, never a permit."""
        with self.assertRaises(RuntimeError):
            with self.client.guard("report:crash", kind="report.daily", target="acct-7", body="x"):
                raise RuntimeError("the network dropped mid-call")
        detail = self.client.status("report:crash")
        self.assertEqual(detail["state"], "uncertain")
        self.assertEqual([r["outcome"] for r in detail["reports"]], ["unknown"])
        with self.assertRaises(OutcomeUncertain):
            with self.client.guard("report:crash", kind="report.daily", target="acct-7", body="x"):
                self.fail("re-executed an uncertain action")

    def test_failure_types_report_failed(self) -> None:
        with self.assertRaises(ValueError):
            with self.client.guard("report:fail", kind="report.daily", target="acct-7", body="x",
                                   failure_types=(ValueError, KeyError)):
                raise ValueError("the destination said no")
        self.assertEqual(self.state("report:fail"), "failed")
        with self.assertRaises(AlreadySettled) as settled:  # failed is final: no second attempt
            self.client.request_permit("report:fail", kind="report.daily", target="acct-7", body="x")
        self.assertTrue(settled.exception.answer["safe_new_key"])

    def test_context_decides_and_is_bound(self) -> None:
        """A rule's condition reads the context; a changed context under
        the same key is a conflict naming the field."""
        self.operator("policy", "set", "refund.*", "--mode", "approval", "--operator", "root")
        self.operator("policy", "set", "refund.*", "--mode", "auto", "--if", "context.amount <= 50", "--operator", "root")
        with self.client.guard("refund:small", kind="refund.card", target="acct-7", body="r",
                               context={"amount": 40.5, "flags": ["vip"]}) as permit:
            self.assertEqual(permit.answer["rule"]["read"]["context.amount"], 40.5)
        with self.assertRaises(ApprovalPending):
            with self.client.guard("refund:large", kind="refund.card", target="acct-7", body="r", context={"amount": 500}):
                self.fail("entered without approval")
        with self.assertRaises(KeyConflict) as conflict:
            self.client.request_permit("refund:large", kind="refund.card", target="acct-7", body="r", context={"amount": 5})
        self.assertIn("context.amount", conflict.exception.answer["differs"])

    def test_unreachable_ledger_is_safe_to_repeat(self) -> None:
        """A PostgreSQL ledger nobody answers for: the binary retries for
        retry_for, then the client raises LedgerUnavailable, not
        ApprovalPending, though both are exit 75."""
        down = Client(BIN, db="postgres://bot@127.0.0.1:1/ledger?sslmode=disable&connect_timeout=1", agent="py-bot",
                      env=self.env, retry_for=0.5)
        with self.assertRaises(LedgerUnavailable) as unavailable:
            down.request_permit("report:down", kind="report.daily", target="acct-7", body="x")
        self.assertTrue(unavailable.exception.answer["safe_to_repeat"])
        self.assertNotIsInstance(unavailable.exception, ApprovalPending)

    def test_hung_server_attempts_are_abandoned(self) -> None:
        """A server that accepts connections and never answers (a network
        black hole): each attempt is abandoned after attempt_timeout and
        made again, and the call raises LedgerUnavailable (safe to
        repeat) soon after retry_for, not after the process timeout."""
        import socket
        import threading

        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        accepted = []

        def swallow() -> None:
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                accepted.append(conn)  # kept open, never answered

        threading.Thread(target=swallow, daemon=True).start()
        try:
            port = listener.getsockname()[1]
            hung = Client(BIN, db="postgres://bot@127.0.0.1:%d/ledger?sslmode=disable" % port, agent="py-bot",
                          env=self.env, retry_for=1.5, attempt_timeout=0.3, timeout=30)
            start = time.monotonic()
            with self.assertRaises(LedgerUnavailable) as unavailable:
                hung.request_permit("report:hung", kind="report.daily", target="acct-7", body="x")
            took = time.monotonic() - start
            self.assertTrue(unavailable.exception.answer["safe_to_repeat"])
            self.assertLess(took, 10, "answered after %.1fs; retry_for is 1.5s" % took)
            self.assertGreaterEqual(len(accepted), 2, "the hung attempt was not made again")
        finally:
            listener.close()
            for conn in accepted:
                conn.close()

    def test_report_by_hand(self) -> None:
        with self.client.guard("report:hand", kind="report.daily", target="acct-7", body="x") as permit:
            answer = permit.report("failed", ref="ext-42", latency=1.25)
            self.assertEqual(answer["state"], "failed")
        detail = self.client.status("report:hand")
        self.assertEqual(detail["state"], "failed")  # leaving the block reported nothing more
        self.assertEqual(len(detail["reports"]), 1)
        self.assertEqual(detail["reports"][0]["ref"], "ext-42")
        self.assertEqual(detail["reports"][0]["latency_ms"], 1250)

    def test_lapsed_lease_is_refused(self) -> None:
        with self.assertRaises(LeaseLapsed):
            with self.client.guard("report:slow", kind="report.daily", target="acct-7", body="x", lease=1) as permit:
                permit.validate_for_execution()  # in time: passes
                time.sleep(1.3)
                permit.validate_for_execution()
                self.fail("executed after the lease ran out")
        detail = self.client.status("report:slow")
        self.assertEqual(detail["reports"], [])  # nothing reported for what never ran
        self.assertEqual(detail["state"], "uncertain")  # an operator reconciles it
        self.operator("reconcile", "report:slow", "--result", "not-executed", "--note", "lease lapsed before execution", "--operator", "alice")
        detail = self.client.status("report:slow")
        self.assertEqual((detail["state"], detail["reconciliation"]["result"]), ("reconciled", "not-executed"))

    def test_epoch_before_the_ledger_exists(self) -> None:
        fresh = Client(BIN, db=os.path.join(self.tmp.name, "not-yet", "ledger.db"), agent="py-bot", env=self.env)
        self.assertIsNone(fresh.epoch())  # an agent's first run: no ledger, no epoch, no traceback

    def test_epoch_and_authority_key(self) -> None:
        self.assertIsNone(self.client.epoch())
        out = json.loads(self.operator("epoch", "activate", "--json"))
        epoch = self.client.epoch()
        self.assertEqual(epoch, out["epoch"])
        key = authority_key(epoch, "report:1")
        self.assertEqual(key, "hsr1:%s:report:1" % epoch)
        with self.client.guard(key, kind="report.daily", target="acct-7", body="x"):
            pass
        self.assertEqual(self.state(key), "succeeded")
        with self.assertRaises(ActionDenied) as fenced:  # a plain key is fenced by the epoch
            self.client.request_permit("report:2", kind="report.daily", target="acct-7", body="x")
        self.assertEqual(fenced.exception.state, "fenced")
        with self.assertRaises(ValueError):
            authority_key("", "report:1")

    def test_bad_binary(self) -> None:
        with self.assertRaises(BinaryNotFound) as missing:
            Client(os.path.join(self.tmp.name, "no-such-tollgate"), db=self.db).status("report:1")
        self.assertIn("no-such-tollgate", str(missing.exception))
        with self.assertRaises(BinaryNotFound) as wrong:
            Client("/bin/true", db=self.db).status("report:1")
        self.assertIn("no JSON answer", str(wrong.exception))
        with mock.patch.dict(os.environ, {"PATH": self.tmp.name}):
            os.environ.pop("TOLLGATE_BIN", None)
            with self.assertRaises(BinaryNotFound) as none:
                Client()
        self.assertIn("TOLLGATE_BIN", str(none.exception))
        self.assertTrue(issubclass(BinaryNotFound, TollgateError))

    def test_report_failure_keeps_the_block_exception(self) -> None:
        """When the block raised and the report is refused too, the caller
        sees the block's exception; the refused report is a warning."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with self.assertRaises(KeyError):
                with self.client.guard("report:gone", kind="report.daily", target="acct-7", body="x") as permit:
                    permit.permit_id = "00000000-0000-4000-8000-000000000000"  # not this key's permit
                    raise KeyError("x")
        self.assertTrue(any("reporting unknown for report:gone" in str(w.message) for w in caught), [str(w.message) for w in caught])

if __name__ == "__main__":
    unittest.main()
