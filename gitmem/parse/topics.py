"""Which words of a question carry its topic, in every supported language: not the stop words,
question words and words such as "happened" ("what happened last week", "先週何があった",
"hvad skete der i går", "что было на прошлой неделе", "上周发生了什么", "지난주에 무슨 일이
있었어"). A question of such words alone lists what was written in its window
(``recall.timing``), and a result is weak by its share of the topical words
(``recall.ranking.is_weak``): "Hvad laver Mette?" is about Mette, not about "hvad"."""

from __future__ import annotations

from gitmem.parse.stemming import danish_text
from gitmem.parse.textfold import (
    DANISH_STOPWORDS,
    RUSSIAN_STOPWORDS,
    folded,
    query_terms,
    topic_candidates,
    written_in_cjk,
)

# Words that say "something happened / was done / is new" rather than what, and question words
# the stop word lists lack (hvem, почему, how much), as written; Japanese, Chinese and Korean as
# the bigrams they fold to. "recently" and its like are time words without a date.
_GENERIC_TEXT = """
happen happened happens happening going go went on occur occurred anything something everything
events event news new up done do did there recent recently lately latest much many
ske sker skete sket hændte hændt foregik foregar foregaet nyt nyheder noget laver lavede lavet
lave gjorde gjort gor nylig nyligt seneste hvem hvornar hvilken hvilket hvilke hvordan hvorfor
случилось произошло произошли происходило происходит бывало нового новое новенького новости
такого интересного было был была были делал делала делали делает делаю сделал сделала сделали
недавно последнее сколько почему кем каком каким какие какую
出来 来事 起き 起こ きた 最近 近何 发生 發生 生了 生什 做了 干了 幹了 事情 近发 近發
무슨 일이 일어 어났 났어 났나 났니 있었 었어 었나 었니 었지 었던 뭐가 뭐했 했어 했나 했니 했지
했던 최근 요즘 일은 있어
"""


_GENERIC = folded(frozenset(_GENERIC_TEXT.split()))
DANISH_STOP = folded(DANISH_STOPWORDS)  # folded, as query tokens are
_RUSSIAN_STOP_FOLDED = folded(RUSSIAN_STOPWORDS)


def _no_topic(term: list[str], danish: bool) -> bool:
    if len(term) != 1:
        return False
    word = term[0]
    return (word in _GENERIC or word in _RUSSIAN_STOP_FOLDED
            or (danish and word in DANISH_STOP))


def topical_terms(query: str) -> list[list[str]]:
    """The query's terms that can carry a topic: quoted phrases always; of the other words, not
    the stop words (English always, Danish in a Danish question, Russian), question words and
    particles (CJK), nor the words of ``_GENERIC``. [] when none is left (unlike
    ``query_terms``, which then searches the stop words)."""
    danish = danish_text(query)
    return [t for t in topic_candidates(query) if not _no_topic(t, danish)]


def asks_what_happened(query: str) -> bool:
    """A question of no topic that asks what happened or is new ("what happened", "hvad skete
    der", "что нового"; in Japanese, Chinese or Korean any question of question words and
    particles alone, "何があった"). Other words of no topic, a lone "ещё" or "the who", are
    still searched for as written."""
    if topical_terms(query):
        return False
    terms = query_terms(query)
    return bool(terms) and (written_in_cjk(query)
                            or any(len(t) == 1 and t[0] in _GENERIC for t in terms))
