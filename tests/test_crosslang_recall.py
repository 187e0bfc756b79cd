"""Cross-language recall with the default model (multilingual-e5-small, real llama.cpp): the
cross-language notes of ``bench/bench_crosslang.py`` (four languages, plain note lines and
Retain entries, distractors), asked in another language than each answer's."""

from __future__ import annotations

from pathlib import Path

from bench.bench_crosslang import build, gitmem_modes

# Answers hybrid recall lost when the neighbours of a good Retain entry, merged into its range,
# each took its score and a place of their own (the facts of one Retain section filled the top 5).
LOST_TO_MERGED_NEIGHBOURS = ("E3", "E5", "D12", "R5")


def test_merged_neighbour_entries_do_not_push_answers_out_of_the_top_5(
        tmp_path: Path, e5: Path) -> None:
    repo, _ = build(tmp_path)
    found, _ = gitmem_modes(repo, e5, 5, 1, ("hybrid",))
    assert {t: found["hybrid"][t] for t in LOST_TO_MERGED_NEIGHBOURS} == dict.fromkeys(
        LOST_TO_MERGED_NEIGHBOURS, True)
