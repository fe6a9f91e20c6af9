package mcpgate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/internal/jsonout"
	"github.com/tollgate-dev/tollgate/safetext"
)

// MaxLine bounds one JSON-RPC message on stdin.
const MaxLine = 8 << 20

// parseError is the JSON-RPC answer to a line that is not JSON (or is
// too long): the id is null, as the specification asks when it cannot be
// read.
const parseError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: a line that is not one JSON-RPC message was skipped (tollgate reads one JSON object per line)"}}` + "\n"

// Stdio is the transport for a server on stdin and stdout that survives
// malformed input: a line that is not JSON is answered with a JSON-RPC
// parse error and skipped, where the SDK's own transport would end the
// session. A request before initialize is answered with -32600 (invalid
// request), where the SDK answers error code 0, which is no JSON-RPC
// code; any other code-0 error the SDK writes goes out as -32603.
// Stdin and stdout are not closed when the session ends.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: jsonout.Writer(out)} // no HTML escaping in what a client reads
	return &mcp.IOTransport{Reader: &lineFilter{r: bufio.NewReader(in), w: w}, Writer: w, MaxLineLength: MaxLine}
}

// lockedWriter serializes the SDK's writes and the filter's parse errors,
// each one whole line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fixed, ok := withErrorCode(p); ok {
		if _, err := l.w.Write(fixed); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return l.w.Write(p)
}

// withErrorCode gives a JSON-RPC error response with code 0 a real code.
// The SDK answers a plain Go error from its own machinery (the
// initialization gate among them) with code 0, which clients cannot
// classify: the gate's refusal becomes -32600 (invalid request), any
// other -32603 (internal error). Other lines are left as they are.
func withErrorCode(line []byte) ([]byte, bool) {
	if !bytes.Contains(line, []byte(`"code":0`)) || bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil || m["error"] == nil {
		return nil, false
	}
	var e map[string]any
	if json.Unmarshal(m["error"], &e) != nil || e["code"] != float64(0) {
		return nil, false
	}
	e["code"] = jsonrpc.CodeInternalError
	if msg, _ := e["message"].(string); strings.Contains(msg, "initialization") {
		e["code"] = jsonrpc.CodeInvalidRequest
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, false
	}
	m["error"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

// Close leaves stdout open: the process owns it.
func (l *lockedWriter) Close() error { return nil }

// lineFilter passes on only lines that are valid JSON, and no request
// before initialize.
type lineFilter struct {
	r       *bufio.Reader
	w       io.Writer
	pending []byte
	// initialized is set once an initialize request has passed: the SDK
	// handles it before any later message, so from then on its own gate
	// decides.
	initialized bool
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.line()
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if !wellFormed(t) {
				f.w.Write([]byte(parseError))
			} else if refusal := f.early(t); refusal != nil {
				f.w.Write(refusal)
			} else {
				f.pending = append(t, '\n')
			}
		}
		if err != nil && len(f.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// line reads one line, at most MaxLine bytes; a longer one is read to its
// end and returned as not JSON.
func (f *lineFilter) line() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine {
			// Not JSON once it starts with NUL: the rest of the line is
			// read and dropped, and answered with one parse error.
			buf = []byte("\x00")
			chunk = nil
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
	}
}

// early is the answer to a request that comes before initialize, nil for
// a message to pass on: initialize itself, ping, a notification, a
// response, a batch (the SDK's own answer, given a code by
// withErrorCode), and a request of the sessionless protocol, which
// carries its protocol version in _meta instead of initializing.
func (f *lineFilter) early(line []byte) []byte {
	if f.initialized || line[0] == '[' {
		return nil
	}
	var m struct {
		Method *string         `json:"method"`
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	json.Unmarshal(line, &m) // wellFormed has read it; params of another shape are the SDK's to refuse
	switch {
	case m.Method == nil || m.ID == nil:
		return nil
	case *m.Method == "initialize":
		f.initialized = true
		return nil
	case *m.Method == "ping" || m.Params.Meta["io.modelcontextprotocol/protocolVersion"] != nil:
		return nil
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{
		"code":    jsonrpc.CodeInvalidRequest,
		"message": fmt.Sprintf("%q before initialize: send initialize first (the session is not initialized)", safetext.Escape(*m.Method)),
	}})
	return append(b, '\n')
}

// wellFormed reports whether a line is a JSON-RPC 2.0 message (an object
// with "jsonrpc": "2.0" and a method or an id) or a batch of them: the
// SDK ends the session on anything else.
func wellFormed(line []byte) bool {
	if len(line) > 0 && line[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
			return false
		}
		for _, m := range batch {
			if !wellFormed(bytes.TrimSpace(m)) || bytes.TrimSpace(m)[0] == '[' {
				return false
			}
		}
		return true
	}
	var m struct {
		Version string          `json:"jsonrpc"`
		Method  *string         `json:"method"`
		ID      json.RawMessage `json:"id"`
	}
	return json.Unmarshal(line, &m) == nil && m.Version == "2.0" && (m.Method != nil || m.ID != nil)
}

// Close leaves stdin open: the process owns it.
func (f *lineFilter) Close() error { return nil }
