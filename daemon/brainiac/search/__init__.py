"""The index and what reads it: documents, syncs, retrieval, the context under a budget."""
