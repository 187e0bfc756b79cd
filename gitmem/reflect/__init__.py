"""Writing memory back: entity pages, opinions, proposals (reflect, review)."""
