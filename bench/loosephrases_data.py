"""Questions whose date phrase is said loosely ("the other day", "a fortnight ago", 先日, forleden).

Written without looking at how gitmem reads these phrases (or whether it does). Eight weeks of
one person's daily notes (``memory/YYYY-MM-DD.md``, first-person ``## Log`` lines, a few
``## Retain`` entries), dated back from ``NOW`` (a Friday), as in ``bench/reldates_data.py``,
whose background lines (filler, routine) are reused here minus those on a question's topic.

Each ``Case`` asks about one line (``answer``) with a loose phrase. ``MEANT`` gives, per phrase,
the days back a person would mean by it (a judgement of how people talk, not of any code): the
answer lies inside that span and the ``distractor`` (a line on the same topic that matches the
question's words about as well or better) lies where a person would NOT mean it: too recent
(yesterday, for "the other day") or weeks away, or last week for "earlier this week". Some
answers sit near the edge of their span. Questions in other languages have their answer and
distractor written in that language.

A line is ``Line(days_back, text)``: ``text`` is unique in the notes and is found on the note of
``NOW - days_back``; a text starting with a Retain kind (``B:``, ``W @X:``) is written under
``## Retain``.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.reldates_data import DAYS, FILLER, MORE, NOW, Line, daily_notes

__all__ = ["CASES", "DAYS", "MEANT", "NOW", "Case", "Line", "check", "notes"]

# The days back (first, last; NOW is a Friday) a person means by each phrase.
MEANT: dict[str, tuple[int, int]] = {
    "the other day": (2, 10),
    "several days ago": (3, 7),
    "a fortnight ago": (11, 17),
    "a week and a half ago": (9, 12),
    "earlier this week": (1, 4),  # Monday .. Thursday of this week
    "earlier this month": (1, 19),  # June 1 .. yesterday
    "先日": (2, 14),
    "数日前": (2, 7),
    "前几天": (2, 7),
    "几天前": (2, 7),
    "forleden": (2, 14),
    "for flere dage siden": (3, 8),
    "несколько дней назад": (3, 7),
    "며칠 전": (2, 7),
}


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    phrase: str  # a key of MEANT, as written in the question
    question: str
    answer: Line
    distractor: Line


L = Line
CASES: list[Case] = [
    # -- English
    Case("E1", "en", "the other day", "Who did I bump into at the supermarket the other day?",
         L(5, "Ran into my old colleague Henrik at the supermarket; he's back from Oslo."),
         L(1, "Bumped into our neighbour Grethe at the supermarket, she asked about the hedge.")),
    Case("E2", "en", "the other day", "What did the electrician say the other day?",
         L(10, "Electrician checked the fuse box: the kitchen circuit needs its own "
               "breaker, about 2,500 kr."),
         L(33, "The electrician said the outdoor socket should be replaced before winter.")),
    Case("E3", "en", "several days ago", "What did I order online several days ago?",
         L(5, "Got Sofie a rain jacket from Zalando, size 134, arrives Tuesday."),
         L(1, "Ordered online: a new phone charger and a spare USB-C cable.")),
    Case("E4", "en", "several days ago",
         "What did I find out about our train tickets several days ago?",
         L(7, "DSB moved our Copenhagen train to 7:12; the seat reservations still hold."),
         L(26, "Bought our train tickets for the summer trip to Hamburg, 1,460 kr.")),
    Case("E5", "en", "a fortnight ago", "What did we celebrate a fortnight ago?",
         L(14, "Tenth wedding anniversary: tasting menu at Frederikshøj, just the two of us."),
         L(2, "Celebrated Sofie's good report card with ice cream at the harbour.")),
    Case("E6", "en", "a fortnight ago",
         "Which plants did I buy at the garden centre a fortnight ago?",
         L(16, "Bought three lavender bushes and a climbing rose at the garden centre."),
         L(38, "Bought plants at the garden centre: basil, mint and two hydrangeas.")),
    Case("E7", "en", "a week and a half ago", "What did I present at work a week and a half ago?",
         L(10, "Demoed the new invoice export to the sales team; they want CSV as well."),
         L(3, "Presented the Q2 roadmap at work to the whole department.")),
    Case("E8", "en", "a week and a half ago",
         "Where did we have dinner a week and a half ago?",
         L(12, "Dinner at Restaurant Hærværk with Mette: seven courses, the best skate I've had."),
         L(25, "Had dinner at the Hansens' place, they made paella.")),
    Case("E9", "en", "earlier this week", "What did the dentist say earlier this week?",
         L(4, "Dentist check-up: one small cavity in a lower molar; filling booked for July 2."),
         L(8, "Took Emil to the dentist, the dentist says he needs to brush longer.")),
    Case("E10", "en", "earlier this week", "Which book did I finish earlier this week?",
         L(2, "Stayed up to the last page of 'Klara and the Sun'; the ending got me."),
         L(9, "Finished reading the book about the Vikings that Dad lent me.")),
    Case("E11", "en", "earlier this month", "How much was the car service earlier this month?",
         L(17, "B: Toyota dealer did the yearly service: brake fluid and filters, 3,350 kr."),
         L(24, "The car service cost 2,900 kr, they also rotated the tyres.")),
    Case("E12", "en", "earlier this month", "What did I sign up for earlier this month?",
         L(12, "Registered for the Aarhus half marathon in September."),
         L(40, "Signed up for the evening pottery course at the community centre.")),
    # -- other languages
    Case("J1", "ja", "先日", "先日、図書館で何を借りた？",
         L(8, "図書館で村上春樹の『街とその不確かな壁』を借りた。"),
         L(44, "図書館で料理の本を二冊借りた。")),
    Case("J2", "ja", "数日前", "数日前に病院で何と言われた？",
         L(4, "病院で検査結果を聞いた。コレステロールが少し高いので、"
              "食事に気をつけるようにとのこと。"),
         L(1, "病院で薬をもらった。先生にもっと睡眠を取るように言われた。")),
    Case("C1", "zh", "前几天", "前几天我和谁一起吃了午饭？",
         L(3, "和老同学王磊吃了午饭，他刚从上海搬回来。"),
         L(20, "和表妹一起吃了午饭，她在准备考研。")),
    Case("C2", "zh", "几天前", "几天前孩子们在公园做了什么？",
         L(6, "带孩子们去公园放风筝，风很大，风筝挂到树上了。"),
         L(29, "孩子们在公园里骑自行车，玩了一个下午。")),
    Case("D1", "da", "forleden", "Hvad snakkede jeg med naboen om forleden?",
         L(9, "Snakkede med naboen Bent over hækken; han vil fælde birketræet i august."),
         L(31, "Naboen kom forbi og snakkede om støjen fra festen i weekenden.")),
    Case("D2", "da", "for flere dage siden", "Hvad bestilte jeg til haven for flere dage siden?",
         L(6, "Ny plæneklipper til haven bestilt hos Bauhaus, den leveres på fredag."),
         L(2, "Bestilte frø og gødning til haven på nettet.")),
    Case("R1", "ru", "несколько дней назад", "Что я подарил маме несколько дней назад?",
         L(3, "Подарил маме новый шарф и билеты в театр на её день рождения."),
         L(21, "Подарил маме цветы и коробку конфет, когда заезжал к ней.")),
    Case("K1", "ko", "며칠 전", "며칠 전에 회사에서 무슨 문제가 있었어?",
         L(7, "회사 서버가 두 시간 동안 다운돼서 고객 문의가 쏟아졌다."),
         L(30, "회사에서 배포 문제가 생겨서 밤늦게까지 남아 있었다.")),
]

# Background lines of reldates_data on a question's topic, left out here.
_ON_TOPIC = {
    "Signed Emil up for summer football camp.",  # E12: signing up
    "Phone screen cracked, ordered a protector.",  # E3: ordering online
    "Ordered printer ink.",
    "Ordered school shoes for Emil, size 34.",
    "Ordered a birthday card for Grandpa.",
    "Got the summer tyres put back on the car.",  # E11: the car's service
    "Mette got her promotion confirmed, we opened a bottle of cava.",  # E5: celebrating
}

# Days back without a note (a day holding a question's line keeps its note).
SKIPPED = {53, 50, 47, 43, 39, 36, 35, 32, 28, 27, 23, 19, 15, 11}


def check() -> list[str]:
    """What is wrong with the set as written (nothing: it is as described)."""
    wrong: list[str] = []
    for c in CASES:
        first, last = MEANT[c.phrase]
        if c.phrase not in c.question:
            wrong.append(f"{c.id}: {c.phrase!r} not in the question")
        if not first <= c.answer.days_back <= last:
            wrong.append(f"{c.id}: answer {c.answer.days_back} days back, not in {first}..{last}")
        if first <= c.distractor.days_back <= last:
            wrong.append(f"{c.id}: distractor {c.distractor.days_back} days back, inside "
                         f"{first}..{last}")
        for line in (c.answer, c.distractor):
            if not 1 <= line.days_back <= DAYS:
                wrong.append(f"{c.id}: {line.days_back} days back has no note")
    missing = set(MEANT) - {c.phrase for c in CASES}
    if missing:
        wrong.append(f"phrases without a question: {sorted(missing)}")
    return wrong


def notes() -> dict[str, str]:
    """Path -> text of each daily note, deterministic."""
    lines = [line for c in CASES for line in (c.answer, c.distractor)]
    return daily_notes(lines, SKIPPED, [t for t in FILLER + MORE if t not in _ON_TOPIC],
                       step=5, retain_at=5)
