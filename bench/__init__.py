"""gitmem's benchmarks (see BENCHMARKS.md); importable from the repository's root."""
