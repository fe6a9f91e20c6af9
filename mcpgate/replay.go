package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// MetaAction is the _meta entry the proxy adds to the answer of every
// call it guards: the action's key and state, whether the answer is a
// replay, and for a settled call whether its result was stored.
const MetaAction = "io.tollgate/action"

// actionMeta is the MetaAction entry.
type actionMeta struct {
	Key   string       `json:"key"`
	State ledger.State `json:"state"`
	// Replayed: the answer was stored by an earlier call (the result
	// of a settled call, given again; or the key's state, which this
	// call did not change). False on the call that ran.
	Replayed bool `json:"replayed"`
	// Predecessor is the key an identical call ended under before the
	// repeat window passed: this call is a new action after it.
	Predecessor string `json:"predecessor,omitempty"`
	// Stored is, on the call that ran and settled, whether its result
	// was stored for a retry to be given; NotStored says why not.
	Stored    *bool  `json:"result_stored,omitempty"`
	NotStored string `json:"result_not_stored,omitempty"`
}

// withMeta adds m to the answer's _meta, beside the upstream's own
// entries.
func withMeta(res *mcp.CallToolResult, m actionMeta) *mcp.CallToolResult {
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[MetaAction] = m
	return res
}

// keep is the answer as it is stored with the report (its JSON, before
// the proxy's _meta entry is added), or "" and why it is not: the proxy
// redacts, or it exceeds ledger.MaxResultLen.
func (p *Proxy) keep(res *mcp.CallToolResult, key string) (string, string) {
	if p.opt.Redact {
		return "", "redacted: the proxy keeps only digests (--redact)"
	}
	b, err := json.Marshal(res)
	if err != nil {
		p.logf("the result of %s cannot be encoded (%s); not stored, a retry will not be given it", key, safetext.Escape(err.Error()))
		return "", "it cannot be encoded as JSON"
	}
	if len(b) > ledger.MaxResultLen {
		p.logf("the result of %s is %d bytes, over the %d stored; not stored, a retry will not be given it", key, len(b), ledger.MaxResultLen)
		return "", fmt.Sprintf("it is %d bytes, over the %d a report stores", len(b), ledger.MaxResultLen)
	}
	return string(b), ""
}

// replay answers an identical call of a settled key with the result its
// call returned, as stored with its report, marked as a replay in _meta
// and by a closing line the model reads; the upstream is not called.
// Where no result was stored (a redacted action, one too large, a key an
// operator reconciled, a report from an older proxy), the answer is
// SETTLED, saying why.
func (p *Proxy) replay(ctx context.Context, a ledger.Answer, m actionMeta) *mcp.CallToolResult {
	m.Replayed = true
	settled := func(why string) *mcp.CallToolResult {
		return withMeta(textResult(advice(a, retryCall)+" Its result cannot be given again: "+why+".", true), m)
	}
	d, err := p.store.Status(ctx, a.Key)
	if err != nil {
		return settled("its record could not be read (" + safetext.Escape(err.Error()) + ")")
	}
	var rep *ledger.ReportRow
	for i := range d.Reports {
		if d.Reports[i].Kind == "accepted" {
			rep = &d.Reports[i]
		}
	}
	switch {
	case d.Archive != 0:
		return settled("its facts, its result with them, were archived to " + safetext.Escape(d.ArchiveFile))
	case d.State == ledger.StateReconciled:
		return settled("an operator settled it, so there is no result")
	case rep == nil || (d.State != ledger.StateSucceeded && d.State != ledger.StateFailed):
		return settled("no report of it holds one")
	case d.Redacted:
		return settled("the action is redacted, so its result was not stored")
	case rep.Result == "":
		return settled("none was stored (a result over " + fmt.Sprint(ledger.MaxResultLen) + " bytes is not, nor one reported by an older proxy or another client)")
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal([]byte(rep.Result), &res); err != nil {
		return settled("the stored result cannot be read (" + safetext.Escape(err.Error()) + ")")
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf(
		"REPLAYED by tollgate: this is the stored result of %s, which ended %s at %s; it was not run again. "+
			"To do it again on purpose, call it with a new %s.", safetext.Escape(a.Key), d.State, stamp(rep.At), KeyArgument)})
	return withMeta(&res, m)
}
