"""Embedding providers (SPEC §9). Each provider implements only ``embed_batch``; batching,
caching and retries live once, in the shared layer."""
