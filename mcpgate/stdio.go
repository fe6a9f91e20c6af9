package mcpgate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// session. Stdin and stdout are not closed when the session ends.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
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
	return l.w.Write(p)
}

// Close leaves stdout open: the process owns it.
func (l *lockedWriter) Close() error { return nil }

// lineFilter passes on only lines that are valid JSON.
type lineFilter struct {
	r       *bufio.Reader
	w       io.Writer
	pending []byte
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, err := f.line()
		if t := bytes.TrimSpace(line); len(t) > 0 {
			if wellFormed(t) {
				f.pending = append(t, '\n')
			} else {
				f.w.Write([]byte(parseError))
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
