"""Deterministic generator of a synthetic gitmem workspace (benchmarks and tests).

Builds N years of daily notes (``memory/YYYY-MM-DD.md``, one per day, the last on 2026-11-29)
plus ``MEMORY.md``, ``USER.md``, ``bank/opinions.md`` and ~30 ``bank/entities/<Slug>.md`` pages,
as ONE git commit per day dated that day, written with a single ``git fast-import`` stream into a
fresh repository and then checked out.

Everything is drawn from a seeded ``random.Random``: the same seed gives byte-identical files and
the same HEAD commit id.

    python testing/synth.py DEST --years N [--seed S]
    python testing/synth.py DEST --days 30

``queries(seed)`` / ``QUERIES`` give 50 varied recall queries over the generated vocabulary.
Evidence in ``bank/opinions.md`` cites facts by the ids gitmem's index gives them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
import time
from bisect import bisect
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from itertools import accumulate
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gitmem.domain import KIND_NAMES
from gitmem.parse.retain import fact_id, find_entities
from testing.fastimport import FastImportStream, import_history
from testing.gitenv import Identity
from testing.repo import GitFailed

END_DATE = date(2026, 11, 29)
DEFAULT_SEED = 0
IDENTITY = Identity("gitmem-bench", "bench@example.invalid")

# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------

PEOPLE: tuple[str, ...] = (
    "Peter", "Andy", "Mara", "Jonas", "Lena", "Tomas", "Priya", "Kenji", "Sofia", "Malik",
    "Ingrid", "Rafael", "Chloe", "Oskar", "Nadia", "Felix", "Amara", "Hugo", "Yara", "Leon",
    "Greta", "Mateo", "Elif", "Viktor", "Noor", "Emil", "Hana", "Arjun", "Clara", "Dmitri",
    "Zoe", "Bruno", "Aiko", "Samir", "Ida", "Lucas", "Mei", "Tobias", "Ana", "Kofi",
    "Frida", "Marco", "Sven", "Leila", "Pavel", "Rosa", "Theo", "Ines", "Omar", "Julia",
    "Søren", "Mette", "Jesper", "Åse", "Bjørn", "Kirsten", "Mads", "Sigrid", "Anders-Holm",
    "Mary-Ann", "Jean-Luc", "Dr.Kaur", "ピーター", "さくら", "ゆうき", "ハナコ", "Пётр",
    "Анна", "Игорь", "小王", "李娜", "Wren", "Ezra", "Nico", "Liv",
)
PROJECTS: tuple[str, ...] = (
    "warelay", "gitmem", "clawdis", "nimbus", "atlas-gateway", "blue-harbor", "quill",
    "tern", "lantern", "orchard", "pebble", "driftwood", "kestrel", "ledger-sync",
    "beacon", "fjord", "marrow", "sparrow-ci", "tidepool", "copperline", "halyard", "juniper",
    "mosaic", "nautilus", "obsidian-api", "paperboat", "quokka", "riverbed", "saltmarsh",
    "thimble", "umbra", "vellum", "wayfarer", "yarrow", "zephyr", "anchor-db", "bramble",
    "cinder", "dovetail", "ember-ui", "foxglove", "garnet", "heron", "inkwell", "jetty",
    "kiln", "lichen", "meridian", "nettle", "osprey", "pylon", "quarry", "rook", "sextant",
    "trellis", "upland", "vireo", "willow-bot", "xylem", "yawl", "zinnia", "whatsapp-bridge",
    "telegram-relay", "home-lab", "tax-2026", "garden-plan", "photo-archive", "baileys-fork",
    "cronmaster", "inbox-zero",
)
PLACES: tuple[str, ...] = (
    "The-Castle", "Marrakech", "Copenhagen", "Tokyo", "Berlin", "Aarhus", "Lisbon", "Vienna",
    "Kyoto", "Oslo", "Reykjavik", "Porto", "Barcelona", "Amsterdam", "Prague", "Helsinki",
    "Stockholm", "Zurich", "Munich", "Hamburg", "Paris", "London", "Dublin", "Edinburgh",
    "Madrid", "Seville", "Rome", "Milan", "Athens", "Istanbul", "Cairo", "Nairobi",
    "Cape-Town", "Singapore", "Bangkok", "Seoul", "Osaka", "Sapporo", "Taipei", "Shanghai",
    "Vancouver", "Montreal", "New-York", "Boston", "Austin", "San-Francisco", "Mexico-City",
    "Buenos-Aires", "Odense", "Skagen", "Bornholm", "Ærø", "Tbilisi", "Home-Office",
    "Rack-B7",
)

ALIASES: dict[str, tuple[str, ...]] = {
    "Peter": ("ピーター", "Pete"),
    "The-Castle": ("Castle", "the castle"),
    "warelay": ("WA relay",),
    "Søren": ("Soren", "Søren Kierkegaard-Holm"),
    "Home-Office": ("home office", "study"),
}

ERRORS: tuple[str, ...] = (
    "connection reset by peer", "ECONNRESET", "database is locked",
    "TypeError: Cannot read properties of undefined (reading 'update')",
    "ENOSPC: no space left on device", "certificate has expired",
    "fatal: refusing to merge unrelated histories", "429 Too Many Requests",
    "Segmentation fault (core dumped)", "OOMKilled", "context deadline exceeded",
    "Permission denied (publickey)", "ModuleNotFoundError: No module named 'apsw'",
    "sqlite3.OperationalError: disk I/O error", "502 Bad Gateway", "WS closed with code 1006",
    "ETIMEDOUT", "invalid token: signature expired",
    "x509: certificate signed by unknown authority", "Too many open files",
    "KeyError: 'session_id'", "panic: runtime error: index out of range",
)

KEY_HEADS = (
    "gateway", "memorySearch", "agent", "whatsapp", "telegram", "sync", "backup", "embed",
    "cron", "hooks", "index", "logging", "model", "proxy", "cache", "auth",
)
KEY_MIDS = (
    "query", "http", "retry", "batch", "store", "session", "schedule", "limits", "tls",
    "chunk", "remote", "pool",
)
KEY_TAILS = (
    "hybrid", "port", "maxAttempts", "size", "path", "timeoutMs", "enabled", "interval",
    "level", "ttl", "backoff", "dimensions", "threshold", "host", "minScore",
)
FIXED_KEYS = (
    "memorySearch.query.hybrid", "gateway.http.port", "embed.remote.base_url",
    "whatsapp.session.timeoutMs", "backup.schedule.interval",
)

TOPICS = (
    "reciprocal rank fusion", "BM25 tuning", "CRDTs", "sqlite WAL mode", "vector quantisation",
    "bread baking", "sourdough hydration", "zone 2 training", "Japanese joinery",
    "the history of Lisbon trams", "home battery storage", "event sourcing", "Rust async",
    "typed Retain entries", "git fast-import", "unicode normalisation", "trigram indexes",
)
THINGS = (
    "gateway host", "backup NAS", "build runner", "home router", "mail relay", "DNS zone",
    "CI cache", "photo library", "password vault", "embedding cache",
)
REASONS = (
    "Andy's birthday", "a conference", "the offsite", "a family visit", "a workshop",
    "a hackathon", "the wedding", "a short holiday",
)
FIXES = (
    "wrapping the connection.update handler in try/catch", "adding a retry with backoff",
    "raising the file descriptor limit", "pinning the dependency", "rotating the key",
    "moving the lock file out of the synced folder", "splitting the batch in two",
    "renewing the certificate", "vacuuming the database",
)
PREFS = (
    "concise WhatsApp replies (under 1500 chars)", "long content in a file, not in chat",
    "morning meetings before 10:00", "async updates over calls", "dark mode everywhere",
    "plain Markdown over rich documents", "small pull requests", "Danish pastry on Fridays",
    "trains over flights in Europe", "tests before refactors",
)
JUDGEMENTS = (
    "stable enough for daily use", "overdue for a rewrite", "the right default for now",
    "too slow on large repos", "worth the extra complexity", "not ready for production",
    "simpler than it looks", "a maintenance burden",
)
WEATHER = ("grey and windy", "sunny", "rainy", "foggy", "cold but clear", "humid", "snowy")
VENDORS = ("Hetzner", "Fastmail", "Backblaze", "Tailscale", "Fly.io", "Cloudflare")
CURRENCIES = ("EUR", "DKK", "USD", "JPY")
VALUES = ("true", "false", "30000", "0.35", "8", "512", '"auto"')
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAYS_JA = ("月", "火", "水", "木", "金", "土", "日")
WEEKDAYS_RU = ("понедельник", "вторник", "среда", "четверг", "пятница", "суббота",
               "воскресенье")
WEEKDAYS_DA = ("mandag", "tirsdag", "onsdag", "torsdag", "fredag", "lørdag", "søndag")
MONTHS_DA = ("januar", "februar", "marts", "april", "maj", "juni", "juli", "august",
             "september", "oktober", "november", "december")
WEEKDAYS_ZH = ("一", "二", "三", "四", "五", "六", "日")

JA_PEOPLE = ("ピーター", "さくら", "ゆうき", "ハナコ")
RU_PEOPLE = ("Пётр", "Анна", "Игорь")
DA_PEOPLE = ("Søren", "Mette", "Jesper", "Åse", "Bjørn", "Kirsten", "Mads", "Sigrid")
ZH_PEOPLE = ("小王", "李娜")

# Prose sentence templates per language; {slots} are filled by _Writer.fill().
EN_SENTENCES: tuple[str, ...] = (
    "Spent most of the morning with {person} on {project}; the `{key}` setting was still "
    "{value} from the last rollout.",
    "{person} reported `{err}` again when {project} restarted on the host in {place_name}.",
    "Traced it to commit {hex}, which changed how `{key}` is read at startup.",
    "Latency p95 dropped from {n1} ms to {n2} ms after bumping `{key}` to {num}.",
    "Call with {person} about the {place_name} trip ({date} – {date2}); trains are booked.",
    "Reviewed the {project} backlog: {num} open issues, {small} of them tagged `needs-triage`.",
    "Backup of the {project} database finished in {num} s; checksum {hex} matches.",
    "{person} thinks we should drop {project2} and fold it into {project}.",
    "Renewed the TLS certificate for {project}.example.net; it now expires on {date}.",
    "The nightly job on {place_name} failed with `{err}`; reran it by hand and it passed.",
    "Paid the {vendor} invoice #{num} ({amount} {cur}).",
    "Weather in {place_name} was {weather}, so the walk got shortened.",
    "Read about {topic} in the evening; worth trying on {project}.",
    "Set `{key} = {value}` in the staging config and left a note for @{person}.",
    "Deploy {hex} went out at {time}; the rollback plan is to revert to {hex2}.",
    "Meeting with {person} and {person2}: agreed to ship {project} v{version} before {date}.",
    "Disk usage on the {thing} is at {pct}%, up from {pct2}% last week.",
    "{person} asked whether {project} can read `{key}` from the environment instead.",
    "Moved the {thing} to {place_name}; DNS propagated in about {small} minutes.",
    "Wrote a short design note on {topic} for {project} and shared it with {person}.",
    "Still seeing `{err}` in the {project} logs, roughly {small} times an hour.",
    "Lunch with {person} in {place_name}; mostly talked about {topic}.",
    "Opened PR #{num} on {project} to make `{key}` configurable.",
    "Rotated the API token for {project}; the old one (…{hex}) is revoked.",
)
EN_HEADINGS = (
    "Morning", "Work log", "Notes", "Evening", "Infra", "Calls", "Errands", "Reading",
    "Incidents", "Planning", "Follow-ups", "Ideas",
)
EN_RETAIN: dict[str, tuple[str, ...]] = {
    "W": (
        "@{person}: Currently in {place_name} for {reason} ({date} – {date2}).",
        "@{project}: `{key}` defaults to {value} since v{version}.",
        "@{person} @{place}: Moved the {thing} to {place_name}.",
        "@{project}: The `{err}` error comes from {cause}.",
        "@{place}: The {thing} at {place_name} has {num} GB free.",
    ),
    "B": (
        "@{project}: Fixed `{err}` by {fix} (commit {hex}).",
        "@{person}: Helped {person_name} set up {project} on the {place_name} box.",
        "@{project}: Bumped `{key}` from {n1} to {n2}; p95 latency now {n3} ms.",
        "@{project} @{person}: Paired with @{person2} on the {topic} spike for {small} hours.",
    ),
    "O": (
        "@{person}: Prefers {pref}.",
        "@{project}: {project_name} is {judgement}.",
    ),
    "S": (
        "@{project}: {small} deploys this week, {tiny} rollbacks.",
        "@{person}: Mentioned {topic} {tiny} times this month.",
        "@{project}: `{err}` seen on {small} days out of the last 30.",
    ),
}
CAUSES = (
    "a stale lock file", "an expired certificate", "the retry loop ignoring backoff",
    "a full disk on the runner", "a race in the reconnect handler", "a missing index",
)

JA_SENTENCES: tuple[str, ...] = (
    "{person}と{project}のデプロイについて打ち合わせ。`{key}` の設定を{value}に変更した。",
    "{place_name}のサーバーで障害が発生。エラーは `{err}` で、コミット {hex} で修正済み。",
    "今日の{place_name}は雨だった。{person}の誕生日の準備をした。",
    "{project}のバックアップが{num}秒で完了した。チェックサムは {hex} で一致。",
    "応答時間が{n1}ミリ秒から{n2}ミリ秒に改善された。",
    "{date}までに{project}の新しいバージョンをリリースする予定。",
    "夜は{topic}について読んだ。{project}で試す価値がある。",
    "{person}から設定ファイルの質問があった。`{key}` は環境変数でも指定できる。",
    "会議の議事録を{project}のリポジトリに追加した。次回は{date}。",
    "ディスク使用率が{pct}%になったので、古いログを削除した。",
)
JA_HEADINGS = ("午前", "作業メモ", "振り返り", "会議", "障害対応", "夜")
JA_RETAIN: dict[str, tuple[str, ...]] = {
    "W": ("@{person}: {place_name}に滞在中（{date}〜{date2}）。",
          "@{project}: `{key}` の既定値は{value}。"),
    "B": ("@{project}: `{err}` の障害を修正した（コミット {hex}）。",
          "@{person}: {project}の設定を手伝った。"),
    "O": ("@{person}: 短い返信を好む。", "@{project}: 設計はシンプルで良いと思う。"),
    "S": ("@{project}: 今週はデプロイが{small}回あった。",),
}

RU_SENTENCES: tuple[str, ...] = (
    "Созвон с {person} по {project}: решили изменить `{key}` на {value}.",
    "На сервере в {place_name} снова ошибка `{err}`; исправлено в коммите {hex}.",
    "Резервное копирование {project} заняло {num} секунд.",
    "Развертывание {project} перенесли на {date}.",
    "Встреча с {person} прошла хорошо, обсуждали бюджет на {num} евро.",
    "Вечером читал про {topic}; стоит попробовать в {project}.",
    "Диск на {place_name} заполнен на {pct}%, почистил старые журналы.",
)
RU_HEADINGS = ("Утро", "Работа", "Встречи", "Вечер", "Инциденты")
RU_RETAIN: dict[str, tuple[str, ...]] = {
    "W": ("@{person}: Сейчас в {place_name} до {date}.",),
    "B": ("@{project}: Исправил ошибку `{err}` в коммите {hex}.",),
    "O": ("@{person}: Предпочитает короткие ответы.",),
    "S": ("@{project}: На этой неделе было {small} развертываний.",),
}

DA_SENTENCES: tuple[str, ...] = (
    "Møde med {person} om {project}; vi blev enige om at sætte `{key}` til {value}.",
    "Udrulningen af {project} fejlede på {place_name} med `{err}`, så vi rullede tilbage "
    "til {hex}.",
    "Sikkerhedskopien af {project} tog {num} sekunder.",
    "Det regnede i {place_name}, så gåturen blev kort. Rødgrød med fløde til dessert.",
    "{person} foreslår at flytte serveren til {place_name} før {date}.",
    "Læste om {topic} i aften; værd at prøve på {project}.",
    "Svartiden faldt fra {n1} ms til {n2} ms efter ændringen af `{key}`.",
    "Købte smørrebrød til frokostmødet med {person} og {person2}.",
    "Diskforbruget på {place_name} er nu {pct}%, så jeg slettede gamle logfiler.",
)
DA_HEADINGS = ("Morgen", "Arbejde", "Møder", "Aften", "Opfølgning", "Hændelser")
DA_RETAIN: dict[str, tuple[str, ...]] = {
    "W": ("@{person}: Er i {place_name} indtil {date}.",
          "@{project}: `{key}` står som standard til {value}."),
    "B": ("@{project}: Rettede fejlen `{err}` i commit {hex}.",
          "@{person}: Hjalp {person_name} med at sætte {project} op på værkstedet."),
    "O": ("@{person}: Foretrækker korte svar på beskeder.",
          "@{project}: Løsningen er god nok for nu."),
    "S": ("@{project}: {small} udrulninger i denne uge.",),
}

ZH_SENTENCES: tuple[str, ...] = (
    "和{person}讨论了{project}的部署，决定把 `{key}` 改成{value}。",
    "{place_name}的服务器又出现错误 `{err}`，已在提交 {hex} 中修复。",
    "{project}的备份用了{num}秒。",
    "会议记录：计划在{date}之前发布新版本。",
    "晚上读了关于{topic}的文章，值得在{project}上试试。",
)
ZH_HEADINGS = ("上午", "工作记录", "会议", "晚上")
ZH_RETAIN: dict[str, tuple[str, ...]] = {
    "W": ("@{person}: 目前在{place_name}，直到{date}。",),
    "B": ("@{project}: 修复了 `{err}` 错误（提交 {hex}）。",),
    "O": ("@{person}: 喜欢简短的回复。",),
    "S": ("@{project}: 本周部署了{small}次。",),
}


@dataclass(frozen=True)
class Lang:
    code: str
    sentences: tuple[str, ...]
    headings: tuple[str, ...]
    retain: dict[str, tuple[str, ...]]
    people: tuple[str, ...]


LANGS: dict[str, Lang] = {
    "en": Lang("en", EN_SENTENCES, EN_HEADINGS, EN_RETAIN, ()),
    "ja": Lang("ja", JA_SENTENCES, JA_HEADINGS, JA_RETAIN, JA_PEOPLE),
    "ru": Lang("ru", RU_SENTENCES, RU_HEADINGS, RU_RETAIN, RU_PEOPLE),
    "da": Lang("da", DA_SENTENCES, DA_HEADINGS, DA_RETAIN, DA_PEOPLE),
    "zh": Lang("zh", ZH_SENTENCES, ZH_HEADINGS, ZH_RETAIN, ZH_PEOPLE),
}
# Share of notes per language (cumulative weights for bisect): ~78% en, 10% ja, 5% ru, 5% da,
# 2% zh.
LANG_CODES = ("en", "ja", "ru", "da", "zh")
LANG_CUM = (78, 88, 93, 98, 100)


def display(slug: str) -> str:
    """Human name of an entity slug (``The-Castle`` → ``The Castle``)."""
    return slug.replace("-", " ") if slug[:1].isupper() else slug


class Zipf:
    """Zipf-like sampler over a fixed, seed-shuffled ordering of items."""

    def __init__(self, items: list[str], s: float = 1.07) -> None:
        self.items = items
        self.cum = list(accumulate(1.0 / (rank + 1) ** s for rank in range(len(items))))

    def pick(self, rng: random.Random) -> str:
        return self.items[bisect(self.cum, rng.random() * self.cum[-1])]


@dataclass
class Vocab:
    """The seeded vocabulary: entity popularity, config keys, recurring hex ids."""

    people: Zipf
    projects: Zipf
    places: Zipf
    keys: Zipf
    hexes: Zipf
    errors: Zipf
    entities_by_rank: list[str]


def make_vocab(seed: int) -> Vocab:
    rng = random.Random(f"gitmem-synth-vocab-{seed}")
    people, projects, places = list(PEOPLE), list(PROJECTS), list(PLACES)
    for pool in (people, projects, places):
        rng.shuffle(pool)
    # Keep the canonical examples of the spec near the top so queries about them always hit.
    for pool, first in ((people, "Peter"), (projects, "warelay"), (places, "The-Castle")):
        pool.remove(first)
        pool.insert(0, first)
    keys = list(FIXED_KEYS)
    seen = set(keys)
    while len(keys) < 80:
        key = f"{rng.choice(KEY_HEADS)}.{rng.choice(KEY_MIDS)}.{rng.choice(KEY_TAILS)}"
        if key not in seen:
            seen.add(key)
            keys.append(key)
    hexes: list[str] = []
    while len(hexes) < 400:
        h = f"{rng.getrandbits(28):07x}"
        if h not in hexes and not h.isdigit():
            hexes.append(h)
    errors = list(ERRORS)
    rng.shuffle(errors)
    # Overall popularity ranking, interleaving the three categories by rank.
    ranked: list[str] = []
    for i in range(max(len(people), len(projects), len(places))):
        for pool in (people, projects, places):
            if i < len(pool):
                ranked.append(pool[i])
    return Vocab(
        people=Zipf(people), projects=Zipf(projects), places=Zipf(places),
        keys=Zipf(keys, 1.0), hexes=Zipf(hexes, 1.1), errors=Zipf(errors, 0.9),
        entities_by_rank=ranked,
    )


# --------------------------------------------------------------------------------------------
# Note writer
# --------------------------------------------------------------------------------------------


@dataclass
class OpinionEvidence:
    oid: str
    day: date
    path: str
    line: int
    confidence: float
    fact_id: str


@dataclass
class Opinion:
    oid: str
    subject: str
    statement: str
    confidence: float
    updated: date
    evidence: list[OpinionEvidence] = field(default_factory=list)


class _Writer:
    """Fills templates for one note."""

    def __init__(self, rng: random.Random, vocab: Vocab, day: date, lang: Lang) -> None:
        self.rng = rng
        self.vocab = vocab
        self.day = day
        self.lang = lang

    def person(self) -> str:
        if self.lang.people and self.rng.random() < 0.5:
            return self.rng.choice(self.lang.people)
        return self.vocab.people.pick(self.rng)

    def fill(self, template: str) -> str:
        return template.format_map(_Slots(self))

    def paragraph(self) -> str:
        n = self.rng.randint(2, 4)
        sep = "" if self.lang.code in ("ja", "zh") else " "
        return sep.join(self.fill(t) for t in self.rng.sample(self.lang.sentences, n))


def _ri(rng: random.Random, lo: int, hi: int) -> int:
    """Fast ``randint`` (inclusive)."""
    return lo + int(rng.random() * (hi - lo + 1))


def _pick(rng: random.Random, items: tuple[str, ...]) -> str:
    return items[int(rng.random() * len(items))]


_INT_SLOTS: dict[str, tuple[int, int]] = {
    "num": (12, 9999), "n1": (300, 2500), "n2": (40, 299), "n3": (20, 400),
    "small": (2, 40), "tiny": (0, 5), "pct": (40, 97), "pct2": (20, 60),
}
_CHOICE_SLOTS: dict[str, tuple[str, ...]] = {
    "cur": CURRENCIES, "vendor": VENDORS, "weather": WEATHER, "topic": TOPICS,
    "thing": THINGS, "reason": REASONS, "fix": FIXES, "cause": CAUSES, "pref": PREFS,
    "judgement": JUDGEMENTS, "value": VALUES,
}


class _Slots(dict[str, str]):
    """Template slots, drawn lazily (in template order) so unused slots cost nothing."""

    def __init__(self, writer: _Writer) -> None:
        super().__init__()
        self.w = writer

    def __missing__(self, name: str) -> str:
        value = self._draw(name)
        self[name] = value
        return value

    def _draw(self, name: str) -> str:
        w, rng, v = self.w, self.w.rng, self.w.vocab
        if name in _INT_SLOTS:
            return str(_ri(rng, *_INT_SLOTS[name]))
        if name in _CHOICE_SLOTS:
            return _pick(rng, _CHOICE_SLOTS[name])
        if name == "person":
            return w.person()
        if name == "person_name":
            return display(w.person())
        if name == "person2":
            return v.people.pick(rng)
        if name in ("project", "project2"):
            return v.projects.pick(rng)
        if name == "project_name":
            return self["project"]
        if name == "place":
            return v.places.pick(rng)
        if name == "place_name":
            return display(self["place"])
        if name == "key":
            return v.keys.pick(rng)
        if name == "err":
            return v.errors.pick(rng)
        if name == "hex":
            return v.hexes.pick(rng) if rng.random() < 0.7 else f"{rng.getrandbits(28):07x}"
        if name == "hex2":
            return f"{rng.getrandbits(28):07x}"
        if name == "amount":
            return f"{_ri(rng, 5, 900)}.{_ri(rng, 0, 99):02d}"
        if name == "version":
            return f"{_ri(rng, 0, 4)}.{_ri(rng, 0, 20)}.{_ri(rng, 0, 9)}"
        if name == "time":
            return f"{_ri(rng, 7, 23):02d}:{_ri(rng, 0, 59):02d}"
        if name == "date":
            return (w.day + timedelta(days=_ri(rng, -10, 40))).isoformat()
        if name == "date2":
            first = date.fromisoformat(self["date"])
            return (first + timedelta(days=_ri(rng, 1, 6))).isoformat()
        raise KeyError(name)


def _opinion_fact_id(subject: str, text: str, day: date) -> str:
    """The id gitmem's index gives ``- O(c=…) @subject: text`` in the daily note of ``day``."""
    subjects = tuple(find_entities(f" @{subject}"))
    mentions = tuple(e for e in find_entities(text) if e not in subjects)
    return fact_id(KIND_NAMES["O"], text, subjects + mentions, day)


def _confidence(rng: random.Random) -> float:
    return round(min(0.99, max(0.05, rng.gauss(0.7, 0.18))), 2)


def render_note(
    rng: random.Random, vocab: Vocab, day: date, opinions: list[Opinion]
) -> tuple[str, list[OpinionEvidence]]:
    """One daily note; returns the text and the opinion evidence it carries."""
    code = LANG_CODES[bisect(LANG_CUM, rng.random() * 100)]
    lang = LANGS[code]
    w = _Writer(rng, vocab, day, lang)
    wd = day.weekday()
    title = {
        "en": f"# {day.isoformat()} — {WEEKDAYS_EN[wd]}",
        "ja": f"# {day.year}年{day.month}月{day.day}日（{WEEKDAYS_JA[wd]}）",
        "ru": f"# {day.isoformat()}, {WEEKDAYS_RU[wd]}",
        "da": f"# {WEEKDAYS_DA[wd].capitalize()} {day.day}. {MONTHS_DA[day.month - 1]} {day.year}",
        "zh": f"# {day.year}年{day.month}月{day.day}日 星期{WEEKDAYS_ZH[wd]}",
    }[code]
    lines: list[str] = [title, ""]
    if rng.random() < 0.3:
        lines += [w.paragraph(), ""]
    for heading in rng.sample(lang.headings, rng.randint(2, 3)):
        lines += [f"## {heading}", ""]
        for _ in range(rng.randint(1, 2)):
            lines += [w.paragraph(), ""]
        roll = rng.random()
        if roll < 0.2:
            for _ in range(rng.randint(2, 4)):
                lines.append("- " + w.fill(rng.choice(lang.sentences)))
            lines.append("")
        elif roll < 0.27:
            key = vocab.keys.pick(rng)
            lines += ["```toml", f"# {key}", f"{key.rsplit('.', 1)[-1]} = {rng.randint(1, 9000)}",
                      "```", ""]
        elif roll < 0.35:
            lines += [f"### {rng.choice(lang.headings)}", "", w.paragraph(), ""]
    lines += ["## Retain"]
    evidence: list[OpinionEvidence] = []
    for _ in range(rng.randint(3, 8)):
        kind = rng.choices(("W", "B", "O", "S"), (35, 35, 20, 10))[0]
        if kind == "O" and code == "en" and opinions and rng.random() < 0.6:
            # Evidence for (or against) a tracked opinion.
            op = rng.choice(opinions)
            c = round(min(0.99, max(0.05, op.confidence + rng.gauss(0, 0.25))), 2)
            text = op.statement
            entry = f"- O(c={c:.2f}) @{op.subject}: {text}"
            lines.append(entry)
            path = f"memory/{day.isoformat()}.md"
            fid = _opinion_fact_id(op.subject, text, day)
            evidence.append(OpinionEvidence(op.oid, day, path, len(lines), c, fid))
            continue
        body = w.fill(rng.choice(lang.retain[kind]))
        stated = kind == "O" and rng.random() < 0.85
        prefix = f"O(c={_confidence(rng):.2f})" if stated else kind
        lines.append(f"- {prefix} {body}")
        if rng.random() < 0.12:
            lines.append("  " + w.fill(rng.choice(lang.sentences)))
    lines.append("")
    if rng.random() < 0.25:
        lines += ["## Links", "", f"- see memory/{(day - timedelta(days=rng.randint(1, 30)))}.md",
                  ""]
    return "\n".join(lines), evidence


# --------------------------------------------------------------------------------------------
# Stable pages
# --------------------------------------------------------------------------------------------


def make_opinions(rng: random.Random, vocab: Vocab, start: date) -> list[Opinion]:
    people = vocab.people.items[:8]
    projects = vocab.projects.items[:6]
    ops: list[Opinion] = []
    for i, pref in enumerate(PREFS):
        subject = people[i % len(people)]
        ops.append(Opinion("", subject, f"Prefers {pref}.", _confidence(rng), start))
    for i, judgement in enumerate(JUDGEMENTS[:6]):
        subject = projects[i % len(projects)]
        ops.append(Opinion("", subject, f"{subject} is {judgement}.", _confidence(rng), start))
    for op in ops:
        op.oid = "o-" + hashlib.sha1(f"{op.subject}\0{op.statement}".encode()).hexdigest()[:8]
    return ops


def render_opinions(ops: list[Opinion]) -> str:
    out = ["# Opinions", "",
           "Evolving beliefs, one section per opinion. Maintained by `gitmem reflect`;",
           "edit freely.", ""]
    for op in ops:
        out += [f"## @{op.subject} {op.statement[0].lower()}{op.statement[1:].rstrip('.')}",
                f"<!-- opinion: {op.oid} -->",
                f"- confidence: {op.confidence:.2f}",
                f"- updated: {op.updated.isoformat()}",
                "- evidence:"]
        for ev in op.evidence[-3:]:
            side = "for" if ev.confidence >= 0.5 else "against"
            out.append(f"  - {side} {ev.fact_id} {ev.path}#L{ev.line} (c={ev.confidence:.2f})")
        out.append("")
    return "\n".join(out)


def apply_evidence(op: Opinion, items: list[OpinionEvidence]) -> None:
    """docs/opinions-file.md rule: step 0.3 × (c_obs − c), total move capped at 0.15 × min(3, n)."""
    if not items:
        return
    start = op.confidence
    c = start
    for ev in items:
        c += 0.3 * (ev.confidence - c)
    cap = 0.15 * min(3, len(items))
    c = max(start - cap, min(start + cap, c))
    op.confidence = round(c, 2)
    op.updated = items[-1].day
    op.evidence.extend(items)


def render_memory(rng: random.Random, vocab: Vocab, decisions: list[str]) -> str:
    top_people = ", ".join(f"@{p}" for p in vocab.people.items[:6])
    top_projects = ", ".join(f"@{p}" for p in vocab.projects.items[:6])
    out = [
        "# MEMORY", "",
        "Curated, durable facts and decisions. Daily detail lives in `memory/`.", "",
        "## People", "", f"- Closest collaborators: {top_people}.",
        f"- @{vocab.people.items[0]} prefers concise replies; long content goes to a file.", "",
        "## Projects", "", f"- Active: {top_projects}.",
        f"- `{FIXED_KEYS[0]}` stays on for @{vocab.projects.items[0]}.", "",
        "## Decisions", "",
    ]
    out += [f"- {d}" for d in decisions]
    out.append("")
    return "\n".join(out)


def render_user(vocab: Vocab) -> str:
    return "\n".join([
        "# USER", "",
        f"- Name: {vocab.people.items[0]}. Based in Copenhagen; travels to Tokyo twice a year.",
        "- Languages: English, Danish (dansk), some Japanese (日本語).",
        "- Time zone: Europe/Copenhagen. Prefers meetings before 10:00.",
        "- Replies: concise; anything longer than 1500 chars goes to a file.",
        "- Tools: git, ripgrep, Markdown; no rich-text documents.", "",
    ])


def render_entity(slug: str, kind: str, rng: random.Random, vocab: Vocab) -> str:
    aliases = ALIASES.get(slug, ())
    front = ["---", f"title: {display(slug)}", f"type: {kind}"]
    if aliases:
        front.append("aliases: [" + ", ".join(f'"{a}"' for a in aliases) + "]")
    front.append("---")
    friend = vocab.people.pick(rng)
    project = vocab.projects.pick(rng)
    body = {
        "person": f"{display(slug)} works with @{friend} on @{project}. Prefers async updates.",
        "project": f"{slug} is a project maintained with @{friend}. Config lives under "
                   f"`{vocab.keys.items[rng.randrange(10)]}`.",
        "place": f"{display(slug)} is where the {rng.choice(THINGS)} runs. "
                 f"@{friend} knows the setup.",
    }[kind]
    return "\n".join([*front, "", f"# {display(slug)}", "", body, "",
                      "## Notes", "", f"- First noted while working on @{project}.", ""])


# --------------------------------------------------------------------------------------------
# Repository build
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    dest: Path
    days: int
    start: date
    end: date
    head: str
    seconds: float
    bytes_written: int


def build_stream(seed: int, days: int, end: date = END_DATE) -> FastImportStream:
    """The fast-import stream for ``days`` daily commits ending at ``end``."""
    vocab = make_vocab(seed)
    rng = random.Random(f"gitmem-synth-{seed}")
    start = end - timedelta(days=days - 1)
    opinions = make_opinions(rng, vocab, start)
    pending: dict[str, list[OpinionEvidence]] = {op.oid: [] for op in opinions}
    decisions: list[str] = [
        f"{start.isoformat()}: memory is kept in git; gitmem indexes it.",
    ]
    stream = FastImportStream(IDENTITY)
    for i in range(days):
        day = start + timedelta(days=i)
        files: list[tuple[str, str]] = []
        if i == 0:
            files.append(("USER.md", render_user(vocab)))
            kinds = {p: "person" for p in vocab.people.items}
            kinds.update({p: "project" for p in vocab.projects.items})
            kinds.update({p: "place" for p in vocab.places.items})
            for slug in vocab.entities_by_rank[:30]:
                files.append(
                    (f"bank/entities/{slug}.md", render_entity(slug, kinds[slug], rng, vocab))
                )
        text, evidence = render_note(rng, vocab, day, opinions)
        files.append((f"memory/{day.isoformat()}.md", text))
        for ev in evidence:
            pending[ev.oid].append(ev)
        if i == 0 or i % 14 == 13:
            if i:
                who = vocab.people.pick(rng)
                what = vocab.projects.pick(rng)
                key = vocab.keys.pick(rng)
                decisions.append(
                    f"{day.isoformat()}: with @{who}, decided to keep `{key}` "
                    f"{rng.choice(('on', 'off', 'at its default'))} for @{what}."
                )
            files.append(("MEMORY.md", render_memory(rng, vocab, decisions)))
        if i == 0 or i % 30 == 29 or i == days - 1:
            for op in opinions:
                apply_evidence(op, pending[op.oid])
                pending[op.oid] = []
            files.append(("bank/opinions.md", render_opinions(opinions)))
        when = datetime(day.year, day.month, day.day, 20, tzinfo=UTC) + timedelta(
            minutes=rng.randrange(180)
        )
        stream.commit(when, f"memory: {day.isoformat()}\n", files)
    return stream


def generate(
    dest: str | os.PathLike[str],
    years: int | None = None,
    *,
    days: int | None = None,
    seed: int = DEFAULT_SEED,
    end: date = END_DATE,
) -> Result:
    """Create a fresh repository at ``dest`` (must not exist or be empty)."""
    t0 = time.perf_counter()
    if days is None:
        days = 365 * (years if years is not None else 1)
    if days < 1:
        raise ValueError("days must be at least 1")
    target = Path(dest)
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} exists and is not empty")
    target.mkdir(parents=True, exist_ok=True)
    stream = build_stream(seed, days, end)
    head = import_history(target, stream)
    return Result(target, days, end - timedelta(days=days - 1), end, head,
                  time.perf_counter() - t0, stream.payload_bytes)


# --------------------------------------------------------------------------------------------
# Queries
# --------------------------------------------------------------------------------------------


def queries(seed: int = DEFAULT_SEED) -> list[str]:
    """50 varied recall queries over the vocabulary of ``generate(seed=seed)``."""
    v = make_vocab(seed)
    people, projects, places = v.people.items, v.projects.items, v.places.items
    keys, hexes, errors = v.keys.items, v.hexes.items, v.errors.items
    out: list[str] = [
        # single words (8)
        "gateway", "backup", "latency", "certificate", "invoice", "rollback", "birthday",
        "sourdough",
        # entity names (8)
        people[0], projects[0], places[0], f"@{people[1]}", projects[1], display(places[1]),
        people[2], projects[2],
        # hex ids (5)
        hexes[0], hexes[1], hexes[2], hexes[4], hexes[7],
        # dotted config keys (6)
        keys[0], keys[1], keys[2], keys[3], keys[5], keys[8],
        # quoted error strings (5)
        f'"{errors[0]}"', f'"{errors[1]}"', '"database is locked"', '"WS closed with code 1006"',
        '"connection reset by peer"',
        # Japanese (5), Danish with diacritics (4), Russian (2), Chinese (2)
        "障害", "打ち合わせ", "デプロイ", "バックアップ", "誕生日",
        "møde", "sikkerhedskopien", "gåturen", "smørrebrød",
        "развертывание", "ошибка",
        "部署", "备份",
        # natural questions (5)
        "what did we decide about the gateway host?",
        f"when was {display(people[0])} in {display(places[3])}?",
        f"why does {projects[0]} keep failing with {errors[2]}",
        "which deploy did we roll back last month",
        f"what does {display(people[1])} prefer for replies",
    ]
    assert len(out) == 50, len(out)
    return out


QUERIES: list[str] = queries()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("dest", help="new directory for the workspace (must not exist or be empty)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--years", type=int, default=None, help="years of daily notes (default 1)")
    group.add_argument("--days", type=int, default=None, help="days of daily notes")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--end", type=date.fromisoformat, default=END_DATE,
                    help="date of the last note (default 2026-11-29)")
    args = ap.parse_args(argv)
    try:
        res = generate(args.dest, args.years, days=args.days, seed=args.seed, end=args.end)
    except (FileExistsError, GitFailed, ValueError) as exc:
        print(f"synth: {exc}", file=sys.stderr)
        return 1
    print(
        f"{res.dest}: {res.days} commits {res.start}..{res.end}, HEAD {res.head[:12]}, "
        f"{res.bytes_written / 1e6:.1f} MB written in {res.seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
