"""The memory jobs (promotion, reflection, organization) and the event journal."""
