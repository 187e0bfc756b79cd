"""The opinion-matching table (gitmem/parse/judgements.py, issue 39): one belief, one opinion.

Cases written for these tests, not taken from bench/opinions_data.py: the same judgement in other
words, its opposite, a worded end, and a different judgement about the same subject, in
English, Danish, Russian and Japanese.
"""

from __future__ import annotations

import pytest

from gitmem.parse.judgements import MODEL_SAME, judgement, masked, relate


def rel(opinion: str, entry: str, *names: str) -> str | None:
    found = relate(opinion, names, entry, names)
    return None if found is None else found.relation


@pytest.mark.parametrize(("opinion", "entry", "name"), [
    ("Caddy is reliable as our reverse proxy.", "Caddy still works fine, no outages.", "Caddy"),
    ("Caddy is reliable as our reverse proxy.", "Caddy has been rock solid this month.", "Caddy"),
    ("The Hilton breakfast is good.", "The Hilton breakfast is excellent.", "Hilton"),
    ("Maja prefers short standups.", "Maja likes brief standups.", "Maja"),
    ("Caddy er pålidelig.", "Caddy kører stadig fint.", "Caddy"),
    ("Caddy работает надёжно.", "Caddy по-прежнему работает без проблем.", "Caddy"),
    ("Caddyは安定している。", "Caddyは相変わらず安定。", "Caddy"),
])
def test_the_same_judgement_in_other_words_is_evidence_for(opinion: str, entry: str,
                                                            name: str) -> None:
    assert rel(opinion, entry, name) == "for"


@pytest.mark.parametrize(("opinion", "entry", "name"), [
    ("The Hilton breakfast is good.", "The Hilton breakfast is not good.", "Hilton"),
    ("Caddy is reliable.", "Caddy is flaky since the upgrade.", "Caddy"),
    ("Vite builds are fast.", "Vite builds are slow now.", "Vite"),
    ("Vite-builds er hurtige.", "Vite-builds er ikke hurtige.", "Vite"),
    ("Сборки Vite быстрые.", "Сборки Vite медленные.", "Vite"),
    ("Viteのビルドは速い。", "Viteのビルドは速くない。", "Vite"),
    ("Zed is worth the money.", "Zed is no longer worth the money.", "Zed"),
])
def test_the_opposite_is_evidence_against(opinion: str, entry: str, name: str) -> None:
    assert rel(opinion, entry, name) == "against"


@pytest.mark.parametrize(("opinion", "entry", "name"), [
    ("Raycast saves me time.", "Stopped using Raycast.", "Raycast"),
    ("Raycast saves me time.", "Uninstalled Raycast.", "Raycast"),
    ("Raycast sparer tid.", "Holdt op med at bruge Raycast.", "Raycast"),
    ("Raycast экономит время.", "Перестал пользоваться Raycast.", "Raycast"),
    ("Raycastは便利。", "Raycastを使うのをやめた。", "Raycast"),
])
def test_a_worded_end_is_evidence_against(opinion: str, entry: str, name: str) -> None:
    assert rel(opinion, entry, name) == "against"


@pytest.mark.parametrize(("opinion", "entry", "name"), [
    ("Caddy is reliable.", "Caddy config is confusing.", "Caddy"),
    ("Maja prefers short standups.", "Maja prefers tea over coffee.", "Maja"),
    ("Maja is a careful reviewer.", "Maja is always late to meetings.", "Maja"),
    ("The Hilton breakfast is good.", "The Hilton rooms are expensive.", "Hilton"),
    ("Caddy er pålidelig.", "Caddy-konfigurationen er besværlig.", "Caddy"),
    ("Caddy работает надёжно.", "Caddy дорогой в поддержке.", "Caddy"),
    ("Caddyは安定している。", "Caddyの設定は難しい。", "Caddy"),
])
def test_a_different_judgement_is_not_evidence(opinion: str, entry: str, name: str) -> None:
    assert rel(opinion, entry, name) in (None, "unsure")


def test_negation_inside_a_cue_is_the_cue() -> None:
    """'no outages', '問題なく', '不安定': a cue that holds a negation word is read whole."""
    assert judgement("Caddy: no outages all week.", ("Caddy",)).aspects == (("reliability", True),)
    assert judgement("Caddyは問題なく動く。", ("Caddy",)).aspects == (("reliability", True),)
    assert judgement("Caddyは不安定。", ("Caddy",)).aspects == (("reliability", False),)
    assert judgement("Caddy is not reliable.", ("Caddy",)).aspects == (("reliability", False),)


def test_a_name_is_no_content_word_and_is_masked_for_a_model() -> None:
    """Two judgements of one subject are not alike for its name alone."""
    assert judgement("Mette-builds er langsomme.", ("Mette",)).rest == frozenset({"build"})
    assert masked("@Nadia thinks Nadia's team is fast", ("Nadia",)) == "X thinks X team is fast"


def test_alike_in_part_is_unsure_never_a_merge() -> None:
    """The same specific aspect about other things: a new opinion, named as possibly the same."""
    assert rel("Figma is fast for wireframes.", "Figma is slow on large boards.", "Figma") \
        == "unsure"


def test_a_model_decides_only_what_the_words_leave_open() -> None:
    """A high cosine merges two statements no row decides; it never overrides opposite
    aspects, and a low one changes nothing."""
    opinion, entry = "Anna is a fine mentor.", "Anna is a wonderful coach for new hires."
    assert relate(opinion, ("Anna",), entry, ("Anna",)) is None
    found = relate(opinion, ("Anna",), entry, ("Anna",), lambda a, b: MODEL_SAME)
    assert found is not None and found.relation == "for"
    assert relate(opinion, ("Anna",), entry, ("Anna",), lambda a, b: 0.5) is None
    opposite = relate("Caddy is reliable.", ("Caddy",), "Caddy is flaky.", ("Caddy",),
                      lambda a, b: 0.99)
    assert opposite is not None and opposite.relation == "against"


def test_a_negation_turns_the_judgement_it_precedes_not_an_aside() -> None:
    """'(no restarts)' is an aside; 'reliable but not cheap' judges cost, not reliability;
    Japanese negates the judgement before it."""
    assert rel("Caddy is a reliable proxy.", "Caddy is a reliable proxy (no restarts).",
               "Caddy") == "for"
    assert judgement("Caddy is reliable but not cheap.", ()).aspects == (
        ("reliability", True), ("cost", False))
    assert judgement("Caddyのビルドは速くない。", ()).aspects == (("speed", False),)
