package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tollgate-dev/tollgate/cli"
)

type mcpConfig struct {
	MCPServers map[string]struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	} `json:"mcpServers"`
}

// mcpInstall runs `tollgate mcp install ARGS...` on ledger db and parses
// the configuration it prints.
func mcpInstall(t *testing.T, db string, args ...string) mcpConfig {
	t.Helper()
	r := run(t, db, "", append([]string{"mcp", "install"}, args...)...)
	want(t, r, cli.ExitOK)
	var cfg mcpConfig
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil || len(cfg.MCPServers) != 1 {
		t.Fatalf("mcp install %v printed no one-server configuration: %v\n%s", args, err, r.stdout)
	}
	return cfg
}

// TestMCPInstallConfigsStart: for each client, the entries mcp install
// generates for mcp serve and mcp proxy run this binary by its absolute
// path on the ledger TOLLGATE_DB names, and each one, started as the
// client would start it, completes initialize and tools/list: with the
// Go SDK, and with the official TypeScript SDK client where npm can
// install it.
func TestMCPInstallConfigsStart(t *testing.T) {
	db, upstreamDB := newDB(t), newDB(t)
	dir := t.TempDir()
	upstream := []string{bin, "--db", upstreamDB, "mcp", "serve"}
	var files []string
	for _, client := range []string{"claude-code", "claude-desktop", "cursor"} {
		file := filepath.Join(dir, client, "mcp.json")
		files = append(files, file)
		for _, proxy := range []bool{false, true} {
			args := []string{"--client", client, "--write", file}
			name, tools := "tollgate", []string{"guard", "report", "status"}
			if proxy {
				name = "notes"
				args = append(append(args, "--name", name, "--agent", "notes-bot", "--proxy", "--"), upstream...)
			}
			cfg := mcpInstall(t, db, args...)
			e, ok := cfg.MCPServers[name]
			switch {
			case !ok:
				t.Fatalf("%s: no server %q in %+v", client, name, cfg)
			case e.Command != bin || !filepath.IsAbs(e.Command):
				t.Fatalf("%s: command %q, want this binary's absolute path %q", client, e.Command, bin)
			case e.Env["TOLLGATE_DB"] != db:
				t.Fatalf("%s: env %v, want TOLLGATE_DB=%s", client, e.Env, db)
			case (e.Type == "stdio") != (client == "claude-code"):
				t.Fatalf("%s: type %q", client, e.Type)
			case !proxy && !slices.Equal(e.Args, []string{"mcp", "serve"}):
				t.Fatalf("%s: serve args %q", client, e.Args)
			case proxy && !slices.Equal(e.Args, append([]string{"mcp", "proxy", "--agent", "notes-bot", "--"}, upstream...)):
				t.Fatalf("%s: proxy args %q", client, e.Args)
			}
			// Started as a client starts it: a bare environment and the
			// entry's own env, in a folder of the client's choosing.
			cmd := exec.Command(e.Command, e.Args...)
			cmd.Dir = t.TempDir()
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
			for k, v := range e.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil).Connect(ctx,
				&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
			if err != nil {
				cancel()
				t.Fatalf("%s %s: initialize: %v", client, name, err)
			}
			lt, err := cs.ListTools(ctx, nil)
			var got []string
			for _, tool := range lt.Tools {
				got = append(got, tool.Name)
			}
			cs.Close()
			cancel()
			if err != nil || !slices.Equal(got, tools) {
				t.Fatalf("%s %s: tools/list: %v %v", client, name, got, err)
			}
		}
		var both mcpConfig
		data, _ := os.ReadFile(file)
		if err := json.Unmarshal(data, &both); err != nil || len(both.MCPServers) != 2 {
			t.Fatalf("%s: the file does not hold both servers: %v\n%s", client, err, data)
		}
	}

	t.Run("typescript-sdk", func(t *testing.T) {
		check := mcpCheck(t)
		for _, file := range files {
			for _, name := range []string{"tollgate", "notes"} {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				cmd := exec.CommandContext(ctx, "node", filepath.Join(check, "check.mjs"), file, name)
				cmd.Env = append(os.Environ(), "HOME="+dir)
				out, err := cmd.Output()
				cancel()
				var res struct {
					Server struct{ Name string }
					Tools  []string
				}
				if err != nil || json.Unmarshal(out, &res) != nil || !slices.Equal(res.Tools, []string{"guard", "report", "status"}) ||
					!strings.HasPrefix(res.Server.Name, "tollgate") {
					t.Fatalf("the TypeScript SDK client on %s %s: %v\n%s", file, name, err, out)
				}
			}
		}
	})
}

// mcpCheck installs examples/mcp-check (the official TypeScript MCP SDK,
// pinned by its lockfile) into a temporary folder and returns it. Without
// node and npm, or when npm cannot install, the test is skipped, unless
// TOLLGATE_REQUIRE_NODE is set (CI), where it fails.
func mcpCheck(t *testing.T) string {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("TOLLGATE_REQUIRE_NODE") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("-short: the TypeScript SDK check, which installs packages from npm, is left to the full run")
	}
	npm, err := exec.LookPath("npm")
	if _, nerr := exec.LookPath("node"); err != nil || nerr != nil {
		skip("node and npm are not installed: the TypeScript SDK check cannot run here")
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "check.mjs"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", "mcp-check", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o600)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		skip("npm could not install @modelcontextprotocol/sdk: " + err.Error() + "\n" + string(out))
	}
	return dir
}

// TestMCPInstallWriteMerges: --write keeps every other server and
// setting in its place and the file's mode, replaces an entry of the
// same name, and leaves a file it cannot parse untouched; without
// --write nothing is written.
func TestMCPInstallWriteMerges(t *testing.T) {
	db := newDB(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "claude_desktop_config.json")
	before := `{"globalShortcut": "Ctrl+Space", "mcpServers": {"files": {"command": "npx", "args": ["-y", "@example/files"]}}, "zz": [1, 2]}`
	os.WriteFile(file, []byte(before), 0o644)
	for i := 0; i < 2; i++ { // the second run replaces, not duplicates
		r := run(t, db, "", "mcp", "install", "--client", "claude-desktop", "--write", file)
		want(t, r, cli.ExitOK)
		if !strings.Contains(r.stderr, `server "tollgate" written, 1 other server(s) kept`) {
			t.Fatalf("run %d: %s", i, r.stderr)
		}
	}
	data, _ := os.ReadFile(file)
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	servers := got["mcpServers"].(map[string]any)
	if got["globalShortcut"] != "Ctrl+Space" || len(got["zz"].([]any)) != 2 || len(servers) != 2 || servers["files"].(map[string]any)["command"] != "npx" {
		t.Fatalf("the merge lost something:\n%s", data)
	}
	if i, j, k := strings.Index(string(data), "globalShortcut"), strings.Index(string(data), `"files"`), strings.Index(string(data), `"zz"`); !(i < j && j < k) {
		t.Fatalf("the merge reordered the file:\n%s", data)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, want 0644 kept", fi.Mode().Perm())
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"mcpServers": {"x": `), 0o600)
	if r := run(t, db, "", "mcp", "install", "--client", "cursor", "--write", bad); r.code != cli.ExitInvalid {
		t.Fatalf("a broken file: %d %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(bad); string(b) != `{"mcpServers": {"x": ` {
		t.Fatalf("a broken file was changed: %s", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("files left behind: %v", entries)
	}

	cwd := t.TempDir()
	cmd := exec.Command(bin, "mcp", "install", "--client", "cursor")
	cmd.Dir = cwd
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"mcpServers"`) {
		t.Fatalf("print only: %v %s", err, out)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Fatalf("without --write, mcp install wrote %v", entries)
	}
	for _, args := range [][]string{{"--client", "vim"}, {"--client", "cursor", "--proxy"}, {"--client", "cursor", "--", "npx"}} {
		if r := run(t, db, "", append([]string{"mcp", "install"}, args...)...); r.code != cli.ExitUsage {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
}
