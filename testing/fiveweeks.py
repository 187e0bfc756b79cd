"""Five weeks of a new user's ordinary notes (issue 38), with the checks "what is true now" must
pass on them: September and October 2026 on a platform team with people in Copenhagen, Moscow
and Tokyo, so the notes are in English, Danish, Russian and Japanese, often in one file.

What happens in the five weeks: people move (Roman from Moscow to Yerevan, said in Russian;
Aiko from Paris to Copenhagen; Elena to Belgrade), a team moves office (Søren's, to Islands
Brygge), birthdays are noted, duties change hands (the release checklist, from Lucía to Jonah,
said in a standup list), a device is replaced (the office wifi, written as a ``B`` entry), CI
moves (a note line), standup moves (a note line), a friend says he moved (a chat turn), a work
phone number changes while the personal one stays, and several values coexist (languages,
pets, two phones). Written the way people write: prose, standup lists, ``## Retain`` sections,
chat-like lines.

The rule's authors may read this workspace; it serves as a check set (``CHECKS``), run by
``python -m bench.bench_fiveweeks``. A check names statements by a fragment of their line,
unique in the workspace:

- a recall check asks ``ask`` and wants ``top`` among the first 3 results and above every
  result showing a statement of ``below``; ``marked``: (older, newer) pairs whose older one,
  wherever shown, carries ``superseded_by`` citing the newer one; ``unmarked``: statements
  that, wherever shown, carry no ``superseded_by`` (a ``newer`` hint is allowed: it never
  demotes);
- an entity check (``ask`` = ``entity NAME``) wants ``current`` statements among the entity's
  current facts, ``was`` (older, newer) pairs with the older one shown replaced by the newer
  one ("was ... until": in its history, or listed as replaced by it), and ``not_current``
  statements absent from the current facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from testing.repo import notes_history

MEMORY = """# Memory

## Work
- I joined the platform team in Copenhagen on 2026-09-07.
- The team: Søren (ingest tech lead), Lucía, Jonah, Aiko; Roman and Elena in Moscow;
  佐藤さん and Hiroshi in Tokyo.
"""

ROMAN_PAGE = """---
aliases: [Роман]
---
# Roman

SRE in the Moscow group. Prefers calls before lunch, Moscow time.
"""

DAYS: dict[str, str] = {
    "2026-09-07": """# 2026-09-07

First day on the platform team. Onboarding with Lucía, she walked me through the release
process end to end. Laptop arrived at 11, VPN works.

## Standup
- Lucía: release 4.12 prep, checklist updated
- Roman: on-call handover, pager rota for September
- Søren: flaky CI on the ingest repo

## Retain
- W @Lucía: Lucía owns the release checklist.
- W @Roman: Roman runs the on-call rota for the platform team.
- W @Roman: Roman lives in Moscow and works Moscow hours (UTC+3).
- W @wifi: The office wifi is one Fritz!Box 7590 in the server cupboard.
- W @standup: Standup is at 9:30 in the Fjord room, Meet link in the invite.
""",
    "2026-09-08": """# 2026-09-08

Søren viste mig ingest-pipelinen. Kaffen på 3. sal er den bedste.

## Retain
- W @Søren: Søren bor i Valby med sin kone og to børn.
- W @Søren: Søren er tech lead på ingest.
- O(c=0.7) @Søren: Foretrækker korte PR'er, under 300 linjer.
""",
    "2026-09-09": """# 2026-09-09

Call with the Tokyo office about the gateway. 佐藤さん runs the gateway team there, Hiroshi
does the ops side. Good call, they want weekly syncs.

## Retain
- W @佐藤: 佐藤さんは東京オフィスのゲートウェイチームのリーダー。
- W @佐藤: 佐藤さんの誕生日は10月14日。
- W @Hiroshi: Hiroshi lives in Yokohama and comes into the Tokyo office two days a week.
""",
    "2026-09-10": """# 2026-09-10

Aiko joined today, from the Paris office. Lunch with her and Jonah.

## Retain
- W @Aiko: Aiko speaks French; she lived in Lyon for six years.
- W @Aiko: Aiko is on the search team, relevance evals.
- W @Kwabena: Kwabena's work phone is +45 33 12 34 56.
""",
    "2026-09-11": """# 2026-09-11

Созвон с Еленой по релизам, полчаса. Договорились о чек-листе для ревью.

## Retain
- W @Elena: Елена отвечает за ревью релизов в московской группе.
- O(c=0.6) @Roman: Роман предпочитает созвоны до обеда.
""",
    "2026-09-14": """# 2026-09-14

## Standup
- Jonah: picking up release tooling
- Aiko: search relevance eval, first numbers Thursday
- me: reading the ingest code

Mette brought her dog to the office, everyone loved it.

## Retain
- W @Mette: Mette has a border collie called Sky.
- W @ci: CI runs on the Jenkins box in the basement.
""",
    "2026-09-15": """# 2026-09-15

Ringede til Ole om weekendturen.

## Retain
- W @Ole: Ole bor i Odense og arbejder på OUH.
""",
    "2026-09-16": """# 2026-09-16

Ingest-planlægning. Søren fortalte om flytningen.

## Retain
- W @Søren: Sørens team flytter til kontoret på Islands Brygge 1. oktober.
- W @ingest: Ingest-køen er Redpanda, 3 brokers.
""",
    "2026-09-17": """# 2026-09-17

## Notes
- Standup moves to 9:45 from Monday, so Tokyo can join before they log off.
- Retro was good, we agreed to fewer meetings.
- CI flakes again on the ingest repo, Søren is on it.
""",
    "2026-09-18": """# 2026-09-18

東京とのゲートウェイ定例。

## Retain
- W @Hiroshi: Hiroshiさんのご両親が福岡に引っ越した。
- W @佐藤: 佐藤さんは10月から大阪オフィスに異動。
""",
    "2026-09-21": """# 2026-09-21

Quiet Monday.

## Retain
- W @Mette: Mette adopted a cat too, a grey one called Fog.
- W @Kwabena: Kwabena's personal mobile is +45 28 55 66 77, texts only.
- W @Aiko: Aiko is learning Danish, evening class on Tuesdays.
""",
    "2026-09-22": """# 2026-09-22

Роман написал в чат, что переехал.

## Retain
- W @Roman: Роман переехал в Ереван, работает оттуда удалённо.
""",
    "2026-09-23": """# 2026-09-23

Spent the afternoon on the office network with Kwabena.

## Retain
- B @wifi: Replaced the Fritz!Box with three UniFi U6 access points; the back rooms have signal now.
""",
    "2026-09-24": """# 2026-09-24

## Standup
- Jonah: took over the release checklist from Lucía, she is on the payments migration now
- Aiko: eval numbers are in, recall@10 up 4 points
- Roman: ротация дежурств на октябрь готова

## Retain
- B: Paired with Jonah on the release tooling.
""",
    "2026-09-25": """# 2026-09-25

Switched CI from Jenkins to GitHub Actions runners; the basement box is switched off.
Builds are two minutes faster.
""",
    "2026-09-28": """# 2026-09-28

Første dag på Islands Brygge for ingest-teamet. Flot udsigt, dårlig kaffe.

## Retain
- W @Søren: Søren cykler 25 minutter hver vej til Islands Brygge.
""",
    "2026-09-29": """# 2026-09-29

## Retain
- W @Elena: Elena moved to Belgrade with her family.
- W @Mette: Mette's birthday is 2 November.
""",
    "2026-10-01": """# 2026-10-01

## Snak med Ole
- Ole: vi er flyttet til Aarhus i weekenden, endelig!
- mig: tillykke! Hvor i byen?
- Ole: Trøjborg, tæt på stranden. Jobbet på AUH starter mandag.
""",
    "2026-10-02": """# 2026-10-02

Release 4.13 went out. Jonah ran it with the new checklist, smooth.

## Retain
- B @release: Shipped release 4.13 with Jonah.
""",
    "2026-10-05": """# 2026-10-05

## Retain
- W @Aiko: Aiko moved to the Copenhagen office from Paris for good.
""",
    "2026-10-06": """# 2026-10-06

## Retain
- W @Mette: Mette is going part-time from November, Monday to Thursday.
""",
    "2026-10-07": """# 2026-10-07

佐藤さん、今日から大阪。送別会は先週の金曜日だった。
""",
    "2026-10-08": """# 2026-10-08

- Kwabena switched his work phone to the new +45 33 98 76 54 number; the old 33 12 one is gone.
- Hiroshi sent the gateway runbook.
""",
    "2026-10-09": """# 2026-10-09

Five weeks in. Wrote down what I know about the team in MEMORY.md.
""",
}

NOW = "2026-10-10T12:00:00+00:00"


@dataclass(frozen=True)
class Check:
    """What one question or ``entity NAME`` must answer (statements named by a fragment)."""

    name: str
    ask: str
    top: str | None = None
    below: tuple[str, ...] = ()
    marked: tuple[tuple[str, str], ...] = ()
    unmarked: tuple[str, ...] = ()
    current: tuple[str, ...] = ()
    was: tuple[tuple[str, str], ...] = ()
    not_current: tuple[str, ...] = ()

    @property
    def entity(self) -> str | None:
        return self.ask.removeprefix("entity ") if self.ask.startswith("entity ") else None


ROMAN_MOSCOW = "Roman lives in Moscow"
ROMAN_YEREVAN = "Роман переехал в Ереван"
ROMAN_ROTA = "Roman runs the on-call rota"
SOREN_VALBY = "Søren bor i Valby"
SOREN_TEAM = "Sørens team flytter"
SATO_BDAY = "佐藤さんの誕生日は10月14日"
SATO_OSAKA = "佐藤さんは10月から大阪オフィスに異動"
HIROSHI_HOME = "Hiroshi lives in Yokohama"
HIROSHI_PARENTS = "Hiroshiさんのご両親が福岡"
LUCIA_CHECKLIST = "Lucía owns the release checklist"
JONAH_CHECKLIST = "Jonah: took over the release checklist"
WIFI_OLD = "The office wifi is one Fritz!Box"
WIFI_NEW = "Replaced the Fritz!Box with three UniFi"
AIKO_FRENCH = "Aiko speaks French"
AIKO_DANISH = "Aiko is learning Danish"
AIKO_SEARCH = "Aiko is on the search team"
AIKO_MOVE = "Aiko moved to the Copenhagen office"
METTE_DOG = "Mette has a border collie"
METTE_CAT = "Mette adopted a cat too"
METTE_BDAY = "Mette's birthday is 2 November"
METTE_PART = "Mette is going part-time"
KWABENA_WORK_OLD = "Kwabena's work phone is +45 33 12 34 56"
KWABENA_WORK_NEW = "Kwabena switched his work phone"
KWABENA_PERSONAL = "Kwabena's personal mobile"
STANDUP_OLD = "Standup is at 9:30"
STANDUP_NEW = "Standup moves to 9:45"
CI_OLD = "CI runs on the Jenkins box"
CI_NEW = "Switched CI from Jenkins to GitHub Actions"
OLE_ODENSE = "Ole bor i Odense"
OLE_AARHUS = "Ole: vi er flyttet til Aarhus"
ELENA_DUTY = "Елена отвечает за ревью релизов"
ELENA_MOVE = "Elena moved to Belgrade"

CHECKS: tuple[Check, ...] = (
    # a move ends the old home, not the duties; said in another language
    Check("roman-home", "where does Roman live now?", top=ROMAN_YEREVAN, below=(ROMAN_MOSCOW,),
          marked=((ROMAN_MOSCOW, ROMAN_YEREVAN),)),
    Check("roman-rota", "who runs the on-call rota?", top=ROMAN_ROTA, unmarked=(ROMAN_ROTA,)),
    Check("roman-entity", "entity Roman", current=(ROMAN_ROTA, ROMAN_YEREVAN),
          was=((ROMAN_MOSCOW, ROMAN_YEREVAN),)),
    # a team's office move is not where its lead lives
    Check("soren-home", "hvor bor Søren?", top=SOREN_VALBY, unmarked=(SOREN_VALBY,)),
    Check("soren-team", "hvor flytter Sørens team hen?", top=SOREN_TEAM,
          unmarked=(SOREN_VALBY, SOREN_TEAM)),
    Check("soren-entity", "entity Søren", current=(SOREN_VALBY, "Søren er tech lead")),
    # a birthday is never replaced by later news
    Check("sato-birthday", "佐藤さんの誕生日はいつ？", top=SATO_BDAY, unmarked=(SATO_BDAY,)),
    Check("sato-transfer", "佐藤さんはどこに異動する？", top=SATO_OSAKA,
          unmarked=(SATO_BDAY, SATO_OSAKA)),
    Check("sato-entity", "entity 佐藤", current=(SATO_BDAY, SATO_OSAKA)),
    # his parents' move is not his
    Check("hiroshi-home", "where does Hiroshi live?", top=HIROSHI_HOME,
          unmarked=(HIROSHI_HOME,)),
    Check("hiroshi-parents", "where do Hiroshi's parents live?", top=HIROSHI_PARENTS,
          unmarked=(HIROSHI_HOME,)),
    Check("hiroshi-entity", "entity Hiroshi", current=(HIROSHI_HOME, HIROSHI_PARENTS)),
    # a duty changes hands, said in a standup list
    Check("checklist", "who owns the release checklist?", top=JONAH_CHECKLIST,
          below=(LUCIA_CHECKLIST,), marked=((LUCIA_CHECKLIST, JONAH_CHECKLIST),)),
    Check("lucia-entity", "entity Lucía", not_current=(LUCIA_CHECKLIST,)),
    # a device replaced, written as experience
    Check("wifi", "what does the office wifi run on?", top=WIFI_NEW, below=(WIFI_OLD,),
          marked=((WIFI_OLD, WIFI_NEW),)),
    Check("wifi-entity", "entity wifi", current=(WIFI_NEW,), was=((WIFI_OLD, WIFI_NEW),)),
    # values that coexist, and a move that ends none of them
    Check("aiko-languages", "what languages does Aiko speak?",
          unmarked=(AIKO_FRENCH, AIKO_DANISH)),
    Check("aiko-entity", "entity Aiko", current=(AIKO_FRENCH, AIKO_DANISH, AIKO_SEARCH,
                                                 AIKO_MOVE)),
    Check("mette-pets", "what pets does Mette have?", unmarked=(METTE_DOG, METTE_CAT)),
    Check("mette-birthday", "when is Mette's birthday?", top=METTE_BDAY,
          unmarked=(METTE_BDAY,)),
    Check("mette-entity", "entity Mette", current=(METTE_DOG, METTE_CAT, METTE_BDAY,
                                                   METTE_PART)),
    # two phones: the work number changes, the personal one stays
    Check("kwabena-work", "what is Kwabena's work phone number?", top=KWABENA_WORK_NEW,
          below=(KWABENA_WORK_OLD,), marked=((KWABENA_WORK_OLD, KWABENA_WORK_NEW),),
          unmarked=(KWABENA_PERSONAL,)),
    Check("kwabena-personal", "what is Kwabena's personal mobile?", top=KWABENA_PERSONAL,
          unmarked=(KWABENA_PERSONAL,)),
    Check("kwabena-entity", "entity Kwabena", current=(KWABENA_PERSONAL,),
          not_current=(KWABENA_WORK_OLD,)),
    # changes stated in plain note lines and a chat turn
    Check("standup", "what time is standup?", top=STANDUP_NEW, below=(STANDUP_OLD,),
          marked=((STANDUP_OLD, STANDUP_NEW),)),
    Check("ci", "what does CI run on?", top=CI_NEW, below=(CI_OLD,), marked=((CI_OLD, CI_NEW),)),
    Check("ole-home", "hvor bor Ole?", top=OLE_AARHUS, below=(OLE_ODENSE,),
          marked=((OLE_ODENSE, OLE_AARHUS),)),
    # a Russian duty and a later English move: both true
    Check("elena-duty", "кто отвечает за ревью релизов?", top=ELENA_DUTY,
          unmarked=(ELENA_DUTY,)),
    Check("elena-move", "where did Elena move?", top=ELENA_MOVE, unmarked=(ELENA_DUTY,)),
    Check("elena-entity", "entity Elena", current=(ELENA_DUTY, ELENA_MOVE)),
)


def build(parent: Path, name: str = "five-weeks") -> Path:
    """The repository: a first commit with MEMORY.md and Roman's page, then one per day."""
    return notes_history(parent, name, {"MEMORY.md": MEMORY, "bank/entities/Roman.md": ROMAN_PAGE},
                         "2026-09-06T20:00:00+00:00", DAYS)


def locate(fragment: str) -> tuple[str, int]:
    """The one line of the workspace's notes holding ``fragment``: (path, 1-based line)."""
    found = [(f"memory/{day}.md", n) for day, text in DAYS.items()
             for n, line in enumerate(text.split("\n"), 1) if fragment in line]
    if len(found) != 1:
        raise ValueError(f"{fragment!r} is on {len(found)} lines of the five weeks, want 1")
    return found[0]
