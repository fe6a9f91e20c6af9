// check.mjs: start an MCP server the way a client's JSON configuration
// (Claude Code's .mcp.json, Claude Desktop's or Cursor's mcp.json) says,
// with the official TypeScript SDK client, complete `initialize`, and list
// its tools. It is how `tollgate mcp install`'s output is checked.
//
//   npm ci --ignore-scripts && node check.mjs .mcp.json [SERVER]
//
// Prints one JSON line: {"server": {name, version}, "tools": [names]}.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const [file, wanted] = process.argv.slice(2);
if (!file) {
  console.error("usage: node check.mjs CONFIG.json [SERVER]");
  process.exit(2);
}
const servers = JSON.parse(readFileSync(file, "utf8")).mcpServers ?? {};
const name = wanted ?? Object.keys(servers)[0];
const entry = servers[name];
if (!entry) {
  console.error(`no server ${JSON.stringify(name)} in ${file}`);
  process.exit(2);
}
// As the clients do: a small default environment plus the entry's env.
const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: { ...getDefaultEnvironment(), ...(entry.env ?? {}) },
  stderr: "inherit",
});
const client = new Client({ name: "mcp-check", version: "1.0.0" });
await client.connect(transport); // initialize, then notifications/initialized
const { tools } = await client.listTools();
console.log(JSON.stringify({ server: client.getServerVersion(), tools: tools.map((t) => t.name) }));
await client.close();
