"""The statement matching rule (gitmem.parse.similarity): real paraphrases and knowledge updates
match; unrelated statements about the same entity do not (a wrong merge is worse than a miss)."""

from __future__ import annotations

import pytest

from gitmem.parse.similarity import same_claim, statement_similarity, statement_terms

# (entities a, text a, entities b, text b): the same claim, said again or updated.
SAME = [
    (["Peter"], "Prefers concise WhatsApp replies",
     ["Peter"], "Likes short replies on WhatsApp"),
    (["Peter"], "The gateway host for warelay is the old NUC",
     ["Peter", "The-Castle"], "Moved the gateway host to The Castle"),
    (["Peter"], "Prefers concise WhatsApp replies (under 1500 chars); long content goes to a file.",
     ["Peter"], "Wants WhatsApp replies kept concise"),
    (["warelay"], "Deploys run from the main branch",
     ["warelay"], "Deploys now run from the release branch"),
    (["Peter"], "Peter lives in Copenhagen",
     ["Peter"], "Peter now lives in Vienna"),
    (["Peter"], "Favourite editor is Vim",
     ["Peter"], "Switched his favourite editor to Helix"),
    (["warelay"], "The database runs on Postgres 14",
     ["warelay"], "Upgraded the database to Postgres 16"),
    (["Peter"], "Foretrækker korte svar på WhatsApp",
     ["Peter"], "Kan godt lide kortfattede svar på WhatsApp"),
    (["Пётр"], "Предпочитает короткие ответы",
     ["Пётр"], "Любит краткие ответы"),
    (["Пётр"], "Живёт в Москве",
     ["Пётр"], "Теперь живёт в Берлине"),
    (["ピーター"], "WhatsAppでは簡潔な返信を好む",
     ["ピーター"], "WhatsAppの返信は短いのが好き"),
    (["ピーター"], "ゲートウェイのホストは古いNUC",
     ["ピーター", "キャッスル"], "ゲートウェイのホストをキャッスルに移した"),
    (["Peter"], "Peter prefers dark mode in every editor",
     ["Peter"], "Prefers dark mode in editors"),
]

# Unrelated statements about the same entity (or a near miss): never merged.
DIFFERENT = [
    (["Peter"], "Peter prefers concise replies",
     ["Peter"], "Peter is in Marrakech for Andy's birthday"),
    (["Peter"], "Prefers coffee in the morning",
     ["Peter"], "Prefers tea in the evening"),
    (["Peter"], "Prefers concise WhatsApp replies",
     ["Peter"], "Prefers long voice calls on WhatsApp"),
    (["warelay"], "The gateway host is the old NUC",
     ["warelay"], "The gateway crashed after the Baileys update"),
    (["Peter"], "Lives in Copenhagen",
     ["Peter"], "Works in Copenhagen"),
    (["Peter"], "Peter's flight lands at 14:00",
     ["Peter"], "Peter's meeting starts at 14:00"),
    (["Andy"], "Andy's birthday is on March 3",
     ["Andy"], "Andy's birthday party was in Marrakech"),
    (["Peter"], "Likes short replies",
     ["Peter"], "Does not like short replies"),
    (["Peter"], "Prefers concise replies",
     ["Peter"], "Prefers verbose replies"),
    (["Пётр"], "Предпочитает короткие ответы",
     ["Пётр"], "Живёт в Москве"),
    (["ピーター"], "アンディの誕生日のため、マラケシュに滞在",
     ["ピーター"], "WhatsAppでは簡潔な返信を好む"),
    (["Peter"], "Prefers concise WhatsApp replies",
     ["Andy"], "Prefers concise WhatsApp replies"),
    (["Peter", "Andy"], "Went to dinner at Noma",
     ["Peter", "Mia"], "Went to dinner at Noma"),
    (["warelay"], "Fixed the Baileys WS crash by wrapping the handler in try/catch",
     ["warelay"], "The Baileys WS connection drops every night"),
    (["Peter"], "Peter uses Vim for Python",
     ["Peter"], "Peter uses Slack for work chat"),
]


@pytest.mark.parametrize(("ea", "a", "eb", "b"), SAME)
def test_paraphrases_and_updates_are_the_same_claim(
    ea: list[str], a: str, eb: list[str], b: str
) -> None:
    assert same_claim(a, ea, b, eb), (a, b, statement_similarity(a, b))
    assert same_claim(b, eb, a, ea)  # symmetric


@pytest.mark.parametrize(("ea", "a", "eb", "b"), DIFFERENT)
def test_unrelated_statements_are_not_merged(
    ea: list[str], a: str, eb: list[str], b: str
) -> None:
    assert not same_claim(a, ea, b, eb), (a, b, statement_similarity(a, b))
    assert not same_claim(b, eb, a, ea)


def test_entity_spellings_agree() -> None:
    assert same_claim("Prefers short replies", ["The-Castle"], "Likes brief replies", ["the_castle"])
    assert not same_claim("Prefers short replies", [], "Likes brief replies", [])


def test_similarity_is_a_fraction() -> None:
    assert statement_similarity("Prefers concise replies", "Prefers concise replies") == 1.0
    assert statement_similarity("", "") == 0.0
    assert statement_similarity("gateway host", "birthday party") == 0.0
    middle = statement_similarity("The gateway host is the NUC", "Moved the gateway host to Castle")
    assert 0.0 < middle < 1.0


def test_terms_fold_stem_and_drop_stop_words() -> None:
    terms = statement_terms("The Replies were Concise in Nørrebro")
    assert "repli" in terms and "short" in terms  # stemmed; concise -> short
    assert "the" not in terms and "were" not in terms
    assert any(t.startswith("norrebro") for t in terms)  # folded diacritics
    assert "滞在" in statement_terms("マラケシュに滞在")  # CJK bigram
    assert "repli" in statement_terms("Короткие ответы")  # Russian stem -> synonym


def test_danish_stop_words_only_in_danish() -> None:
    assert "man" in statement_terms("The man at the front desk")  # English content word
    assert "man" not in statement_terms("Man kan godt lide korte svar")  # Danish "one"
