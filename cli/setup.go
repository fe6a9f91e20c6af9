package cli

// The setup commands: what a newcomer runs once to wire tollgate into a
// shell or an MCP client. They are part of the table Main dispatches on
// (commands appends them), so help, completion and tests see them as
// they see every other command.

func setupCommands() []command {
	return []command{
		define[completionFlags]("completion", "bash|zsh|fish", "print a shell completion script for every command and flag (and keys from the ledger)", nil, runCompletion),
	}
}

func init() {
	commandOrder = append(commandOrder, "completion")
}

func mcpClientNames() []string { return nil }
