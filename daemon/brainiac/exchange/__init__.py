"""What crosses the vault's edge: chat imports, backups, and forget."""
