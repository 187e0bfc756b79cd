"""Embedding providers. Each provider implements only ``embed_batch``; batching,
caching and retries live once, in the shared layer."""
