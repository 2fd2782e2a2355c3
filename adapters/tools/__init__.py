"""The agent's tools, on the local machine: files, search, shell, web."""
