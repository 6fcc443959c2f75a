"""The ways in: the `brainiac` command, the MCP server, agent setup."""
