from __future__ import annotations

import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.parse.textfold import build_match, count_tokens, fold, query_terms


def test_fold_case_and_diacritics() -> None:
    assert fold("Kødboller på Nørrebro") == "kodboller pa norrebro"
    assert fold("Пётр") == fold("петр") == "петр"
    assert fold("Ærø Straße") == "aero strasse"
    assert fold("memorySearch.query.hybrid") == "memorysearch.query.hybrid"


def test_fold_cjk_bigrams_keep_kana_marks() -> None:
    assert fold("マラケシュ").split() == ["マラ", "ラケ", "ケシ", "シュ"]
    assert fold("誕生日").split() == ["誕生", "生日"]
    # Dakuten are letters in Japanese, not diacritics: ガ must not become カ.
    assert "ガ" in fold("ガス")


def test_query_terms_phrases_and_stopwords() -> None:
    assert query_terms("what did we decide about the gateway host?") == [
        ["decide"],
        ["gateway"],
        ["host"],
    ]
    assert query_terms('"ECONNRESET: socket hang up"') == [["econnreset", "socket", "hang", "up"]]
    assert query_terms("memorySearch.query.hybrid") == [["memorysearch", "query", "hybrid"]]
    assert query_terms("the") == [["the"]]  # only stop words: keep them rather than nothing
    assert query_terms("*** ^^^") == []


def test_count_tokens_counts_cjk_per_character() -> None:
    assert count_tokens("誕生日") == 3
    assert count_tokens("abcdefgh") == 2


def _fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
    )
    conn.execute("INSERT INTO t VALUES (?)", (fold('AND OR NOT near quotes " and ids a828e60'),))
    return conn


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_any_query_is_a_valid_fts_expression(query: str) -> None:
    terms = query_terms(query)
    if not terms:
        return
    conn = _fts()
    conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (build_match(terms),)).fetchall()


def test_operators_are_searched_not_parsed() -> None:
    conn = _fts()
    rows = conn.execute(
        "SELECT count(*) FROM t WHERE t MATCH ?", (build_match(query_terms('NOT "a828e60')),)
    ).fetchall()
    assert rows[0][0] == 1
