package cli

import "slices"

// The setup commands: what a newcomer runs once to wire tollgate into a
// shell or an MCP client. They are part of the table Main dispatches on
// (commands appends them), so help, completion and tests see them as
// they see every other command.

func setupCommands() []command {
	return []command{
		define("mcp install", "--client claude-code|claude-desktop|cursor [--name N] [--agent A] [--write FILE] [--proxy -- CMD ARGS...]",
			"print (or with --write merge into a file) an MCP client's configuration entry for mcp serve, or mcp proxy in front of CMD", bindMCPInstall, runMCPInstall),
		define[completionFlags]("completion", "bash|zsh|fish", "print a shell completion script for every command and flag (and keys from the ledger)", nil, runCompletion),
	}
}

func init() {
	commandOrder = slices.Insert(commandOrder, slices.Index(commandOrder, "mcp proxy")+1, "mcp install")
	commandOrder = append(commandOrder, "completion")
	subcommands["mcp"] = "serve, proxy or install"
}
