"""Reading how the memory changed between two revisions (``gitmem review``): read-only, from git."""
