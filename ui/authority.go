package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// authorityEvery is how often the console re-reads who may decide: a
// change to the operator registry (or whatever else the store counts as
// authority) reaches an open console within a second, with or without a
// write it can watch.
const authorityEvery = time.Second

// The statuses a ledger.Proof carries, named once here: the ledger has
// no typed constants for them yet.
const (
	proofSigned   = "signed"
	proofUnsigned = "unsigned"
	proofInvalid  = "invalid"
)

// authority is what the console last read of who may decide: how its own
// decisions are signed and which operators' keys count now. A vote signed
// by a key that no longer counts is not shown as done.
type authority struct {
	read bool
	sign ledger.Signing
	// signed: the ledger was ever signed (decisions need keys).
	signed bool
	// ops are the registered operators now, name by fingerprint.
	ops map[string]string
	// err is why the last read failed: then no signed vote counts.
	err string
}

type (
	authorityTickMsg struct{}
	authorityMsg     struct {
		sign ledger.Signing
		ops  ledger.OperatorSet
		err  error
	}
)

func authorityTick() tea.Cmd {
	return tea.Tick(authorityEvery, func(time.Time) tea.Msg { return authorityTickMsg{} })
}

// readAuthority reads the signing state and the operator set in a
// command, off the Update loop.
func readAuthority(pctx context.Context, s Ledger, operator string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(pctx, 5*time.Second)
		defer cancel()
		var msg authorityMsg
		if msg.sign, msg.err = s.Signing(ctx, operator); msg.err != nil {
			return msg
		}
		msg.ops, msg.err = s.Operators(ctx)
		return msg
	}
}

func newAuthority(msg authorityMsg) authority {
	a := authority{read: true, sign: msg.sign, signed: msg.ops.Signed || msg.sign.Signed, ops: map[string]string{}}
	for _, op := range msg.ops.Operators {
		a.ops[op.Fingerprint] = op.Name
	}
	return a
}

// honours reports whether a decision's proof counts under this authority:
// unsigned on a ledger that was never signed, or signed by a key that is
// registered now. Before the first read, the proof's own word stands.
func (a authority) honours(p ledger.Proof) (bool, string) {
	switch {
	case p.Status == proofInvalid:
		return false, "its signature is invalid"
	case !a.read:
		return true, ""
	case a.err != "":
		return false, "who may decide could not be re-read"
	case p.Status == proofUnsigned && !a.signed:
		return true, ""
	case p.Status == proofUnsigned:
		return false, "unsigned on a signed ledger"
	}
	if _, ok := a.ops[p.Fingerprint]; !ok {
		return false, "its signer's key is no longer registered"
	}
	return true, ""
}

// changes says, one line each, what differs from the authority read
// before: operators added or removed, the ledger turning signed, this
// console's key gaining or losing the right to sign.
func (a authority) changes(next authority) []string {
	if !a.read || a.err != "" || next.err != "" {
		return nil
	}
	var out []string
	if !a.signed && next.signed {
		out = append(out, "the ledger is now signed: decisions need a registered key")
	}
	for _, fp := range sortedKeys(a.ops) {
		if _, ok := next.ops[fp]; !ok {
			out = append(out, fmt.Sprintf("operator %s (%s) removed: their approvals no longer count", safetext.Escape(a.ops[fp]), shortFP(fp)))
		}
	}
	for _, fp := range sortedKeys(next.ops) {
		if _, ok := a.ops[fp]; !ok {
			out = append(out, fmt.Sprintf("operator %s (%s) added", safetext.Escape(next.ops[fp]), shortFP(fp)))
		}
	}
	switch was, is := a.sign.Problem, next.sign.Problem; {
	case was == "" && is != "":
		out = append(out, "this console can no longer sign: "+safetext.Escape(is))
	case was != "" && is == "":
		out = append(out, "this console signs again as "+safetext.Escape(next.sign.Operator))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shortFP is a fingerprint as the status bar shows it: SHA256:abcdefgh….
func shortFP(fp string) string {
	h := strings.TrimPrefix(fp, "SHA256:")
	return "SHA256:" + h[:min(8, len(h))] + "…"
}
