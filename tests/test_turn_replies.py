"""A conversation's turn is read with the turns that reply to it (``recall.ranking.lift_replies``):
a question names what one turn says, and the answer is the next turn or the one after, which
share no word with it. A real repository, index and model (multilingual-e5-small, llama.cpp),
recall through the library. (The answer two turns on is read once the turn between is: these
questions need the rule, not each of its shares; ``tests/test_ranking_units.py`` pins those.)"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from gitmem.config import Config
from gitmem.index.run import index_and_embed
from gitmem.index.session import Session
from gitmem.parse.statements import turn_speaker
from gitmem.recall.answer import RecallRequest, answer
from gitmem.recall.ranking import Ranking
from gitmem.recall.search import Result
from gitmem.workspace import Workspace, open_workspace
from testing.repo import commit_all, make_repo, write

NOW = datetime(2022, 12, 1, tzinfo=UTC)
# What two friends talk about in every session: 60 sessions of it outrank a reply that shares no
# word or meaning with a question, and a reply outside the merge window is a result of its own
# or none
TALK = [
    ("Omar", "How was the weekend? We hiked the ridge trail with the kids."),
    ("Lena", "Lovely, we painted the fence and had friends over for dinner."),
    ("Omar", "The new job keeps me busy, lots of meetings about the budget."),
    ("Lena", "My sister visits next week, she is bringing her dog."),
    ("Omar", "I started learning the guitar, slow progress but fun."),
    ("Lena", "We finally fixed the leaking roof before the rain came."),
    ("Omar", "The football season starts soon, I got tickets for the derby."),
    ("Lena", "I read a great novel about a lighthouse keeper."),
]
BAKERY = [
    ("Omar", "Any news since we last talked?"),
    ("Lena", "I finally signed the lease for my own bakery on Elm Street, it opens in March!"),
    ("Omar", "You'll be brilliant, I'm so proud of you."),  # the next turn
    ("Lena", "That means a lot, I have been dreaming about it for years."),
]
MARATHON = [
    ("Lena", "I signed up for my first marathon, Berlin in September!"),
    ("Omar", "That's huge, wow."),
    ("Lena", "Every Sunday until then is a long slow run by the river."),  # two turns on
]
QUESTIONS = [("What did Omar say when Lena told him about her bakery?", "brilliant"),
             ("How does Lena train for the Berlin marathon?", "long slow run")]


def _session(day: date, stamp: str, turns: list[tuple[str, str]]) -> str:
    return "\n".join([f"# Session on {day}", "",
                      *(f"- [{stamp}] {who}: {said}" for who, said in turns)]) + "\n"


@pytest.fixture(scope="module")
def chats(tmp_path_factory: pytest.TempPathFactory, e5: Path) -> tuple[Workspace, Config]:
    repo = make_repo(tmp_path_factory.mktemp("turns"))
    for n in range(60):
        day = date(2022, 1, 3) + timedelta(days=4 * n)
        write(repo, f"memory/{day}.md", _session(day, "6:00 pm", TALK[n % 8:] + TALK[:n % 8]))
    write(repo, "memory/2022-11-05.md", _session(date(2022, 11, 5), "5:20 pm", BAKERY + TALK[:4]))
    write(repo, "memory/2022-11-12.md", _session(date(2022, 11, 12), "9:00 am",
                                                 MARATHON + TALK[4:]))
    commit_all(repo, "chats")
    ws, cfg = open_workspace(repo)
    cfg = replace(cfg, embed_provider="local", embed_model=str(e5), embed_threads=1)
    assert not index_and_embed(ws, cfg, force=True).embed_error
    return ws, cfg


def _first(chats: tuple[Workspace, Config], query: str, ranking: Ranking) -> Result:
    ws, cfg = chats
    response = answer(Session(ws, cfg), RecallRequest(query=query, k=5, mode="hybrid"),
                      now=NOW, ranking=ranking)
    assert response.mode == "hybrid", response.warnings
    return response.results[0]


@pytest.mark.parametrize(("query", "said"), QUESTIONS)
def test_the_turns_after_a_turn_are_read_with_it(chats: tuple[Workspace, Config], query: str,
                                                   said: str) -> None:
    first = _first(chats, query, Ranking())
    assert said in first.content, first


@pytest.mark.parametrize(("query", "said"), QUESTIONS)
def test_without_the_rule_they_are_not(chats: tuple[Workspace, Config], query: str,
                                       said: str) -> None:
    """The questions above can fail: the turn is first, without its reply."""
    first = _first(chats, query, Ranking(turn_shares=(0.0, 0.0)))
    assert first.path in ("memory/2022-11-05.md", "memory/2022-11-12.md"), first
    assert said not in first.content, first


@pytest.mark.parametrize(("line", "who"), [
    ("- [1:14 pm] Caroline: Hi", "Caroline"),
    ("- user: how do I bake bread?", "user"),
    ("* assistant: Here is a recipe", "assistant"),
    ("Maria: off to church", "Maria"),
    ("- Guest wifi: hunter2", None),
    ("- Meeting with Tom: moved to Friday", None),
    ("- W @Caroline: Lives in Boston.", None),
    ("- O(c=0.8): Melanie likes the lake.", None),
    ("- Bought milk.", None),
])
def test_a_chat_turn_names_its_speaker(line: str, who: str | None) -> None:
    assert turn_speaker(line) == who
