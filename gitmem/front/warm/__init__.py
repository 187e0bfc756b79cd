"""The warm process: 'gitmem serve' keeps the index open and the model loaded, and answers
'gitmem recall' for a thin client over a user-only Unix socket."""
