package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tollgate-dev/tollgate/approvals"
	"github.com/tollgate-dev/tollgate/ledger/engine"
)

// serverGuard returns the engine's one-call guard when this store may use
// it: a writer on an engine that has one (PostgreSQL, schema 14), whose
// time is the engine's (an injected clock is the client's, which the
// database's call does not take), and whose grants need no proof read
// outside the ledger (an anchor, a witness): those take the full path,
// where Go proves them. A sealed store writes nothing.
func (s *Store) serverGuard(g grantInputs) (engine.ServerGuard, bool) {
	sg, ok := s.eng.(engine.ServerGuard)
	if !ok || s.w == nil || s.sealed || !s.engineClock || s.noEngineClock.Load() || g.anchor != nil || g.witnessed() {
		return nil, false
	}
	return sg, true
}

// serverPath is what guardOnServer did with a guard.
type serverPath int

const (
	// serverNotSent: the engine has no call for this guard (SQLite, or a
	// store serverGuard keeps off it); nothing was sent.
	serverNotSent serverPath = iota
	// serverLeft: the database left the guard to the full path, having
	// written nothing and having looked for the attempt's permit.
	serverLeft
	// serverDone: the answer is the database's.
	serverDone
)

// guardOnServer runs one guard through the engine's call, retried as a
// write is, and says whether the call answered it (serverPath).
//
// The call is its own transaction, so a connection lost after it was
// sent may have committed it: the retry sends the same permit id, which
// the database recognises as this call's own (GuardOwn), and a caller
// whose retries all fail is told the commit is unknown, as a key
// transaction whose COMMIT got no answer is. A guard with an attempt id
// sends its digest, which the database stores with the permit it issues
// and by which it finds that permit for the attempt's retry
// (GuardAttempt, schema 101): the attempt's lookup costs no round trip of
// its own.
func (s *Store) guardOnServer(ctx context.Context, sg engine.ServerGuard, k Key, p Payload, digest string, opt GuardOptions) (Answer, serverPath, error) {
	c := keyCall(k, p, digest, RecordOptions{Agent: opt.Agent, Redact: opt.Redact, Context: opt.Context})
	c.LeaseMS, c.PermitID = opt.Lease.Milliseconds(), newUUID()
	if opt.Attempt != "" {
		c.AttemptSHA256 = attemptDigest(opt.Attempt)
	}
	var r engine.GuardReply
	var has bool
	err := s.callOnServer(ctx, func(ctx context.Context) (err error) {
		r, has, err = sg.ServerGuard(ctx, c)
		return err
	}, func() { c.Retry = true })
	switch {
	case err != nil:
		return Answer{}, serverDone, err
	case !has:
		return Answer{}, serverNotSent, nil
	}
	a := Answer{Key: c.Key, Logical: k.Logical, Epoch: k.Epoch, SHA256: digest}
	switch r.Path {
	case engine.GuardNew:
		s.commits.Add(1)
		return newKeyAnswer(a, r), serverDone, nil
	case engine.GuardOwn:
		a.State, a.Verdict, a.PermitID, a.LeaseUntil = StateExecuting, Permitted, r.PermitID, fromMS(r.LeaseMS)
		return a, serverDone, nil
	case engine.GuardAttempt, engine.GuardIndex:
		// The key's projection row, as fastLookup reads it: an identical
		// retry is answered from it as from the fast path.
		ix := indexRow{Key: c.Key, Kind: p.Kind}
		if !ix.unpack(r.Answer) || ix.SHA256 != digest || ix.Context != c.ContextSHA256 {
			return Answer{}, serverLeft, nil
		}
		if err := opt.mayActOn(ctx, c.Key, ix.Agent); err != nil {
			return Answer{}, serverDone, err
		}
		if r.Path == engine.GuardAttempt && approvals.SameName(r.Agent, opt.Agent) {
			// The permit the call's attempt was issued, given again only
			// to the agent it was issued to (the names compared as
			// approvals.SameName does, which SQL cannot); another caller
			// carrying the id is answered from the row, as any guard of
			// an executing key is.
			a.State, a.Verdict, a.Replayed, a.PermitID, a.LeaseUntil = StateExecuting, Permitted, true, r.PermitID, fromMS(r.LeaseMS)
			return a, serverDone, nil
		}
		var epochIs func(string) bool
		if r.EpochRead {
			epochIs = func(e string) bool { return e == r.ActiveEpoch }
		}
		if a, ok := s.indexAnswer(ctx, k, ix, epochIs); ok {
			return a, serverDone, nil
		}
		return Answer{}, serverLeft, nil
	case engine.GuardFull:
		return Answer{}, serverLeft, nil
	}
	return Answer{}, serverDone, fmt.Errorf("ledger: the database's guard of key %s answered an unknown path %q", c.Key, r.Path)
}

// keyCall is what a one-call guard or record sends for key k and
// payload p (digest is p's).
func keyCall(k Key, p Payload, digest string, opt RecordOptions) engine.GuardCall {
	// A redacted payload's text goes too: the database hashes it to bind
	// the row's kind and digests, and keeps the digests only (schema 41).
	return engine.GuardCall{Key: k.String(), SHA256: digest, Canonical: string(p.Canonical()), Kind: p.Kind, Target: p.Target,
		BodySHA256: sha256Hex([]byte(p.Body)), Redacted: opt.Redact, Agent: opt.Agent, ContextSHA256: opt.Context.Digest(),
		Context: string(opt.Context.Canonical())}
}

// serverRecord returns the engine's one-call record when this store may
// use it: a writer on an engine that has one (PostgreSQL, schema 24)
// whose time is the engine's. A record grants nothing, so no proof read
// outside the ledger (an anchor, a witness) is needed.
func (s *Store) serverRecord() (engine.ServerRecord, bool) {
	sr, ok := s.eng.(engine.ServerRecord)
	if !ok || s.w == nil || s.sealed || !s.engineClock || s.noEngineClock.Load() {
		return nil, false
	}
	return sr, true
}

// recordOnServer records one intent through the engine's call, retried
// as a write is. done is false when the database left the record to the
// full path (it wrote nothing then) or has no such call: a key recorded
// already whose projection row is not an identical retry's (a conflict,
// for the full path to log), an archived key, a key of another epoch, a
// signed ledger. An attempt after one whose answer was lost finds the
// key recorded and is answered by the full path as a replay, as the
// client's own retry is.
func (s *Store) recordOnServer(ctx context.Context, sr engine.ServerRecord, k Key, p Payload, digest string, opt RecordOptions) (Intent, bool, error) {
	c := keyCall(k, p, digest, opt)
	var r engine.GuardReply
	var has bool
	err := s.callOnServer(ctx, func(ctx context.Context) (err error) {
		r, has, err = sr.ServerRecord(ctx, c)
		return err
	}, func() { c.Retry = true })
	if err != nil || !has {
		return Intent{}, false, err
	}
	switch r.Path {
	case engine.GuardNew:
		s.commits.Add(1)
		return Intent{Key: k, SHA256: digest, Created: true, Retained: true, Redacted: opt.Redact,
			Agent: opt.Agent, Kind: p.Kind, State: StateRecorded}, true, nil
	case engine.GuardIndex:
		// The key's projection row, as fastLookup reads it.
		ix := indexRow{Key: c.Key, Kind: p.Kind}
		if !ix.unpack(r.Answer) || ix.SHA256 != digest || ix.Context != c.ContextSHA256 {
			return Intent{}, false, nil
		}
		return ix.intent(k, toMS(s.now())), true, nil
	case engine.GuardFull:
		return Intent{}, false, nil
	}
	return Intent{}, false, fmt.Errorf("ledger: the database's record of key %s answered an unknown path %q", c.Key, r.Path)
}

// callOnServer runs one call of the engine's own (a transaction of its
// own), retried as a write is. A lock the database cannot have within
// the attempt's time left (ctx's deadline) it gives up: the engine
// measures that time once it holds a connection. A failure after the
// call was sent may have committed it: sent is told before the retry,
// and a caller whose retries all fail is told the commit is unknown.
func (s *Store) callOnServer(ctx context.Context, call func(context.Context) error, sent func()) error {
	return s.retry(ctx, s.attemptTimeout, func(ctx context.Context) error {
		t0 := time.Now()
		err := call(ctx)
		switch {
		case err == nil:
		case errors.Is(err, engine.ErrNotSent) && ctx.Err() != nil:
			// Not sent because the attempt's time ran out or the caller
			// gave up while it waited for a connection: attempt tells
			// which, and a caller that gave up is told so (context.Canceled).
			return err
		case errors.Is(err, engine.ErrNotSent):
			return &abandonedError{err: err, after: time.Since(t0).Round(100 * time.Millisecond)}
		case gaveUpLock(err) && namesHolder(err):
			// The database's bound on a wait for a key's lock (schema
			// 29): nothing committed, and the holder it names is what the
			// caller is told if every attempt meets it.
			return err
		case gaveUpLock(err):
			// The database's own bound on this attempt: nothing committed,
			// exactly as an attempt of the client path abandoned while it
			// waited for a lock.
			return &abandonedError{err: fmt.Errorf("the database gave up a lock at the attempt's deadline (%s)", s.eng.MapError(err)),
				after: time.Since(t0).Round(100 * time.Millisecond)}
		case s.retryable(err) && !notSent(err) && !errors.Is(s.eng.MapError(err), ErrBusy):
			sent()
			return &commitError{err}
		}
		return err
	})
}

// serverReport returns the engine's one-call report when this store may
// use it: a writer on an engine that has one (PostgreSQL, schema 19)
// whose time is the engine's.
func (s *Store) serverReport() (engine.ServerReport, bool) {
	sr, ok := s.eng.(engine.ServerReport)
	if !ok || s.w == nil || s.sealed || !s.engineClock || s.noEngineClock.Load() {
		return nil, false
	}
	return sr, true
}

// reportOnServer files one report through the engine's call. done is
// false when the database left the report to the full path (it wrote
// nothing then: a refusal, a replay, a late report, a reconciled key) or
// has no such call. A retry after a lost answer finds the report it
// committed and is answered by the full path as a replay.
func (s *Store) reportOnServer(ctx context.Context, sr engine.ServerReport, key, permitID string, outcome Outcome, opt ReportOptions) (ReportAnswer, bool, error) {
	c := engine.ReportCall{Key: key, PermitID: permitID, Outcome: string(outcome), Ref: opt.Ref, LatencyMS: opt.Latency.Milliseconds(), Result: opt.Result}
	var r engine.ReportReply
	var has bool
	err := s.callOnServer(ctx, func(ctx context.Context) (err error) {
		r, has, err = sr.ServerReport(ctx, c)
		return err
	}, func() {})
	if err != nil || !has || !r.Done {
		return ReportAnswer{}, false, err
	}
	s.commits.Add(1)
	st := stateFrom(outcomeStage(outcome), 0, r.Now)
	return ReportAnswer{Key: key, State: st, Outcome: outcome, SafeNewKey: safeNewKey(st, "")}, true, nil
}

// newKeyAnswer is the answer to the call that recorded a new key and took
// the step its policy decided, as guardTx gives it.
func newKeyAnswer(a Answer, r engine.GuardReply) Answer {
	a.Policy = approvals.Mode(r.Mode)
	if r.RuleID != 0 {
		a.Rule = &approvals.Explain{RuleID: r.RuleID, Pattern: r.Pattern}
	}
	switch a.Policy {
	case approvals.Deny:
		a.State, a.Verdict, a.Reason = StateDenied, Denied, "denied by policy "+r.Pattern
	case approvals.Auto:
		a.State, a.Verdict, a.PermitID, a.LeaseUntil = StateExecuting, Permitted, r.PermitID, fromMS(r.LeaseMS)
	default:
		a.Approvers = int(r.Approvers)
		a.State, a.Verdict, a.ExpiresAt = StatePending, RetryLater, fromMS(r.ExpiresMS)
	}
	return a
}

// gaveUpLock reports the database's lock_timeout (55P03): the statement
// failed, and its transaction with it.
func gaveUpLock(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// namesHolder reports a lock wait the schema's functions gave up under
// their own bound, naming the sessions that hold the lock ("the key K is
// held by ROLE (pid N)", schemas 25 and 29), rather than at the attempt's
// deadline the client sent.
func namesHolder(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && strings.Contains(pe.Message, " is held by ")
}

// notSent reports a failure that happened before the call reached the
// server (no connection could be made): nothing of it can have committed.
func notSent(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.SafeToRetry(err)
}
