"""Pure text: the language readers and the vault's Markdown formats. No files, no index."""
