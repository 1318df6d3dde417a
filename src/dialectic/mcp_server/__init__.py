"""The MCP server: debates as job-style tools for assistants (``dialectic mcp``)."""
