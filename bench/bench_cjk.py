"""Japanese, Chinese and Korean questions answered lexically: hit@5 on a small CJK workspace.

    python bench/bench_cjk.py [--k 5] [--mode lexical] [--out bench/results/cjk.json]

The workspace below is a git repository of daily notes written as people write them: Retain facts
and plain note lines about a few people (many facts about 田中さん, 王伟 and 민수, so a name alone
does not pick the answer), with English lines among them. Each question is asked as a person
would ask it: with particles, polite or plain endings and question words (どこ, いつ, 誰, 何,
吗, 呢, 什么, 哪里, 어디, 언제), with and without さん. A question scores a hit when one of
the first ``--k`` results cites its target line. The questions share a content word with their
target (lexical search cannot bridge a paraphrase: see bench_multilingual.py for that), but never
the whole question: their particles, endings and question words are not in the notes. The
questions that only name a person (``田中さんはどこ``) must return something about that person.
In-process, ``now`` fixed, no embedding model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmem.domain import RecallMode

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from gitmem.index.run import index_and_embed  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.recall.answer import RecallRequest, answer  # noqa: E402
from gitmem.workspace import Workspace, open_workspace  # noqa: E402
from testing.gitenv import Identity, sealed_env  # noqa: E402
from testing.repo import commit_all, git, write  # noqa: E402

NOW = datetime(2025, 12, 1, 12, 0, tzinfo=UTC)
IDENTITY = Identity("gitmem bench", "bench@example.invalid")

# path -> text; committed one day per commit, in path order.
NOTES: dict[str, str] = {
    "memory/2025-10-03.md": """# 2025-10-03

## Retain
- W @田中: 田中さんは大阪に住んでいる。
- W @田中: 田中さんは営業部の部長です。
- O(c=0.8) @田中: 田中さんは朝のミーティングが苦手だ。
- W @鈴木: 鈴木さんの誕生日は3月14日。
- W @Peter: Peter keeps the gateway config in ~/.clawdis/clawdis.json.

## Notes
今日は田中さんと新しい見積もりについて話した。来週までに資料をまとめる。
Lunch with Peter; he wants shorter WhatsApp replies.
""",
    "memory/2025-10-08.md": """# 2025-10-08

## Retain
- W @王伟: 王伟住在上海浦东。
- W @王伟: 王伟在腾讯做产品经理。
- W @李娜: 李娜的生日是六月八号。
- O(c=0.9) @李娜: 李娜喜欢喝绿茶，不喝咖啡。

## 笔记
今天和王伟讨论了新版本的发布计划，决定推迟到十一月。
""",
    "memory/2025-10-14.md": """# 2025-10-14

## Retain
- W @민수: 민수는 부산에 살아요.
- W @민수: 민수의 생일은 5월 2일이에요.
- W @지영: 지영 씨는 삼성에서 디자이너로 일해요.

## 메모
오늘 민수와 점심을 먹었다. 다음 주에 회의가 있다.
""",
    "memory/2025-10-17.md": """# 2025-10-17

## Retain
- W @田中: 田中さんの趣味は釣りで、週末はよく琵琶湖に行く。
- W @田中: 田中さんは毎朝コーヒーを二杯飲む。
- B @田中: 田中さんに請求書のPDFを送った。
- W @佐藤: 佐藤さんはエンジニアで、Rustが得意。

## メモ
午後は佐藤さんとビルドサーバーの設定を見直した。
""",
    "memory/2025-11-02.md": """# 2025-11-02

## Retain
- W @张明: 张明下个月去北京出差。
- W @李娜: 李娜养了一只猫，叫小白。
- W @王伟: 王伟的车是白色的特斯拉。
- B @张明: 帮张明订了去成都的火车票。

## 笔记
晚上在公司附近的川菜馆吃饭，水煮鱼很好吃。
""",
    "memory/2025-11-05.md": """# 2025-11-05

## Retain
- W @田中: 田中さんは東京の品川に住んでいる。
- W @田中: 田中さんの電話番号は090-1234-5678。
- W @鈴木: 鈴木さんは京都の大学で日本史を教えている。
- W @Alice: Alice moved to Lisbon; she lives in Alfama now.

## メモ
田中さんは大阪から東京に引っ越しました。新しいマンションは駅から徒歩五分だそうです。
""",
    "memory/2025-11-12.md": """# 2025-11-12

## Retain
- W @佐藤: 佐藤さんの犬の名前はポチ。
- W @山本: 山本さんは来年の四月に結婚する。
- O(c=0.7) @山本: 山本さんは辛いラーメンが好き。
- W @민수: 민수는 매주 토요일에 테니스를 쳐요.

## メモ
会議室の予約は毎週火曜日の十時から。プロジェクターはまだ壊れている。
""",
    "memory/2025-11-18.md": """# 2025-11-18

## Retain
- W @李娜: 李娜每周六上午学钢琴。
- W @王伟: 王伟的女儿在读高中。
- W @张明: 张明的办公室在十二楼。

## 笔记
服务器的备份每天凌晨三点运行。
""",
    "memory/2025-11-20.md": """# 2025-11-20

## Retain
- W @田中: 田中さんの娘さんは小学三年生。
- B: 新しいノートパソコンを注文した。届くのは十二月二日。
- W @佐藤: 佐藤さんは毎週水曜日にリモートで働く。
- W @Alice: Alice's sister works at the Gulbenkian museum.

## メモ
山本さんと一緒に新宿でお寿司を食べた。
""",
}


@dataclass(frozen=True)
class Question:
    lang: str
    text: str
    path: str  # the target line is the line of this file that contains ``line``
    line: str


Q = Question
QUESTIONS: tuple[Question, ...] = (
    Q("ja", "田中さんはどこに住んでいますか", "memory/2025-11-05.md", "品川に住んでいる"),
    Q("ja", "田中さんの住んでいるところは？", "memory/2025-11-05.md", "品川に住んでいる"),
    Q("ja", "田中さんの趣味は何ですか", "memory/2025-10-17.md", "趣味は釣り"),
    Q("ja", "鈴木さんの誕生日はいつ？", "memory/2025-10-03.md", "誕生日は3月14日"),
    Q("ja", "佐藤さんは何が得意なの", "memory/2025-10-17.md", "Rustが得意"),
    Q("ja", "山本さんはいつ結婚しますか", "memory/2025-11-12.md", "結婚する"),
    Q("ja", "佐藤の犬の名前は？", "memory/2025-11-12.md", "ポチ"),
    Q("ja", "会議室は何曜日に予約してある？", "memory/2025-11-12.md", "会議室の予約"),
    Q("ja", "誰が京都の大学で教えていますか", "memory/2025-11-05.md", "京都の大学"),
    Q("ja", "田中さんは毎朝何を飲みますか", "memory/2025-10-17.md", "コーヒー"),
    Q("ja", "ノートパソコンはいつ届きますか", "memory/2025-11-20.md", "ノートパソコン"),
    Q("ja", "田中さんの電話番号を教えてください", "memory/2025-11-05.md", "電話番号"),
    Q("ja", "山本さんはどんなラーメンが好きですか", "memory/2025-11-12.md", "ラーメン"),
    Q("ja", "誰と寿司を食べたっけ", "memory/2025-11-20.md", "お寿司"),
    Q("ja", "田中は何部の部長", "memory/2025-10-03.md", "営業部の部長"),
    Q("ja", "田中さんの娘は何年生ですか", "memory/2025-11-20.md", "小学三年生"),
    Q("ja", "佐藤さんがリモートで働くのは何曜日？", "memory/2025-11-20.md", "リモート"),
    Q("ja", "田中さんはいつ東京に引っ越したの", "memory/2025-11-05.md", "引っ越しました"),
    Q("ja", "週末に琵琶湖へ行くのは誰ですか", "memory/2025-10-17.md", "琵琶湖"),
    Q("ja", "田中さんに何を送りましたか", "memory/2025-10-17.md", "請求書"),
    Q("ja", "プロジェクターは直りましたか", "memory/2025-11-12.md", "プロジェクター"),
    Q("ja", "田中さんが苦手なことは何", "memory/2025-10-03.md", "苦手"),
    Q("ja", "新しいマンションは駅から近いですか", "memory/2025-11-05.md", "マンション"),
    Q("ja", "田中さんはどこに住む？", "memory/2025-11-05.md", "品川に住んでいる"),
    Q("ja", "田中さんは朝なにを飲んでる", "memory/2025-10-17.md", "コーヒー"),
    Q("zh", "王伟住在哪里？", "memory/2025-10-08.md", "上海浦东"),
    Q("zh", "王伟是产品经理吗", "memory/2025-10-08.md", "产品经理"),
    Q("zh", "李娜的生日是什么时候？", "memory/2025-10-08.md", "六月八号"),
    Q("zh", "李娜喜欢喝什么茶", "memory/2025-10-08.md", "绿茶"),
    Q("zh", "张明什么时候去北京？", "memory/2025-11-02.md", "北京出差"),
    Q("zh", "李娜的猫叫什么名字？", "memory/2025-11-02.md", "一只猫"),
    Q("zh", "王伟开什么车呢", "memory/2025-11-02.md", "特斯拉"),
    Q("zh", "谁学钢琴了？", "memory/2025-11-18.md", "学钢琴"),
    Q("zh", "张明的办公室在哪里", "memory/2025-11-18.md", "十二楼"),
    Q("zh", "服务器几点备份？", "memory/2025-11-18.md", "备份"),
    Q("zh", "新版本的发布计划怎么样了", "memory/2025-10-08.md", "发布计划"),
    Q("zh", "王伟的女儿上几年级了", "memory/2025-11-18.md", "女儿"),
    Q("zh", "我们在哪儿吃的水煮鱼", "memory/2025-11-02.md", "水煮鱼"),
    Q("zh", "李娜有猫吗？", "memory/2025-11-02.md", "一只猫"),
    Q("zh", "王伟的车是什么颜色", "memory/2025-11-02.md", "特斯拉"),
    Q("zh", "谁养猫？", "memory/2025-11-02.md", "一只猫"),
    Q("ko", "민수는 어디에 살아요?", "memory/2025-10-14.md", "부산에"),
    Q("ko", "민수 생일이 언제예요?", "memory/2025-10-14.md", "생일은"),
    Q("ko", "지영 씨는 어디에서 일해요?", "memory/2025-10-14.md", "삼성에서"),
    Q("ko", "민수가 어디 살아?", "memory/2025-10-14.md", "부산에"),
    Q("ko", "민수가 무슨 요일에 테니스를 쳐요?", "memory/2025-11-12.md", "테니스"),
)
# Questions that name only a person: anything about that person answers (never "no results").
PERSON_ONLY: tuple[tuple[str, str], ...] = (
    ("田中さんはどこ", "田中"),
    ("田中さんの住所", "田中"),
    ("王伟呢？", "王伟"),
    ("민수는요?", "민수"),
)


def build_workspace(dest: Path) -> Path:
    """The notes above as a git repository, one commit per day at 21:00 UTC."""
    env = sealed_env(IDENTITY)
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main", env=env)
    for path, text in sorted(NOTES.items()):
        write(dest, path, text)
        day = Path(path).stem
        commit_all(dest, f"notes {day}", f"{day}T21:00:00+00:00", env=env)
    return dest


def target_line(q: Question) -> int:
    """The 1-based line of the question's target."""
    lines = NOTES[q.path].split("\n")
    found = [n for n, text in enumerate(lines, 1) if q.line in text]
    if len(found) != 1:
        raise SystemExit(f"{q.text!r}: {q.line!r} is on {len(found)} lines of {q.path}")
    return found[0]


def evaluate(ws: Workspace, k: int, mode: RecallMode) -> dict[str, Any]:
    """hit@k per language, the not_first, empty answers, and the questions' median latency."""
    cfg = replace(open_workspace(ws.root)[1], embed_provider="none")
    per_lang: dict[str, list[int]] = {}
    ranks: list[int] = []  # the target's place (1-based), 0 when not in the first k
    not_first: list[str] = []
    seconds: list[float] = []
    for q in QUESTIONS:
        line = target_line(q)
        started = time.perf_counter()
        resp = answer(Session(ws, cfg), RecallRequest(query=q.text, k=k, mode=mode), now=NOW)
        seconds.append(time.perf_counter() - started)
        rank = next((n for n, r in enumerate(resp.results, 1)
                     if r.path == q.path and r.start_line <= line <= r.end_line), 0)
        ranks.append(rank)
        per_lang.setdefault(q.lang, []).append(int(rank > 0))
        if rank != 1:
            not_first.append(f"{q.lang}: {q.text} -> {q.line}: place {rank or '-'}, first "
                          f"{resp.results[0].content[:30] if resp.results else 'nothing'}")
    empty = [text for text, name in PERSON_ONLY
             if not any(name in r.content for r in answer(
                 Session(ws, cfg), RecallRequest(query=text, k=k, mode=mode), now=NOW).results)]
    seconds.sort()
    return {
        "per_language": {lang: round(sum(v) / len(v), 3) for lang, v in per_lang.items()},
        "overall": round(sum(sum(v) for v in per_lang.values()) / len(QUESTIONS), 3),
        "hit_at_1": round(sum(r == 1 for r in ranks) / len(ranks), 3),
        "mrr": round(sum(1 / r for r in ranks if r) / len(ranks), 3),
        "not_first": not_first,
        "person_only_unanswered": empty,
        "p50_ms": round(1000 * seconds[len(seconds) // 2], 2),
    }


def markdown(result: dict[str, Any], k: int) -> str:
    counts = {lang: sum(1 for q in QUESTIONS if q.lang == lang) for lang in result["per_language"]}
    head = " | ".join(f"{lang} ({n})" for lang, n in counts.items())
    cells = " | ".join(f"{v:.2f}" for v in result["per_language"].values())
    lines = [f"hit@{k}, lexical:", "", f"| {head} | all ({len(QUESTIONS)}) | hit@1 | MRR | "
             f"name only ({len(PERSON_ONLY)}) answered |", "|---" * (len(counts) + 4) + "|",
             f"| {cells} | {result['overall']:.2f} | {result['hit_at_1']:.2f} | "
             f"{result['mrr']:.2f} | "
             f"{len(PERSON_ONLY) - len(result['person_only_unanswered'])} |"]
    lines += [f"- not first: {m}" for m in result["not_first"]]
    lines += [f"- no answer: {t}" for t in result["person_only_unanswered"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--mode", default="lexical")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "cjk.json")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gitmem-cjk-") as tmp:
        repo = build_workspace(Path(tmp) / "ws")
        ws, cfg = open_workspace(repo)
        index_and_embed(ws, replace(cfg, embed_provider="none"), force=True)
        result = evaluate(ws, args.k, args.mode)
    print(markdown(result, args.k))
    report = {"k": args.k, "mode": args.mode, "now": NOW.isoformat(), "result": result}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
