"""Knowledge updates on ordinary wording (issue 17): the one rule of ``parse.updates`` on
statements people write in English, Japanese, Russian and Danish, statements that both stay
true left alone, the ordering it owns; and declared replacements end to end on real git
repositories: a '- replaces:' item, ``gitmem retain --replaces`` (and its confirming second
call), ``superseded_basis`` in recall, entity and review, refs that name nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.parse.statements import Statement
from gitmem.parse.updates import judge
from testing.cli import gitmem, gitmem_json, recall_json, status_json
from testing.index import dump
from testing.repo import commit_all, daily_notes_repo, git, make_repo, write
from testing.rewrites import rebuilt_dump


def said(text: str, day: str, *subjects: str, line: int = 4, path: str = "",
         kind: str = "world") -> Statement:
    return Statement(kind=kind, text=text, path=path or f"memory/{day}.md", line=line,  # type: ignore[arg-type]
                     end_line=line, stated=day, recorded_at=f"{day}T20:00:00+00:00",
                     subjects=subjects)


def replaces(newer: Statement, older: Statement) -> str | None:
    """The basis of a hard edge, or None (a hint is no replacement)."""
    edge = judge(newer, older)
    return edge.basis if edge is not None and edge.strength == "hard" else None


UPDATES = [
    ("Alice lives in Berlin, in Kreuzberg.", "Alice moved to Lisbon; she lives in Alfama now.",
     "Alice"),
    ("Bob works at Initech as a backend developer.",
     "Started his new job at Globex last Monday.", "Bob"),
    ("Standup is at 9:30 every day.", "We moved standup to 10 so Toronto can join.", "team"),
    ("The build server is bx-01.", "bx-02 replaced bx-01 as build server.", "ci"),
    ("田中さんは大阪に住んでいる。", "田中さんは東京の品川に引っ越した。", "田中"),
    ("請求の担当は佐藤さん。", "来月から請求は鈴木さんが担当になりました。", "請求"),
    ("Иван живёт в Самаре.", "Иван переехал в Екатеринбург.", "Иван"),
    ("Mette bor i Aarhus.", "Mette er flyttet til København.", "Mette"),
    ("Lars arbejder hos Vestas.", "Lars har fået nyt job hos Ørsted.", "Lars"),
    ("Анна учится в МГУ на химфаке.", "Анна перевелась в Бауманку, на второй курс.", "Анна"),
    ("本番環境はさくらのVPSで動いている。", "先週末に本番をAWSの東京リージョンへ移行した。",
     "本番サーバー"),
    ("高橋さんの携帯は090-1234-5678。", "高橋さんは機種変更で番号も変わった。新しい番号は080-8765-4321。",
     "高橋"),
    ("Kim is on parental leave until August.", "Kim's back! Part-time for now, Mondays.", "Kim"),
    ("Mum was admitted to hospital with pneumonia.", "Mum was discharged this morning.",
     "Mum"),
    ("Morfar er indlagt på Herlev.", "Morfar er blevet udskrevet.", "Morfar"),
    ("Nadia is on the payments team and leads its on-call rota.",
     "Nadia handed payments over to Ravi and joined search in October.", "Nadia"),
]
CONTROLS = [
    ("Alice has a dog named Rex.", "Alice speaks Portuguese.", "Alice"),
    ("Alice's parents live in Hamburg.", "Alice moved to Lisbon; she lives in Alfama now.",
     "Alice"),
    ("Anne spiller håndbold.", "Anne spiller klaver.", "Anne"),
    ("Søren bor i Valby.", "Søren bor sammen med sin kæreste.", "Søren"),
    ("Nightly builds start at 02:00 UTC.", "bx-02 replaced bx-01 as build server.", "ci"),
    ("Lena visited Porto in May.", "Lena visited Faro last week.", "Lena"),
    ("Kim is on parental leave until August.", "Kim's back hurts after the move.", "Kim"),
    ("田中さんは猫を飼っている。", "田中さんはピアノを弾ける。", "田中"),
    # a backup is a topic of its own, not what the server runs on
    ("本番のバックアップは毎晩三時に取る。", "先週末に本番をAWSの東京リージョンへ移行した。",
     "本番サーバー"),
]


@pytest.mark.parametrize(("older", "newer", "subject"), UPDATES)
def test_ordinary_wording_replaces_in_every_language(older: str, newer: str,
                                                     subject: str) -> None:
    old, new = said(older, "2026-10-20", subject), said(newer, "2026-11-18", subject)
    assert replaces(new, old) == "rule"
    assert replaces(old, new) is None  # never backwards in time


@pytest.mark.parametrize(("older", "newer", "subject"), CONTROLS)
def test_statements_that_both_stay_true_are_left_alone(older: str, newer: str,
                                                       subject: str) -> None:
    assert replaces(said(newer, "2026-11-18", subject), said(older, "2026-10-20", subject)) is None


def test_a_move_of_a_topic_is_a_hint_not_a_mark() -> None:
    """No shared subject, a worded change of a shared topic (the README's gateway host): the
    newer may have changed the older one, so it is a hint, never a demotion."""
    nuc = said("The gateway host is the old NUC under the desk.", "2026-10-20", "warelay")
    castle = said("Moved the gateway host to The Castle.", "2026-11-18", "Peter", "The-Castle")
    edge = judge(castle, nuc)
    assert edge is not None and edge.strength == "hint"
    # naming the old value makes it one: "from the NUC to The Castle"
    named = said("The gateway host moved from the NUC to The Castle.", "2026-11-18", "Peter")
    assert replaces(named, nuc) == "rule"


def test_a_time_on_one_side_only_is_another_attribute() -> None:
    """The minutes going out within a week are not the meeting's day; a new day of the same
    meeting is."""
    minutes = said("The minutes of the board meeting go out within a week.", "2026-10-20",
                   "board")
    meets = said("The board now meets on the last Thursday of the month.", "2026-11-18",
                 "board")
    first = said("The board meets on the first Monday of the month.", "2026-10-20", "board")
    assert replaces(meets, minutes) is None
    assert replaces(meets, first) == "rule"


def test_the_rule_owns_the_order_of_statements() -> None:
    berlin = "Alice lives in Berlin."
    lisbon = "Alice moved to Lisbon."
    # the same day and file: the line further down is the later statement
    assert replaces(said(lisbon, "2026-11-18", "Alice", line=9),
                    said(berlin, "2026-11-18", "Alice", line=4)) == "rule"
    assert replaces(said(lisbon, "2026-11-18", "Alice", line=4),
                    said(berlin, "2026-11-18", "Alice", line=9)) is None
    # two files of one day and one commit have no order between them
    assert replaces(said(lisbon, "2026-11-18", "Alice", path="MEMORY.md"),
                    said(berlin, "2026-11-18", "Alice", path="USER.md")) is None
    # the same words again confirm, they do not replace
    assert replaces(said(berlin, "2026-11-18", "Alice"), said(berlin, "2026-10-20", "Alice")) is None


def test_a_declared_replacement_holds_whatever_the_rule_says() -> None:
    old = Statement("world", "Alice has a dog.", "memory/a.md", 4, 5, "2026-10-20",
                    subjects=("Alice",), fact_id="f-000000000001")
    new = Statement("world", "Alice speaks Portuguese.", "memory/b.md", 4, 4, "2026-11-18",
                    subjects=("Alice",), declared=frozenset({"memory/a.md#L5"}))
    assert replaces(new, old) == "declared"
    by_id = Statement("experience", "Rex went to the vet.", "memory/b.md", 4, 4, "2026-09-01",
                      subjects=("Alice",), declared=frozenset({"f-000000000001"}))
    assert replaces(by_id, old) == "declared"  # any kind, any order


def test_keeps_removes_the_mark_the_rule_would_make() -> None:
    """``- keeps: <ref>`` (docs/knowledge-updates.md): a person or an agent corrects a wrong mark."""
    old = Statement("world", "Alice lives in Berlin.", "memory/a.md", 4, 4, "2026-10-20",
                    subjects=("Alice",), fact_id="f-000000000002")
    new = Statement("world", "Alice moved to Lisbon.", "memory/b.md", 4, 4, "2026-11-18",
                    subjects=("Alice",))
    assert replaces(new, old) == "rule"
    kept = Statement("world", "Alice moved to Lisbon.", "memory/b.md", 4, 4, "2026-11-18",
                     subjects=("Alice",), kept=frozenset({"f-000000000002"}))
    assert judge(kept, old) is None


def _daily(day: str, *entries: str, prose: str = "") -> str:
    body = "\n".join(f"- {e}" for e in entries)
    return f"# {day}\n\n{prose}## Retain\n{body}\n"


@pytest.fixture
def alice(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, "memory/2026-10-20.md", _daily(
        "2026-10-20", "W @Alice: Alice has a dog named Rex.", "W @Alice: Alice likes tea."))
    commit_all(repo, "day 1", "2026-10-20T20:00:00+00:00")
    write(repo, "memory/2026-11-03.md", _daily("2026-11-03", "W @Alice: Alice speaks Danish."))
    commit_all(repo, "day 2", "2026-11-03T20:00:00+00:00")
    return repo


def test_retain_replaces_declares_and_recall_entity_review_say_declared(alice: Path) -> None:
    base = git(alice, "rev-parse", "HEAD").strip()
    # the rule sees two true statements; the writer knows better
    done = gitmem_json("-C", str(alice), "retain", "--json", "--replaces",
                       "memory/2026-10-20.md#L4", "W @Alice: Rex now lives with her brother.")
    old_id = recall_json(alice, "dog Rex")["results"]
    rex = next(r for r in old_id if r["source"] == "memory/2026-10-20.md#L4")
    assert done["replaces"] == [rex["fact_id"]]
    assert rex["superseded_by"] == done["source"] and rex["superseded_basis"] == "declared"
    note = (alice / done["path"]).read_text(encoding="utf-8")
    assert "  - replaces: memory/2026-10-20.md#L4\n" in note
    # entity: the declared one is history of the new fact, with its basis
    view = gitmem_json("-C", str(alice), "entity", "Alice", "--json")
    world = view["facts"]["world"]
    current = next(f for f in world if f["source"] == done["source"])
    assert [(h["source"], h["basis"]) for h in current["history"]] == [
        ("memory/2026-10-20.md#L4", "declared")]
    # review of the range shows it as declared
    code, out, err = gitmem("-C", str(alice), "review", f"{base}..HEAD", "--format", "json")
    assert code == 0, err
    pairs = json.loads(out)["superseded"]
    assert [(p["old"]["source"].split("@")[0], p["basis"]) for p in pairs] == [
        ("memory/2026-10-20.md#L4", "declared")]
    # text output says "replaced by <citation> (<date>; declared)"
    code, out, _ = gitmem("-C", str(alice), "recall", "dog Rex")
    assert f"replaced by {done['source']} ({done['path'][7:17]}; declared)" in out


def test_retain_answers_with_what_it_may_replace_and_a_second_call_confirms(
        alice: Path) -> None:
    first = gitmem_json("-C", str(alice), "retain", "--json", "W @Alice: Alice drinks coffee now.")
    candidates = {c["source"]: c for c in first["may_replace"]}
    assert {"memory/2026-10-20.md#L5", "memory/2026-10-20.md#L4",
            "memory/2026-11-03.md#L4"} <= set(candidates)
    tea = candidates["memory/2026-10-20.md#L5"]
    assert tea["text"] == "Alice likes tea." and tea["fact_id"].startswith("f-")
    assert first["replaces"] == []
    # the confirming call: the same entry with --replaces adds the item under it, once
    again = gitmem_json("-C", str(alice), "retain", "--json", "--replaces", tea["fact_id"],
                        "W @Alice: Alice drinks coffee now.")
    assert again["start_line"] == first["start_line"] and again["replaces"] == [tea["fact_id"]]
    note = (alice / first["path"]).read_text(encoding="utf-8")
    assert note.count("Alice drinks coffee now.") == 1
    assert f"- W @Alice: Alice drinks coffee now.\n  - replaces: {tea['fact_id']}\n" in note
    assert git(alice, "status", "--porcelain").strip() == ""
    shown = {r["source"]: r for r in recall_json(alice, "tea coffee")["results"]}
    assert shown["memory/2026-10-20.md#L5"]["superseded_basis"] == "declared"


def test_a_ref_that_names_nothing_is_refused_before_anything_is_written(alice: Path) -> None:
    head = git(alice, "rev-parse", "HEAD").strip()
    code, _, err = gitmem("-C", str(alice), "retain", "--replaces", "memory/2026-10-20.md#L40",
                          "W @Alice: Alice moved to Porto.")
    assert code == 2 and "names no current fact" in err
    code, _, err = gitmem("-C", str(alice), "retain", "--replaces", "not-a-ref",
                          "W @Alice: Alice moved to Porto.")
    assert code == 2
    assert git(alice, "rev-parse", "HEAD").strip() == head
    assert git(alice, "status", "--porcelain").strip() == ""


def test_replaces_items_in_notes_warn_with_their_line_and_the_entry_stays_a_fact(
        alice: Path) -> None:
    write(alice, "memory/2026-11-10.md", "# 2026-11-10\n\n## Retain\n"
          "- W @Alice: Alice moved to Porto.\n  - replaces: f-0123456789ab\n"
          "- W @Alice: Alice got a cat.\n  - replaces: someday\n")
    commit_all(alice, "refs", "2026-11-10T20:00:00+00:00")
    gitmem_json("-C", str(alice), "index", "--json")
    warnings = {(w["path"], w["line"], w["code"]) for w in status_json(alice)["warnings"]}
    assert ("memory/2026-11-10.md", 4, "replaces-unknown") in warnings
    assert ("memory/2026-11-10.md", 7, "replaces-ref") in warnings
    view = gitmem_json("-C", str(alice), "entity", "Alice", "--json")
    facts = {f["content"] for f in view["facts"]["world"]}
    assert {"Alice moved to Porto.", "Alice got a cat."} <= facts  # no '- replaces:' in text


def test_a_citation_is_read_at_the_commit_that_first_recorded_the_entry(
        alice: Path, tmp_path: Path) -> None:
    write(alice, "memory/2026-11-10.md", "# 2026-11-10\n\n## Retain\n"
          "- W @Alice: Rex stays with her brother now.\n  - replaces: memory/2026-10-20.md#L4\n")
    commit_all(alice, "declared", "2026-11-10T20:00:00+00:00")
    # later, lines above the cited one are inserted: the citation now points elsewhere
    write(alice, "memory/2026-10-20.md", _daily(
        "2026-10-20", "W @Alice: Alice was born in Graz.", "W @Alice: Alice has a dog named Rex.",
        "W @Alice: Alice likes tea."))
    commit_all(alice, "insert above", "2026-11-12T20:00:00+00:00")
    shown = {r["content"]: r for r in recall_json(alice, "Rex dog Graz")["results"]}
    assert shown["Alice has a dog named Rex."]["superseded_basis"] == "declared"
    assert shown["Alice was born in Graz."]["superseded_by"] is None
    assert dump(alice) == rebuilt_dump(alice, tmp_path / "rebuilt")


def test_as_of_before_the_newer_statement_it_does_not_apply_yet(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory/2026-10-20.md", _daily("2026-10-20", "W @Alice: Alice lives in Berlin."))
    commit_all(repo, "berlin", "2026-10-20T20:00:00+00:00")
    write(repo, "memory/2026-11-18.md", _daily("2026-11-18",
                                               "W @Alice: Alice moved to Lisbon last month."))
    commit_all(repo, "lisbon", "2026-11-18T20:00:00+00:00")
    now = {r["source"]: r for r in recall_json(repo, "where does Alice live")["results"]}
    assert now["memory/2026-10-20.md#L4"]["superseded_by"] == "memory/2026-11-18.md#L4"
    assert next(iter(now)) == "memory/2026-11-18.md#L4"
    then = recall_json(repo, "where does Alice live", "--as-of", "2026-11-01")["results"]
    assert [(r["source"], r["superseded_by"]) for r in then] == [
        ("memory/2026-10-20.md#L4", None)]


def test_the_readme_example_works_on_the_sample_workspace(fixture_repo: Path) -> None:
    """The README's example: the gateway host's move to The Castle may have changed which
    machine it is, so the NUC fact carries a hint (``newer``); it is not hidden by a mark, since
    a move of a host does not say which machine hosts it (precision first, issue 38)."""
    shown = {r["source"]: r for r in recall_json(fixture_repo, "gateway host NUC")["results"]}
    nuc = shown["memory/2025-11-10.md#L14"]
    assert nuc["superseded_by"] is None
    assert nuc["newer"] is not None and nuc["newer"]["date"] >= "2025-11-27"


def test_a_later_fact_that_names_the_subject_in_its_text_replaces(tmp_path: Path) -> None:
    """The newer fact is about other subjects and names the older one's subject inline
    (@homelab): it is still found as a candidate, ranked first and marks the older replaced."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2026-10-20.md", _daily(
        "2026-10-20", "W @homelab: Home Assistant runs on the Raspberry Pi in the cupboard."))
    commit_all(repo, "pi", "2026-10-20T20:00:00+00:00")
    write(repo, "memory/2026-11-02.md", _daily(
        "2026-11-02", "W @homelab: The homelab UPS gives about 20 minutes on battery."))
    commit_all(repo, "ups", "2026-11-02T20:00:00+00:00")
    write(repo, "memory/2026-11-18.md", _daily(
        "2026-11-18", "W @Peter @NUC: Moved Home Assistant off the @homelab Pi onto the NUC."))
    commit_all(repo, "nuc", "2026-11-18T20:00:00+00:00")
    shown = {r["source"]: r for r in
             recall_json(repo, "what machine does Home Assistant run on")["results"]}
    assert shown["memory/2026-10-20.md#L4"]["superseded_by"] == "memory/2026-11-18.md#L4"
    assert next(iter(shown)) == "memory/2026-11-18.md#L4"
    assert shown.get("memory/2026-11-02.md#L4", {}).get("superseded_by") is None


def test_a_statement_with_a_colon_is_not_a_chat_turn(tmp_path: Path) -> None:
    """Plain note lines are compared unless they are chat turns ("Caroline: ..."); a statement
    that starts "No more Oak room: ..." is not one, so it replaces the line it changes."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2026-07-07.md", "# 2026-07-07\n\n## Notes\n\n"
          "Quarterly planning happens in the Oak room on the 2nd floor.\n")
    commit_all(repo, "oak", "2026-07-07T20:00:00+00:00")
    write(repo, "memory/2026-08-04.md", "# 2026-08-04\n\n## Notes\n\n"
          "No more Oak room: quarterly planning is on Zoom from now on.\n")
    commit_all(repo, "zoom", "2026-08-04T20:00:00+00:00")
    shown = recall_json(repo, "where does quarterly planning happen?")["results"]
    assert [(r["source"].split("#")[0], (r["superseded_by"] or "").split("#")[0])
            for r in shown[:2]] == [("memory/2026-08-04.md", ""),
                                    ("memory/2026-07-07.md", "memory/2026-08-04.md")]


# Updates in plain lines that the rule leaves unmarked: a subject named only by a noun that
# changes its form ("Sommerfesten" / "sommerfesten indendørs", "За хоккей" / "Хоккеем"), a
# thing of the subject's ("Lena's flight"), a team named two ways ("チーム" / "たち"). A wrong
# mark is worse than a missed one (issue 38): these are hints at best, measured in
# BENCHMARKS.md ("prose"), not marks.
MISSED = pytest.mark.xfail(reason="precision first: no mark without a surely shared subject",
                           strict=False)


@pytest.mark.parametrize(("question", "older", "newer", "mention"), [
    # the newer line names the one asked about and words a change, without the attribute word
    pytest.param("when is Lena flying to Montreal?", "Lena's flight to Montreal is AC 837 on the 14th.",
     "Lena rebooked, she now leaves on the 16th with AC 835.",
     "Lena needs someone to water her plants while she is away.", marks=MISSED),
    # a question that names nobody: the newer line shares the thing and words a change
    ("hvornår går børnene til svømning?", "Børnene går til svømning om tirsdagen.",
     "Svømningen er nu om torsdagen kl. 17.", "Husk svømmetøj og håndklæde til svømning."),
    # "Sommerfesten" may stay whole in one line and be stemmed in the question
    pytest.param("hvor holdes sommerfesten?", "Sommerfesten holdes i Fælledparken.",
     "Pga. vejrudsigten rykker vi sommerfesten indendørs i kantinen.",
     "Husk at bestille pølser og øl til sommerfesten.", marks=MISSED),
    # 七時 / 六時 are clock times; ことにした words a decision to change
    ("犬の散歩は何時に行っていますか", "犬の散歩は毎朝七時に行っている。",
     "暑いので、散歩は夕方六時過ぎにすることにした。", "犬のフィラリアの薬を忘れずに。"),
    # with the name asked about, a shared attribute family is the change (on leave / back)
    ("松本さんはまだ産休中ですか", "松本さんは産休中で、復帰は来年の春の予定。",
     "松本さんが職場に戻ってきた。しばらくは時短勤務。", "松本さんにお祝いのカードを送った。"),
    # a kanji alone in the question is a word (出 of 出します): 排出 holds it too, the line
    # about the caps only the thing
    pytest.param("ペットボトルはいつ出しますか", "ペットボトルは毎週火曜に出す。",
     "回収の曜日が変わり、ペットボトルの排出は金曜になった。",
     "ペットボトルのキャップは外してから捨てる。", marks=MISSED),
    # Japanese names one's own family by kinship nouns alone: 祖母 is the one asked about,
    # and in hospital / discharged one attribute
    ("祖母はまだ入院していますか", "祖母が肺炎で入院している。", "祖母が今朝退院した。",
     "祖母の好物はみかん。"),
    # Snowball cuts one Russian noun's forms differently (хоккей -> хокк, хоккеем -> хокке):
    # a query stem is also the start of longer words, in the index and in the lines
    pytest.param("кто отвечает за хоккей?", "За хоккей в школе отвечает Ольга.",
     "Хоккеем теперь занимается Павел, Ольга перешла в администрацию.",
     "Хоккей по средам отменили до весны.", marks=MISSED),
    # 何階 asks for a floor: the lines say 三階 and 五階
    pytest.param("吉田さんのチームは何階にいますか", "吉田さんのチームは三階の奥にいる。",
     "吉田さんたちは先週五階に移った。", "吉田さんから打ち合わせの連絡があった。", marks=MISSED),
])
def test_a_prose_update_without_the_question_s_word_replaces_what_answered_it(
        tmp_path: Path, question: str, older: str, newer: str, mention: str) -> None:
    """Issue 17 item 4: an update in plain note lines often words the change without the
    question's attribute word. The older line answers the question; the newer names the one
    (or the thing) asked about and words a change: it is shown first and marks the older
    replaced. A line that only mentions the subject, between the two, stays current."""
    repo = daily_notes_repo(tmp_path, [("2026-07-01", older), ("2026-07-20", mention),
                                        ("2026-08-12", newer)])
    shown = {r["source"].split("#")[0]: r for r in recall_json(repo, question)["results"]}
    by = shown["memory/2026-07-01.md"]["superseded_by"] or ""
    assert by.split("#")[0] == "memory/2026-08-12.md", shown
    assert next(iter(shown)) == "memory/2026-08-12.md"
    assert shown.get("memory/2026-07-20.md", {}).get("superseded_by") is None


def test_one_character_of_a_japanese_name_is_not_the_person_asked_about(
        tmp_path: Path) -> None:
    """田 of 前田さん is in 山田さん too: 山田さん's new job does not replace where 前田さん
    works, though both lines hold 田 and the question's 働."""
    repo = daily_notes_repo(tmp_path, [("2026-07-01", "前田さんは横浜の病院で働いている。"),
                                       ("2026-08-12", "山田さんは十月から楽天に転職した。")])
    shown = recall_json(repo, "前田さんはどこで働いていますか")["results"]
    assert shown and all(r["superseded_by"] is None for r in shown), shown


@pytest.mark.parametrize(("text", "timed"), [
    ("犬の散歩は毎朝七時に行っている。", True), ("散歩は夕方六時過ぎにする。", True),
    ("十一時に寝る。", True), ("プロジェクトXは予算の都合で一時停止中。", False),
    ("会議は三時間かかった。", False)])
def test_kanji_clock_times_are_times_and_durations_are_not(text: str, timed: bool) -> None:
    from gitmem.parse.statements import read

    assert ("schedule" in read(text, (), "note").attributes) is timed


def test_an_update_ranked_below_the_shown_results_is_still_seen(tmp_path: Path) -> None:
    """The update that changed the answer often shares fewer of the question's words than
    what it replaced and ranks below the k shown. The graph was decided when it was indexed:
    with k = 1 the answer is the older line with a hint naming the newer one (a thing of
    Lena's, her flight, is no single-valued attribute the rule marks), the same as at k = 3."""
    repo = daily_notes_repo(tmp_path, [
        ("2026-07-01", "Lena's flight to Montreal is AC 837 on the 14th."),
        ("2026-07-20", "Lena needs someone to water her plants while she is away."),
        ("2026-08-12", "Lena rebooked, she now leaves on the 16th with AC 835.")])
    one = recall_json(repo, "when is Lena flying to Montreal?", "--k", "1")["results"]
    three = recall_json(repo, "when is Lena flying to Montreal?", "--k", "3")["results"]
    assert one == three[:1]
    assert one[0]["superseded_by"] is None
    assert (one[0]["newer"] or {}).get("source", "").startswith("memory/2026-08-12.md")


def _turn(text: str, day: str) -> Statement:
    return Statement("note", text, f"memory/{day}.md", 5, 5, day)


@pytest.mark.parametrize(("older", "newer", "hard"), [
    ("user: I drive a 2015 Honda Civic, it's been reliable.",
     "user: I finally traded in my Civic for a Tesla Model 3 last week.", True),
    ("user: I go to the gym on Mondays and Wednesdays after work.",
     "user: I moved my gym days to Tuesdays and Thursdays now.", True),
    ("user: my dentist is Dr. Lee on Oak Street.",
     "user: I switched to a new dentist, Dr. Patel, closer to home.", True),
    ("user: 私の上司は田中さんです。", "user: 上司が鈴木さんに変わりました。", True),
    ("user: у меня тариф «Смарт» у МТС за 500 рублей.",
     "user: я перешёл на тариф «Безлимит» у Билайна.", True),
    ("user: jeg har min konto i Danske Bank.", "user: jeg har skiftet bank til Lunar.", True),
    ("user: I play tennis on Saturdays.",
     "user: I started learning the guitar, lessons on Fridays.", False),
    ("user: I manage the data platform team at work.",
     "user: we moved to a bigger flat in Leeds last month.", False),
    ("user: I live in Manchester, near the university.",
     "user: my sister moved to Bristol for her new job.", False),
    ("user: 私は大阪に住んでいます。", "user: 弟が東京に引っ越しました。", False),
    ("user: я работаю в Яндексе аналитиком.", "user: мой брат устроился в Сбер.", False),
])
def test_a_chat_turn_updates_what_its_speaker_said(older: str, newer: str, hard: bool) -> None:
    """Chat logs (LongMemEval's sessions, a conversation section): a turn in the first person,
    or about one of the speaker's own attributes, is about its speaker; a relative's news is
    not (written fresh for issue 38, after the tuning sets)."""
    edge = judge(_turn(newer, "2026-11-18"), _turn(older, "2026-10-20"))
    assert (edge is not None and edge.strength == "hard") is hard, edge
