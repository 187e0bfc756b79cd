"""The knowledge-update benchmark (bench/bench_updates.py): its workspace, and metrics that are
computed right, so the benchmark cannot silently rot."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bench import bench_updates as bu
from bench.updates_data import RECORDS
from testing.repo import git

# Near-identical wording: the rule has replaced "lives in Berlin" by "lives in Lisbon" since
# before issue 17, so its answer is known.
SAME_WORDS = {"id": "t-alice", "lang": "en", "kind": "update", "form": "fact",
              "question": "where does Alice live?",
              "older": "W @Alice: Alice lives in Berlin.",
              "newer": "W @Alice: Alice lives in Lisbon.",
              "distractors": ["W @Alice: Alice is learning the cello.",
                              "W @Alice: Alice's birthday is March 3.",
                              "W @Alice: Alice plays chess on Sundays."]}
CONTROL = {"id": "t-bob", "lang": "en", "kind": "control", "form": "fact",
           "question": "what languages does Bob speak?",
           "older": "W @Bob: Bob has a dog.", "newer": "W @Bob: Bob speaks Portuguese.",
           "distractors": []}
PROSE = {"id": "t-floor", "lang": "en", "kind": "update", "form": "prose",
         "question": "which floor is the design team on?",
         "older": "The design team sits on the third floor.",
         "newer": "The design team moved to the fifth floor.", "distractors": []}
DECLARED = [{"id": f"t-{how}", "lang": "da", "kind": "update", "form": "fact", "replaces": how,
             "question": f"hvor bor {name}?", "older": f"W @{name}: {name} bor i Roskilde.",
             "newer": f"W @{name}: {name} har købt hus i Holbæk.", "distractors": []}
            for how, name in (("citation", "Ole"), ("fact_id", "Ida"))]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return bu.run([SAME_WORDS, CONTROL, PROSE, *DECLARED], tmp_path_factory.mktemp("bu"),
                  ("lexical",), ())


def test_known_answers_end_to_end(report: dict[str, Any]) -> None:
    lexical = report["lexical"]
    alice = lexical["records"]["t-alice"]
    assert alice["newer_rank"] == 1 and alice["first_top3"]
    assert alice["older_shown"] and alice["older_marked"] and not alice["older_marked_wrong"]
    assert alice["entity"] == {"older_replaced": True, "false_marks": [], "false_marks_by": {},
                               "marks": [[alice["entity"]["marks"][0][0],
                                          alice["entity"]["marks"][0][1], True]]}
    assert alice["false_marks"] == []
    bob = lexical["records"]["t-bob"]
    assert bob["newer_rank"] == 1 and bob["false_marks"] == [] and bob["entity"]["false_marks"] == []
    overall = lexical["overall"]
    assert overall["first_top3_fact"] == {"rate": 1.0, "hits": 1, "n": 1}
    # the prose pair's answer changes with the rule: counted as its records say
    rule = [lexical["records"][r] for r in ("t-alice", "t-floor")]
    shown = [s for s in rule if s["older_shown"]]
    assert overall["older_marked_when_shown"]["n"] == len(shown) >= 1
    assert overall["older_marked_when_shown"]["hits"] == sum(s["older_marked"] for s in shown)
    assert overall["entity_older_replaced"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert overall["controls_falsely_marked"] == {"rate": 0.0, "hits": 0, "n": 1}
    assert overall["controls_answered_top3"]["hits"] == 1
    # newer + 3 distractors of the fact update, newer of the prose one: current statements
    assert overall["current_falsely_marked"]["n"] == 5
    assert overall["first_top3_prose"]["n"] == 1 and overall["declared"]["n"] == 2
    assert overall["cjk_top5"]["n"] == 0
    # as of the day before "lives in Lisbon" was written, "lives in Berlin" is current
    assert alice["as_of"] == {"older_shown": True, "older_marked": False, "marked_by": []}
    assert set(lexical["per_language"]) == {"en", "da"}


def test_workspace_is_daily_notes_in_git(tmp_path: Path) -> None:
    layout = bu.lay_out([SAME_WORDS, PROSE, *DECLARED])
    repo = bu.build_workspace(tmp_path / "ws", layout)
    days = git(repo, "log", "--format=%cd", "--date=format:%Y-%m-%d").split()
    assert sorted(days) == sorted(d.isoformat() for d in layout.days)
    for st in layout.statements:  # every statement on its line, in its day's note
        lines = (repo / st.path).read_text(encoding="utf-8").split("\n")
        assert st.path == f"memory/{st.day.isoformat()}.md"
        assert lines[st.line - 1].removeprefix("- ") == st.text
        in_retain = "## Retain" in lines[: st.line]
        assert in_retain == st.entry
    alice = {s.role: s for s in layout.statements if s.record == "t-alice"}
    assert (alice["newer"].day - alice["older"].day).days >= 14
    between = [s for s in layout.statements if s.record == "t-alice" and s.role == "distractor"]
    assert sum(alice["older"].day < s.day < alice["newer"].day for s in between) == 2
    assert sum(s.day > alice["newer"].day for s in between) == 1


def test_declared_references_name_the_older_fact(report: dict[str, Any], tmp_path: Path) -> None:
    layout = bu.lay_out(DECLARED)
    repo = bu.build_workspace(tmp_path / "ws", layout)
    by = {(s.record, s.role): s for s in layout.statements}
    for rec in DECLARED:
        older, newer = by[(rec["id"], "older")], by[(rec["id"], "newer")]
        nested = (repo / newer.path).read_text(encoding="utf-8").split("\n")[newer.line]
        ref = nested.removeprefix("  - replaces: ")
        if rec["replaces"] == "citation":
            assert ref == f"{older.path}#L{older.line}"
        else:  # the id gitmem gives the older fact
            from gitmem.index.session import Session
            from gitmem.recall.entity import entity_view
            from gitmem.workspace import open_workspace

            ws, cfg = open_workspace(repo)
            view = entity_view(Session(ws, bu.configure(cfg, None)), "Ida", now=bu.NOW).to_json()
            ids = {f["source"]: f["fact_id"] for facts in view["facts"].values() for f in facts}
            ids |= {p["source"]: p["fact_id"] for facts in view["facts"].values()
                    for f in facts for p in f["history"]}
            assert ids[f"{older.path}#L{older.line}"] == ref


def _st(record: str, role: str, line: int, update: bool = True) -> bu.Statement:
    return bu.Statement(record, role, f"{record} {role}", date(2025, 7, 1), update,
                        "memory/2025-07-01.md", line)


def _result(start: int, end: int, superseded_by: str | None = None) -> dict[str, Any]:
    return {"path": "memory/2025-07-01.md", "start_line": start, "end_line": end,
            "superseded_by": superseded_by}


A_OLD, A_NEW, A_DIS = _st("a", "older", 3), _st("a", "newer", 9), _st("a", "distractor", 12)
C_ONE, C_TWO = _st("c", "older", 4, update=False), _st("c", "newer", 10, update=False)
IDX = bu.Index([A_OLD, A_NEW, A_DIS, C_ONE, C_TWO])
REC_A = {"id": "a", "kind": "update"}
REC_C = {"id": "c", "kind": "control"}


def test_scores_from_hand_built_results() -> None:
    # the older first: not "first", though both are in the top 3; the older unmarked
    s = bu.score_recall([_result(3, 3), _result(9, 9)], REC_A, IDX)
    assert (s["newer_rank"], s["older_rank"], s["first_top3"]) == (2, 1, False)
    assert s["older_shown"] and not s["older_marked"]
    # marked by the newer, in the fact and in a text result holding it: marked
    s = bu.score_recall([_result(9, 9), _result(3, 3, "memory/2025-07-01.md#L9"),
                         _result(2, 5, "memory/2025-07-01.md#L9@abc1234")], REC_A, IDX)
    assert s["first_top3"] and s["older_marked"] and not s["older_marked_wrong"]
    # one result showing it unmarked is enough to fail; a mark by the distractor is wrong
    s = bu.score_recall([_result(3, 3, "memory/2025-07-01.md#L12"), _result(2, 5)], REC_A, IDX)
    assert not s["older_marked"] and s["older_marked_wrong"]
    # fourth place is not the top 3
    s = bu.score_recall([_result(20, 20)] * 3 + [_result(9, 9)], REC_A, IDX)
    assert s["newer_rank"] == 4 and not s["first_top3"] and s["top5"]


def test_as_of_scores() -> None:
    assert bu.score_as_of([_result(9, 9), _result(3, 3)], REC_A, IDX) == {
        "older_shown": True, "older_marked": False, "marked_by": []}
    assert bu.score_as_of([_result(2, 5, "memory/2025-07-01.md#L9")], REC_A, IDX) == {
        "older_shown": True, "older_marked": True,
        "marked_by": ["memory/2025-07-01.md#L9 (a newer)"]}
    assert bu.score_as_of([_result(9, 9)], REC_A, IDX)["older_shown"] is False


def test_false_marks_are_attributed() -> None:
    # a text result holding a control statement and a's older one, marked by a's newer: the
    # mark is a's update, not the control's
    chunk = _result(3, 4, "memory/2025-07-01.md#L9")
    assert bu.score_recall([chunk], REC_C, IDX)["false_marks"] == []
    # the same text result marked by anything else marks the control statement
    chunk = _result(3, 4, "memory/2025-07-01.md#L12")
    s = bu.score_recall([chunk], REC_C, IDX)
    assert s["false_marks"] == ["older: c older"]
    assert s["false_marks_by"] == {"older: c older": "memory/2025-07-01.md#L12 (a distractor)"}
    # a control's first statement marked by its second: false; why, when the result says
    fact = _result(4, 4, "memory/2025-07-01.md#L10")
    assert bu.score_recall([fact], REC_C, IDX)["false_marks"] == ["older: c older"]
    fact |= {"superseded_basis": "rule", "superseded_attribute": "residence",
             "superseded_reason": "moved to"}
    assert bu.score_recall([fact], REC_C, IDX)["false_marks_by"] == {
        "older: c older": "memory/2025-07-01.md#L10 (c newer) [rule residence: moved to]"}
    # an update's newer statement or distractor marked: false
    s = bu.score_recall([_result(12, 12, "memory/2025-07-01.md#L20")], REC_A, IDX)
    assert s["false_marks"] == ["distractor: a distractor"]


def test_entity_view_scores() -> None:
    def fact(line: int, *history: int) -> dict[str, Any]:
        return {"source": f"memory/2025-07-01.md#L{line}",
                "history": [{"source": f"memory/2025-07-01.md#L{h}"} for h in history]}

    view = {"facts": {"world": [fact(9, 3), fact(12), fact(10, 4)]}}
    assert bu.score_entity(view, REC_A, IDX) == {
        "older_replaced": True, "false_marks": [], "false_marks_by": {},
        "marks": [["memory/2025-07-01.md#L3", "memory/2025-07-01.md#L9", True],
                  ["memory/2025-07-01.md#L4", "memory/2025-07-01.md#L10", False]]}
    # a control's first statement in its second's history: falsely marked
    assert bu.score_entity(view, REC_C, IDX)["false_marks_by"] == {
        "older: c older": "memory/2025-07-01.md#L10 (c newer)"}
    view = {"facts": {"world": [fact(12, 3), fact(9)]}}  # replaced, but by the distractor
    assert bu.score_entity(view, REC_A, IDX)["older_replaced"] is False
    # replaced by a statement that is not one of the entity's facts (a note line): listed apart
    view = {"facts": {"world": [fact(12)]}, "replaced": [
        {"source": f"{L}3", "replaced_by": f"{L}9", "basis": "rule"},
        {"source": f"{L}10", "replaced_by": f"{L}3", "basis": "rule"}]}
    scored = bu.score_entity(view, REC_A, IDX)
    assert scored["older_replaced"] and scored["marks"] == [
        [f"{L}3", f"{L}9", True], [f"{L}10", f"{L}3", False]]
    assert bu.score_entity(view, REC_C, IDX)["false_marks_by"] == {
        "newer: c newer": f"{L}3 (a older)"}


def test_summary_rates() -> None:
    records = [{"id": "a", "lang": "en", "kind": "update", "form": "fact"},
               {"id": "c", "lang": "ja", "kind": "control", "form": "fact"}]
    scored = {"a": {"first_top3": True, "older_shown": True, "older_marked": False,
                    "newer_rank": 1, "top5": True, "basis": [],
                    "false_marks": ["distractor: a distractor"],
                    "as_of": {"older_shown": True, "older_marked": True},
                    "entity": {"older_replaced": True, "false_marks": []}},
              "c": {"first_top3": False, "older_shown": False, "older_marked": False,
                    "newer_rank": 4, "top5": True, "basis": [], "false_marks": [],
                    "entity": {"older_replaced": False, "false_marks": ["older: c older"]}}}
    m = bu.summarise(records, scored, IDX)
    assert m["first_top3_fact"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert m["first_top3_prose"] == {"rate": None, "hits": 0, "n": 0}
    assert m["older_marked_when_shown"] == {"rate": 0.0, "hits": 0, "n": 1}
    assert m["entity_older_replaced"]["rate"] == 1.0
    assert m["controls_falsely_marked"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert m["controls_answered_top3"]["hits"] == 0
    assert m["current_falsely_marked"] == {"rate": 0.5, "hits": 1, "n": 2}
    assert m["cjk_top5"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert m["as_of_older_unmarked"] == {"rate": 0.0, "hits": 0, "n": 1}
    assert m["older_marked_when_shown_fact"]["n"] == 1
    assert m["older_marked_when_shown_prose"]["n"] == 0


def test_compare_lists_what_changed() -> None:
    def scores(first: bool, marks: list[str]) -> dict[str, Any]:
        return {"first_top3": first, "older_shown": True, "older_marked": first,
                "false_marks": marks, "as_of": {"older_marked": False},
                "entity": {"older_replaced": first, "false_marks": []}}

    before = {"lexical": {"records": {"a": scores(False, []), "b": scores(True, [])}}}
    after = {"lexical": {"records": {"a": scores(True, []), "b": scores(True, ["older: b"])}},
             "hybrid x": {"records": {}}}
    assert bu.compare(before, after).split("\n") == [
        "## lexical: 4 changes",
        "- a: first & top 3 False -> True",
        "- a: older marked False -> True",
        "- a: entity: older replaced False -> True",
        "- b: false marks [] -> ['older: b']",
    ]


def test_the_data_set_has_the_issue_shape() -> None:
    bu.check_records(RECORDS)
    rule = [r for r in RECORDS if r["kind"] == "update" and not r.get("replaces")]
    controls = [r for r in RECORDS if r["kind"] == "control"]
    assert len(rule) >= 60 and len(controls) >= 30
    assert {r["lang"] for r in rule} >= {"en", "ja", "ru", "da", "zh"}
    facts = sum(r["form"] == "fact" for r in rule)
    assert abs(facts / len(rule) - 2 / 3) < 0.05
    assert all(r["distractors"] for r in rule)
    cjk = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    assert all(cjk.search(r["question"]) for r in RECORDS if r["lang"] in bu.CJK_LANGS)


def test_command_line_with_own_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second set of the same shape, as JSON (``--data``), one language (``--only``)."""
    data = tmp_path / "records.json"
    data.write_text(json.dumps([SAME_WORDS, CONTROL, *DECLARED], ensure_ascii=False), "utf-8")
    out = tmp_path / "report.json"
    assert bu.main(["--mode", "lexical", "--data", str(data), "--only", "en",
                    "--json", str(out), "--misses"]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["records"] == 2 and list(report["runs"]) == ["lexical"]
    assert set(report["runs"]["lexical"]["records"]) == {"t-alice", "t-bob"}
    table = capsys.readouterr().out
    assert "| lexical | en | 1.00 (1/1) | – |" in table and "| lexical | all |" in table


def test_bad_records_are_refused() -> None:
    wrong_form = {**PROSE, "id": "t-x", "older": "W @Alice: Alice lives in Paris."}
    with pytest.raises(SystemExit, match="not written as a prose"):
        bu.check_records([wrong_form])
    with pytest.raises(SystemExit, match="repeats"):
        bu.check_records([SAME_WORDS, {**SAME_WORDS, "id": "t-y"}])


# ------------------------------------------------------------------------ issue 38's metrics

L = "memory/2025-07-01.md#L"


def _marked(start: int, end: int, by: str | None = None, basis: str = "rule",
            newer: Any = None) -> dict[str, Any]:
    return {**_result(start, end, by), "superseded_basis": basis if by else None,
            "newer": newer}


def test_hard_marks_from_hand_built_results() -> None:
    # the older marked by its newer: a right mark; a distractor marked: a wrong one; a
    # declared mark is not the rule's and is not counted
    s = bu.score_recall([_marked(9, 9), _marked(3, 3, f"{L}9"), _marked(12, 12, f"{L}20"),
                         _marked(2, 5, f"{L}9", basis="declared")], REC_A, IDX)
    assert s["marks"] == [[f"{L}3", f"{L}9", True], [f"{L}12", f"{L}20", False]]
    assert s["older_marked"] and not s["older_hinted"]
    # a text result holding a control statement and a's older one, marked by a's newer: right
    assert bu.score_recall([_marked(3, 4, f"{L}9")], REC_C, IDX)["marks"] == [
        [f"{L}3", f"{L}9", True]]


def test_hints_from_hand_built_results() -> None:
    hint = {"source": f"{L}9", "date": "2025-07-01"}
    s = bu.score_recall([_marked(9, 9), _marked(3, 3, newer=hint)], REC_A, IDX)
    assert s["older_hinted"] and not s["older_marked"] and s["marks"] == []
    # every result showing the older must carry it; a list of hints is read too
    s = bu.score_recall([_marked(3, 3, newer=[{"source": f"{L}12"}, hint]), _marked(2, 5)],
                        REC_A, IDX)
    assert not s["older_hinted"]
    assert bu.score_recall([_marked(3, 3, newer=[hint])], REC_A, IDX)["older_hinted"]
    # a hint naming another statement is not the update's hint
    s = bu.score_recall([_marked(3, 3, newer={"source": f"{L}12", "date": None})], REC_A, IDX)
    assert not s["older_hinted"]
    assert s["hinted"] == []  # "hinted" lists statements that are still true, and it is not
    # a hint on a control's statement is counted (never a false mark: it does not demote)
    s = bu.score_recall([_marked(4, 4, newer={"source": f"{L}10"})], REC_C, IDX)
    assert s["hinted"] == ["older: c older"] and s["false_marks"] == []


def test_k_violations() -> None:
    a, b, c = (_marked(n, n) for n in (3, 9, 12))
    assert bu.k_violations({1: [a], 2: [a, b], 3: [a, b, c]}) == []
    assert bu.k_violations({1: [a, b], 2: [a, b], 3: [a, b]}) == []  # nothing more to show
    assert bu.k_violations({1: [b], 2: [a, b]}) == [
        f"k=1 ['{L}9'] is not a prefix of k=2 ['{L}3', '{L}9']"]
    assert bu.k_violations({1: [], 2: [a]}) == ["k=1 gave 0 results, k=2 1"]
    # the same result marked at one k and not at another
    marked = _marked(3, 3, f"{L}9")
    assert bu.k_violations({1: [a], 2: [marked, b]}) == [
        f"k=1 vs k=2: {L}3 marks [None, None, None, None, None] -> "
        f"['{L}9', 'rule', None, None, None]"]


def test_summary_of_hard_marks_and_hints() -> None:
    records = [{"id": "a", "lang": "en", "kind": "update", "form": "fact", "case": "B"},
               {"id": "b", "lang": "en", "kind": "update", "form": "chat", "case": "chat"},
               {"id": "d", "lang": "en", "kind": "update", "form": "mixed", "case": "mixed"},
               {"id": "c", "lang": "en", "kind": "control", "form": "fact", "case": "group"},
               {"id": "e", "lang": "da", "kind": "control", "form": "prose", "case": "fixed"}]

    def scores(**kw: Any) -> dict[str, Any]:
        base = {"first_top3": False, "older_shown": False, "older_marked": False,
                "older_hinted": False, "newer_rank": None, "top5": False, "basis": [],
                "false_marks": [], "hinted": [], "marks": [], "k_violations": [],
                "as_of": {"older_shown": False, "older_marked": False}, "entity": {
                    "older_replaced": False, "false_marks": [], "marks": []}}
        return base | kw

    right, wrong = [f"{L}3", f"{L}9", True], [f"{L}4", f"{L}10", False]
    scored = {
        # marked right, in recall (twice: counted once) and in the entity view
        "a": scores(first_top3=True, older_shown=True, older_marked=True, marks=[right, right],
                    entity={"older_replaced": True, "false_marks": [], "marks": [right]}),
        # shown, not marked, hinted by the right newer; asked at several k with two violations
        "b": scores(older_shown=True, older_hinted=True, k_violations=["x", "y"]),
        # shown, neither marked nor hinted
        "d": scores(first_top3=True, older_shown=True),
        # a control wrongly marked (the same mark again) and hinted
        "c": scores(false_marks=["older: c older"], marks=[wrong, wrong],
                    hinted=["older: c older"]),
        # a control of another workspace with the same citations: a mark of its own
        "e": scores(marks=[wrong]),
    }
    idx = bu.Index([])
    m = bu.summarise(records, scored, idx)
    assert m["hard_mark_precision"] == {"rate": 0.5, "hits": 2, "n": 4}
    assert m["hard_mark_precision_recall"] == {"rate": 0.333, "hits": 1, "n": 3}
    assert m["hard_mark_precision_entity"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert m["hard_mark_recall"] == {"rate": 0.333, "hits": 1, "n": 3}
    assert m["hint_recall"] == {"rate": 0.5, "hits": 1, "n": 2}  # of b and d, not a
    assert m["controls_falsely_marked"] == {"rate": 0.5, "hits": 1, "n": 2}
    assert m["controls_hinted"] == {"rate": 0.5, "hits": 1, "n": 2}
    assert m["first_top3_chat"] == {"rate": 0.0, "hits": 0, "n": 1}
    assert m["first_top3_mixed"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert m["k_invariant"] == {"rate": 0.8, "hits": 4, "n": 5} and m["k_violations"] == 2
    assert m["controls_falsely_marked_by_case"] == {
        "fixed": {"rate": 0.0, "hits": 0, "n": 1}, "group": {"rate": 1.0, "hits": 1, "n": 1}}
    assert m["older_marked_by_case"]["B"] == {"rate": 1.0, "hits": 1, "n": 1}
    assert m["entity_older_replaced_by_line"]["n"] == 2  # b and d: their entity was asked


CHAT = {"id": "t-chat", "lang": "en", "kind": "update", "form": "chat", "case": "chat",
        "question": "where does Cleo live?", "older": "W @Cleo: Cleo lives in Austin.",
        "newer": "Cleo: we moved to Denver last month",
        "distractors": ["assistant: how is the new flat?", "Cleo's kids are 4 and 7."]}
MIXED = {"id": "t-mixed", "lang": "en", "kind": "update", "form": "mixed", "case": "mixed",
         "question": "what NAS do we have?", "older": "W @nas: The NAS is a Synology DS920.",
         "newer": "Replaced the Synology with a TrueNAS box.", "distractors": []}


def test_chat_turns_and_mixed_records_are_laid_out() -> None:
    bu.check_records([CHAT, MIXED])
    layout = bu.lay_out([CHAT, MIXED])
    placed = {s.text: s for s in layout.statements}
    for text, heading in ((CHAT["newer"], ("## Conversation", "## Chat log")),
                          ("assistant: how is the new flat?", ("## Conversation", "## Chat log")),
                          ("Cleo's kids are 4 and 7.", bu._NOTES_HEADINGS),
                          (MIXED["newer"], bu._NOTES_HEADINGS),
                          (MIXED["older"], ("## Retain",))):
        st = placed[text]
        lines = layout.days[st.day].split("\n")
        assert lines[st.line - 1] in (f"- {text}", text)
        above = [x for x in lines[: st.line] if x.startswith("## ")][-1]
        assert above in heading, (text, above)
    assert placed[CHAT["newer"]].chat and not placed[MIXED["newer"]].chat
    assert bu.subject(CHAT) == "Cleo" and bu.subject(MIXED) == "nas"
    with pytest.raises(SystemExit, match="not written as a chat"):
        bu.check_records([{**CHAT, "newer": "we moved to Denver last month"}])
    with pytest.raises(SystemExit, match="not written as a mixed"):
        bu.check_records([{**MIXED, "older": "The NAS is a Synology DS920."}])


def test_the_fresh_and_held_out_sets_have_the_issue_shape() -> None:
    for which, controls, updates in (("fresh", 40, 20), ("heldout", 30, 15)):
        records = bu.load_set(which)
        bu.check_records(records)
        assert {r["set"] for r in records} == {which}
        for kind, least in (("control", controls), ("update", updates)):
            mine = [r for r in records if r["kind"] == kind]
            assert len(mine) >= least
            per_lang = {lang: sum(r["lang"] == lang for r in mine) for lang in bu.LANGS[:4]}
            assert min(per_lang.values()) >= least // 4 - 1, per_lang
        cases = {r["case"] for r in records}
        assert cases >= {"move-duty", "group", "fixed", "coexist", "cross-lang",
                         "B", "S", "prose", "mixed", "chat"}
    everything = bu.load_set("all")
    bu.check_records(everything)  # ids and statements unique across the three sets
    assert len(everything) == sum(len(bu.load_set(w)) for w in bu.SETS)


def test_a_sample_of_the_fresh_sets_end_to_end(tmp_path: Path) -> None:
    """Records of two sets, each in its own workspace; the summary's counts are the records'."""
    wanted = {"en-f-nas", "en-f-cleo", "en-f-vpn", "en-f-c-greta", "en-h-jess", "en-h-c-wendy"}
    records = [r for r in bu.load_set("all") if r["id"] in wanted]
    report = bu.run(records, tmp_path, ("lexical",), (), k_max=3)["lexical"]
    scored, overall = report["records"], report["overall"]
    assert set(report["per_set"]) == {"fresh", "heldout"}
    updates = [scored[r["id"]] for r in records if r["kind"] == "update"]
    shown = [s for s in updates if s["older_shown"]]
    assert overall["hard_mark_recall"]["n"] == len(shown)
    assert overall["hard_mark_recall"]["hits"] == sum(s["older_marked"] for s in shown)
    assert overall["hint_recall"]["n"] == sum(not s["older_marked"] for s in shown)
    assert overall["k_invariant"]["n"] == len(records)
    assert overall["first_top3_chat"]["n"] == 2 and overall["first_top3_mixed"]["n"] == 1
    marks = {tuple(m) for s in scored.values() for m in s["marks"]}
    assert overall["hard_mark_precision_recall"]["n"] == len(marks)
    fresh = report["per_set"]["fresh"]
    assert fresh["controls_falsely_marked"]["n"] == 1
    json.dumps(report)  # the report is JSON-able
