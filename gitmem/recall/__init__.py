"""Read-only answers: recall, get (entity and opinions next)."""
