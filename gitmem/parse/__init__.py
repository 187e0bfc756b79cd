"""Parsing: bytes of one file version in, domain objects out. No I/O, no SQL."""
