package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/ledger/postgres"
	"github.com/tollgate-dev/tollgate/safetext"
)

// mcpClient is an MCP client whose configuration `mcp install` writes.
type mcpClient struct {
	name string
	// typed: the client's entry carries "type": "stdio".
	typed bool
	// where says where the client reads its configuration.
	where string
}

var mcpClients = []mcpClient{
	{"claude-code", true, ".mcp.json in the project's root (shared with the team), or: claude mcp add-json NAME 'ENTRY'"},
	{"claude-desktop", false, "claude_desktop_config.json: ~/Library/Application Support/Claude/ on macOS, %APPDATA%\\Claude\\ on Windows"},
	{"cursor", false, ".cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project"},
}

func mcpClientNames() []string {
	var out []string
	for _, c := range mcpClients {
		out = append(out, c.name)
	}
	return out
}

type mcpInstallFlags struct {
	client, name, agent, write string
	proxy                      bool
}

func bindMCPInstall(fs *flag.FlagSet, f *mcpInstallFlags) {
	fs.StringVar(&f.client, "client", "", "the MCP client: "+strings.Join(mcpClientNames(), ", "))
	fs.StringVar(&f.name, "name", "", "the server's name in the configuration (default tollgate, or with --proxy the upstream's)")
	fs.StringVar(&f.agent, "agent", "", "the agent's name in the evidence (passed to mcp serve or mcp proxy)")
	fs.StringVar(&f.write, "write", "", "merge the entry into this configuration file, keeping every other server and setting (default: print only)")
	fs.BoolVar(&f.proxy, "proxy", false, "configure mcp proxy in front of the upstream server CMD ARGS... given after --, instead of mcp serve")
}

// mcpEntry is one server in a client's "mcpServers".
type mcpEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

func runMCPInstall(_ context.Context, c *cmdCtx, f *mcpInstallFlags) (int, error) {
	i := slices.IndexFunc(mcpClients, func(m mcpClient) bool { return m.name == f.client })
	if i < 0 {
		return 0, usagef("--client is one of %s (got %q)", strings.Join(mcpClientNames(), ", "), safetext.Escape(f.client))
	}
	client := mcpClients[i]
	switch {
	case f.proxy && len(c.pos) == 0:
		return 0, usagef("--proxy needs the upstream MCP server's command after --: tollgate mcp install --client %s --proxy -- CMD ARGS...", client.name)
	case !f.proxy && len(c.pos) > 0:
		return 0, usagef("a command after -- is the upstream of --proxy; without --proxy the entry runs mcp serve")
	}
	self, err := os.Executable()
	if err != nil {
		return ExitError, fmt.Errorf("the path of this tollgate binary: %v", err)
	}
	e := mcpEntry{Command: self, Args: []string{"mcp", "serve"}}
	name := "tollgate"
	if f.proxy {
		e.Args = []string{"mcp", "proxy"}
		name = upstreamName(c.pos)
	}
	if client.typed {
		e.Type = "stdio"
	}
	if f.agent != "" {
		e.Args = append(e.Args, "--agent", f.agent)
	}
	if f.proxy {
		e.Args = append(append(e.Args, "--"), c.pos...)
	}
	if f.name != "" {
		name = f.name
	}
	db := c.db
	if db == "" {
		db = c.env.Getenv("TOLLGATE_DB")
	}
	if db != "" {
		// The client starts the server in a folder of its own choosing.
		if !postgres.IsURL(db) {
			if db, err = filepath.Abs(db); err != nil {
				return 0, fmt.Errorf("%w: --db: %v", ledger.ErrInvalidInput, err)
			}
		}
		e.Env = map[string]string{"TOLLGATE_DB": db}
	}
	entry, err := json.Marshal(e)
	if err != nil {
		return ExitError, err
	}
	doc, err := mergeServer(nil, name, entry)
	if err != nil {
		return ExitError, err
	}
	out := map[string]any{"client": client.name, "name": name, "config": json.RawMessage(doc), "where": client.where, "exit_code": ExitOK}
	if f.write != "" {
		kept, err := writeServer(f.write, name, entry)
		if err != nil {
			return 0, err
		}
		out["written"], out["servers_kept"] = f.write, kept
		fmt.Fprintf(c.env.Stderr, "tollgate mcp install: %s: server %q written, %d other server(s) kept\n", safetext.Escape(f.write), safetext.Escape(name), kept)
	} else if !c.json {
		fmt.Fprintf(c.env.Stderr, "tollgate mcp install: for %s, put this in %s (or run again with --write FILE)\n", client.name, client.where)
	}
	if c.json {
		writeJSON(c.stdout, out)
		return ExitOK, nil
	}
	var b bytes.Buffer
	json.Indent(&b, doc, "", "  ")
	fmt.Fprintln(c.stdout, b.String())
	return ExitOK, nil
}

// upstreamName names a proxied server after its command's last word
// that is not a flag: "npx -y @example/mailer-mcp" is mailer-mcp,
// "python3 notes_server.py" is notes_server.
func upstreamName(argv []string) string {
	name := argv[0]
	for _, a := range slices.Backward(argv) {
		if !strings.HasPrefix(a, "-") {
			name = a
			break
		}
	}
	name = filepath.Base(name)
	if at := strings.LastIndex(name, "@"); at > 0 {
		name = name[:at] // a version: pkg@1.2
	}
	if ext := filepath.Ext(name); ext != "" && ext != name {
		name = strings.TrimSuffix(name, ext)
	}
	if name == "" || name == "." {
		return "upstream"
	}
	return name
}

// member is one name and value of a JSON object, kept in file order.
type member struct {
	key string
	val json.RawMessage
}

// decodeObject reads a JSON object's members in order.
func decodeObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{tok.(string), v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return out, nil
}

func encodeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// set replaces the member key in place, or appends it.
func set(ms []member, key string, val json.RawMessage) []member {
	if i := slices.IndexFunc(ms, func(m member) bool { return m.key == key }); i >= 0 {
		ms[i].val = val
		return ms
	}
	return append(ms, member{key, val})
}

// mergeServer puts entry under mcpServers.name in the configuration doc
// (nil for a new one), keeping every other member in its place.
func mergeServer(doc []byte, name string, entry json.RawMessage) ([]byte, error) {
	top := []member{}
	if len(bytes.TrimSpace(doc)) > 0 {
		var err error
		if top, err = decodeObject(doc); err != nil {
			return nil, err
		}
	}
	servers := []member{}
	if i := slices.IndexFunc(top, func(m member) bool { return m.key == "mcpServers" }); i >= 0 {
		var err error
		if servers, err = decodeObject(top[i].val); err != nil {
			return nil, fmt.Errorf("mcpServers: %v", err)
		}
	}
	return encodeObject(set(top, "mcpServers", encodeObject(set(servers, name, entry)))), nil
}

// writeServer merges the entry into the file and replaces it at once
// (a new file beside it, renamed over it), keeping its mode. It returns
// how many other servers the file holds.
func writeServer(path, name string, entry json.RawMessage) (int, error) {
	old, err := os.ReadFile(path)
	mode := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return 0, err
		}
	case err != nil:
		return 0, fmt.Errorf("%w: read %s: %v", ledger.ErrInvalidInput, path, err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	doc, err := mergeServer(old, name, entry)
	if err != nil {
		return 0, fmt.Errorf("%w: %s is not a configuration this command can merge into (%v); it was left as it was", ledger.ErrInvalidInput, path, err)
	}
	var b bytes.Buffer
	json.Indent(&b, doc, "", "  ")
	b.WriteByte('\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(b.Bytes()); err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return 0, err
	}
	top, _ := decodeObject(doc)
	var servers []member
	for _, m := range top {
		if m.key == "mcpServers" {
			servers, _ = decodeObject(m.val)
		}
	}
	return len(servers) - 1, nil
}
