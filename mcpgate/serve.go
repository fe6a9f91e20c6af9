package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/safetext"
)

// Version is what the servers report as their implementation version.
const Version = "0.4.0"

// GuardInput is the guard tool's arguments: the action's key and its
// exact payload, as `tollgate guard` takes them.
type GuardInput struct {
	Key          string `json:"key" jsonschema:"the action's stable key: lowercase [a-z0-9-] segments joined by ':' (for example refund:entry-42), or hsr1:<epoch>:<logical-key> once an operator epoch is active; the same key for every retry of the same action"`
	Kind         string `json:"kind" jsonschema:"what the action is; policy matches it (for example refund)"`
	Target       string `json:"target" jsonschema:"what the action acts on (for example acct-7)"`
	Body         string `json:"body" jsonschema:"the exact operation; the key binds its SHA-256, so a retry must send the same body"`
	Agent        string `json:"agent,omitempty" jsonschema:"the calling agent's name in the evidence; default the MCP client's name"`
	LeaseSeconds int    `json:"lease_seconds,omitempty"` // described by guardSchema, from the ledger's constants
	Redact       bool   `json:"redact,omitempty" jsonschema:"retain only the payload's hashes, not its text"`
	// Context is what policy may read beside the payload.
	Context map[string]any `json:"context,omitempty" jsonschema:"what policy may read beside the payload: an object of strings, numbers, booleans and lists of strings (for example {\"amount\": 40.5, \"flags\": [\"vip\"]}); bound to the key like the payload"`
}

// ReportInput is the report tool's arguments.
type ReportInput struct {
	Key       string `json:"key" jsonschema:"the action key guard permitted"`
	PermitID  string `json:"permit_id" jsonschema:"the permit_id guard returned"`
	Outcome   string `json:"outcome" jsonschema:"succeeded, failed, or unknown when you cannot tell whether the action took effect"`
	Ref       string `json:"ref,omitempty" jsonschema:"a safe reference to the external effect (a provider id), never the payload"`
	LatencyMS int64  `json:"latency_ms,omitempty" jsonschema:"how long the action took, in milliseconds"`
}

// StatusInput is the status tool's arguments.
type StatusInput struct {
	Key string `json:"key" jsonschema:"the action key"`
}

// ServeOptions are the server's settings.
type ServeOptions struct {
	// Agent names the caller when a guard call names none; empty means
	// the MCP client's own name.
	Agent string
}

// NewServer returns the MCP server with the tools guard, report and
// status on store. There is no decision tool: approving, rejecting and
// reconciling are an operator's, in the console or the CLI, with the
// operator's key.
func NewServer(store Ledger, opt ServeOptions) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tollgate", Version: Version}, &mcp.ServerOptions{
		Instructions: "Before any consequential action (refund, email, export, publish, maintenance), call guard with a stable key and the exact payload. " +
			"Execute only on PERMITTED, then call report. PENDING means an operator must approve: stop, and call guard again later with the same key and payload. " +
			"Never retry an action under a new key to get around an answer.",
	})
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "guard",
		Title:       "Ask tollgate before acting",
		Description: "Records the action if new, applies policy, requests an operator's approval once, and issues at most one permit. It answers at once: pending is an answer, not a wait. The same call again returns the same answer (or the operator's decision).",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(bool), OpenWorldHint: new(bool)},
		InputSchema: guardSchema(),
	}, guardTool(store, opt))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "report",
		Title:       "Report an action's outcome",
		Description: "Records the outcome of an action guard permitted. Report unknown when you cannot tell whether it took effect: the key becomes uncertain and an operator reconciles it.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(bool), OpenWorldHint: new(bool)},
		InputSchema: reportSchema(),
	}, reportTool(store))
	mcp.AddTool(srv, &mcp.Tool{
		Name:        "status",
		Title:       "Everything tollgate knows about a key",
		Description: "The key's state, its approval request and decisions with their proof, its permit and its reports.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, statusTool(store))
	return srv
}

// guardSchema is GuardInput's schema with the lease's bounds and default
// written from the ledger's constants, so that the schema an agent reads
// cannot drift from what guard does (it once said 300 s; the default is
// ledger.DefaultLease).
func guardSchema() *jsonschema.Schema {
	s, err := jsonschema.For[GuardInput](nil)
	if err != nil {
		panic(err) // a fixed type: fails at the first test, never in use
	}
	lease := s.Properties["lease_seconds"]
	lease.Description = leaseDescription()
	lease.Default = json.RawMessage(strconv.FormatInt(seconds(ledger.DefaultLease), 10))
	return s
}

// leaseDescription is lease_seconds' description: its bounds and default.
func leaseDescription() string {
	return fmt.Sprintf("seconds the permit holder has to report the outcome (%d to %d); default %d",
		seconds(ledger.MinLease), seconds(ledger.MaxLease), seconds(ledger.DefaultLease))
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }

// reportSchema is ReportInput's schema with outcome's three values.
func reportSchema() *jsonschema.Schema {
	s, err := jsonschema.For[ReportInput](nil)
	if err != nil {
		panic(err) // a fixed type: fails at the first test, never in use
	}
	s.Properties["outcome"].Enum = []any{string(ledger.Succeeded), string(ledger.Failed), string(ledger.Unknown)}
	return s
}

// textResult is a result whose text is the instruction and whose
// structured content is the answer.
func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

func guardTool(store Ledger, opt ServeOptions) mcp.ToolHandlerFor[GuardInput, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in GuardInput) (*mcp.CallToolResult, any, error) {
		if res, obj := badArguments(req); res != nil {
			return res, obj, nil
		}
		agent := opt.Agent
		if in.Agent != "" {
			agent = in.Agent
		} else if agent == "" {
			agent = defaultAgent(store, req)
		}
		gopt := ledger.GuardOptions{Agent: agent, Redact: in.Redact, Lease: time.Duration(in.LeaseSeconds) * time.Second}
		if in.LeaseSeconds == 0 {
			gopt.Lease = ledger.DefaultLease
		}
		if len(in.Context) > 0 {
			raw, _ := json.Marshal(in.Context)
			c, err := ledger.ParseContext(raw)
			if err != nil {
				text, obj := refusalAdvice(err)
				return textResult(text, true), obj, nil
			}
			gopt.Context = c
		}
		a, err := store.Guard(ctx, in.Key, ledger.Payload{Kind: in.Kind, Target: in.Target, Body: in.Body}, gopt)
		if text, obj, ok := faultAdvice(err, in.Key, callGuard); ok {
			return textResult(text, true), obj, nil
		}
		if err != nil {
			text, obj := refusalAdvice(err)
			return textResult(text, !isAnswer(err)), obj, nil
		}
		return textResult(advice(a, retryGuard), false), a, nil
	}
}

func reportTool(store Ledger) mcp.ToolHandlerFor[ReportInput, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in ReportInput) (*mcp.CallToolResult, any, error) {
		if res, obj := badArguments(req); res != nil {
			return res, obj, nil
		}
		r, err := store.Report(ctx, in.Key, in.PermitID, ledger.Outcome(in.Outcome),
			ledger.ReportOptions{Ref: in.Ref, Latency: time.Duration(in.LatencyMS) * time.Millisecond})
		if text, obj, ok := faultAdvice(err, in.Key, callReport); ok {
			return textResult(text, true), obj, nil
		}
		if err != nil {
			text, obj := refusalAdvice(err)
			return textResult(text, true), obj, nil
		}
		text := fmt.Sprintf("REPORTED: %s is %s.", r.Key, r.State)
		if r.Late {
			text = fmt.Sprintf("REPORTED LATE: %s is %s; the report is kept as evidence and an operator reconciles the key.", r.Key, r.State)
		}
		return textResult(text, false), r, nil
	}
}

func statusTool(store Ledger) mcp.ToolHandlerFor[StatusInput, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in StatusInput) (*mcp.CallToolResult, any, error) {
		if res, obj := badArguments(req); res != nil {
			return res, obj, nil
		}
		d, err := store.Status(ctx, in.Key)
		if text, obj, ok := faultAdvice(err, in.Key, callStatus); ok {
			return textResult(text, true), obj, nil
		}
		if err != nil {
			text, obj := refusalAdvice(err)
			return textResult(text, true), obj, nil
		}
		return textResult(fmt.Sprintf("%s is %s.", d.Key, d.State), false), d, nil
	}
}

// badArguments is the refusal of a call whose raw arguments hold text
// that is not Unicode, naming the argument; nil when they are sound. The
// typed input has already been decoded with U+FFFD in place of the bad
// bytes, so only the raw arguments can tell.
func badArguments(req *mcp.CallToolRequest) (*mcp.CallToolResult, any) {
	if req == nil || req.Params == nil {
		return nil, nil
	}
	err := checkText(req.Params.Arguments)
	if err == nil {
		return nil, nil
	}
	var be *badTextError
	errors.As(err, &be)
	return textResult("REFUSED: "+err.Error()+"; nothing was recorded.", true),
		map[string]any{"error": err.Error(), "field": safetext.Escape(be.field)}
}

// isAnswer reports whether a Guard error is an answer the agent acts on
// (a conflict, a fence) rather than a failed call.
func isAnswer(err error) bool {
	var ce *ledger.ConflictError
	var fe *ledger.FencedError
	return errors.As(err, &ce) || errors.As(err, &fe)
}

// defaultAgent is the agent a call that names none is recorded under:
// the ledger's own default where it binds names to login roles
// (PostgreSQL from schema 28 refuses any other name unless an operator
// allowed it), else the MCP client's name.
func defaultAgent(store Ledger, req *mcp.CallToolRequest) string {
	if d, ok := store.(interface{ DefaultAgent() string }); ok && d.DefaultAgent() != "" {
		return d.DefaultAgent()
	}
	return clientName(req)
}

// clientName is the MCP client's name from its initialize request, as
// the evidence's agent: "mcp:<name>".
func clientName(req *mcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return "mcp"
	}
	if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		return "mcp:" + p.ClientInfo.Name
	}
	return "mcp"
}
