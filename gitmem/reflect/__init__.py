"""Writing memory back, the only code that writes memory files: retain, entity pages, opinions,
MEMORY.md proposals."""
