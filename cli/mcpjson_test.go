package cli_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/tollgate-dev/tollgate/cli"
)

// TestMCPAnswersWithoutHTMLEscaping (issue 42): the bytes `mcp serve`
// writes carry a rule's condition as written ("<=", "&&"), not Go's HTML
// escapes, in the tools' structured answers as in the CLI's.
func TestMCPAnswersWithoutHTMLEscaping(t *testing.T) {
	db := newDB(t)
	want(t, run(t, db, "", "policy", "set", "refund", "--mode", "auto", "--if", "context.amount <= 50 && context.amount > 0", "--operator", "root"), cli.ExitOK)
	cmd := exec.Command(bin, "--db", db, "mcp", "serve", "--agent", "bot")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"guard","arguments":{"key":"refund:m-1","kind":"refund","target":"acct-7","body":"40 EUR","context":{"amount":40}}}}` + "\n"))
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"id":2`)) {
			continue
		}
		if bytes.Contains(line, []byte(`\u003c`)) || bytes.Contains(line, []byte(`\u0026`)) || !strings.Contains(string(line), "context.amount <= 50 && context.amount > 0") {
			t.Fatalf("the guard tool's answer escapes HTML or lost the condition: %s", line)
		}
		in.Close()
		return
	}
	t.Fatalf("no answer to the guard call: %v", sc.Err())
}
