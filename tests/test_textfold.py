from __future__ import annotations

import apsw
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.parse.textfold import (
    build_han_match,
    build_match,
    count_tokens,
    fold,
    han_text,
    query_ideographs,
    query_terms,
)


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


def test_cjk_questions_are_ored_bigrams_without_particles_and_question_words() -> None:
    # Was one phrase of every bigram: it matched only the question itself.
    assert query_terms("田中さんはどこに住んでいますか") == [["田中"], ["中さ"], ["住ん"]]
    assert query_terms("王伟住在哪里？") == [["王伟"], ["伟住"], ["住在"]]
    assert query_terms("李娜的猫叫什么名字") == [["李娜"], ["猫叫"], ["名字"]]
    assert query_terms("민수는 어디에 살아요?") == [["민수"], ["수는"], ["디에"], ["살아"], ["아요"]]
    # Latin and ids beside CJK keep their phrases; only-function questions keep their words.
    assert query_terms("v2.0の設定") == [["v2", "0"], ["設定"]]
    assert query_terms("どこ") == [["どこ"]]


def test_han_characters_in_the_index_and_the_query() -> None:
    assert han_text("李娜养了一只猫，叫小白。小白 Peter ピーター") == " ".join("李娜养了一只猫叫小白小白")
    assert han_text("plain English, Пётр") == ""
    # Chinese question words, particles and pronouns are not searched; in Japanese only
    # question words are left out (京都's 都 is a particle in Chinese).
    assert query_ideographs("谁养猫？") == ["养", "猫"]
    assert query_ideographs("王伟住在哪里？") == ["王", "伟", "住"]
    assert query_ideographs("我们在哪儿吃的水煮鱼") == ["吃", "水", "煮", "鱼"]
    assert query_ideographs("誰が京都の大学で教えていますか") == list("京都大学教")
    assert query_ideographs('猫 "小白"') == ["猫"]


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


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x3000, max_codepoint=0x9fff), max_size=30)
       | st.text(max_size=40))
def test_any_cjk_query_with_characters_is_a_valid_fts_expression(query: str) -> None:
    terms = query_terms(query)
    if not terms:
        return
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, path, stems)")
    conn.execute("CREATE VIRTUAL TABLE h USING fts5(chars)")
    conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (build_match(terms, {}),)).fetchall()
    if (han := build_han_match(query_ideographs(query))) is not None:
        conn.execute("SELECT count(*) FROM h WHERE h MATCH ?", (han,)).fetchall()


def test_operators_are_searched_not_parsed() -> None:
    conn = _fts()
    rows = conn.execute(
        "SELECT count(*) FROM t WHERE t MATCH ?", (build_match(query_terms('NOT "a828e60')),)
    ).fetchall()
    assert rows[0][0] == 1


def test_the_diacritic_table_worked_out_per_character_equals_the_whole_table() -> None:
    """fold's table fills itself as texts ask (textfold._Diacritics): every character maps as
    the table built whole maps it (Latin, Greek and Cyrillic marks, the letters that do not
    decompose, lone combining marks), and any other character is kept."""
    import unicodedata

    from gitmem.parse import textfold

    whole: dict[int, str] = {}
    for code in range(0x80, 0x530):
        base = "".join(c for c in unicodedata.normalize("NFKD", chr(code))
                       if not unicodedata.combining(c))
        if base and base != chr(code):
            whole[code] = base
    whole.update({src: str(dst) for src, dst in textfold._SPECIAL.items()})
    whole.update({code: "" for code in range(0x300, 0x370)})
    text = "".join(map(chr, range(0x20, 0x3100))) + "Nørrebro Ålborg Пётр 滞在"
    assert text.translate(textfold._Diacritics()) == text.translate(whole)
    assert fold("Nørrebro Ålborg Ærø") == "norrebro alborg aero"
