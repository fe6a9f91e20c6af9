package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// archiveFlags: archive --settled-before DATE|DURATION --to FILE.
type archiveFlags struct {
	before, to, operator string
	witnessArg
}

func bindArchive(fs *flag.FlagSet, f *archiveFlags) {
	fs.StringVar(&f.before, "settled-before", "", "archive actions settled before this date (2026-01-31, RFC 3339) or this long ago (90d, 2160h)")
	fs.StringVar(&f.to, "to", "", "the archive file to create (an existing file is never replaced, unless it is an unfinished archive of this ledger)")
	fs.StringVar(&f.operator, "operator", "", "who archives, for the checkpoint event (default $TOLLGATE_OPERATOR, else the login name)")
	f.witnessArg.bind(fs)
}

// parseSettledBefore reads a date (YYYY-MM-DD, midnight UTC, or RFC 3339)
// or an age (a Go duration, or whole days as Nd) before now.
func parseSettledBefore(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, usagef("--settled-before is required (a date such as 2026-01-31, or an age such as 90d)")
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usagef("--settled-before %q: use a date (2026-01-31 or RFC 3339) or an age (90d, 2160h)", safetext.Escape(s))
}

func runArchive(ctx context.Context, c *cmdCtx, f *archiveFlags) (int, error) {
	if err := noArgs(c); err != nil {
		return 0, err
	}
	if f.to == "" {
		return 0, usagef("--to FILE is required")
	}
	path, err := c.ledgerPath()
	if err != nil {
		return 0, err
	}
	s, err := ledger.Open(ctx, path, ledger.Options{Existing: true})
	if err != nil {
		return 0, err
	}
	before, err := parseSettledBefore(f.before, s.Now())
	if err != nil {
		s.Close()
		return 0, err
	}
	op := f.operator
	if op == "" {
		op = c.env.Getenv("TOLLGATE_OPERATOR")
	}
	if op == "" {
		op = c.loginName()
	}
	return runWith(c, s, func(Ledger) (answer, error) {
		res, err := s.Archive(ctx, ledger.ArchiveOptions{SettledBefore: before, To: f.to, Operator: op})
		if err != nil {
			return answer{}, err
		}
		// The checkpoint is a head an operator saw: witnessed, so that a
		// copy of the ledger from before it reads as a rollback.
		if err := f.record(c, res.Checkpoint, "archive"); err != nil {
			return answer{}, err
		}
		return ok(map[string]any{"archive": res, "settled_before": before.UTC(), "ok": true, "exit_code": ExitOK}, func(w io.Writer) {
			fmt.Fprintf(w, "archived %d settled actions (settled before %s) to %s\n", res.Keys, before.UTC().Format(time.RFC3339), safetext.Escape(res.File))
			fmt.Fprintf(w, "archive head: event %d %s\nlive checkpoint: event %d %s\n", res.ArchiveHead.Seq, res.ArchiveHead.Hash, res.Checkpoint.Seq, res.Checkpoint.Hash)
			fmt.Fprintf(w, "prove it: tollgate verify --archive %s\n", safetext.Escape(res.File))
		}), nil
	})
}

// verifyFlags: verify [--witness FILE] [--archive FILE].
type verifyFlags struct {
	witnessArg
	archive string
}

func bindVerify(fs *flag.FlagSet, f *verifyFlags) {
	f.witnessArg.bind(fs)
	fs.StringVar(&f.archive, "archive", "", "also prove that FILE is the archive a checkpoint of this ledger names")
}

// archiveProver is the part of a ledger that proves an archive file.
type archiveProver interface {
	VerifyArchive(ctx context.Context, path string) (ledger.ArchiveProof, error)
}

// proveArchive runs verify --archive's part and writes what it found.
func proveArchive(ctx context.Context, s Ledger, path string) (ledger.ArchiveProof, error) {
	p, ok := s.(archiveProver)
	if !ok {
		return ledger.ArchiveProof{}, fmt.Errorf("%w: this ledger cannot prove archives", ledger.ErrInvalidInput)
	}
	return p.VerifyArchive(ctx, path)
}

func writeArchiveProof(w io.Writer, p ledger.ArchiveProof) {
	fmt.Fprintf(w, "archive %s: checkpoint %d, %d keys, its own verify: %d events (chain head %s)\n",
		safetext.Escape(p.File), p.Archive, p.Keys, p.Report.Events, p.Report.ChainHead)
	for _, pr := range append(p.Report.Problems, p.Problems...) {
		fmt.Fprintf(w, "PROBLEM archive %s\n", safetext.Escape(pr.String()))
	}
}

// exportFlags: export [--archives].
type exportFlags struct{ archives bool }

func bindExport(fs *flag.FlagSet, f *exportFlags) {
	fs.BoolVar(&f.archives, "archives", false, "for each archived action, the evidence its archive proves instead of the live stub")
}
