"""The Python API: the `Memory` facade, the job table, and what the agent's calls print."""
