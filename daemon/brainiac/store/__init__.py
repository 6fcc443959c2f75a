"""The vault on disk and brainiac's own state beside it: safe writes, locks, settings, names."""
