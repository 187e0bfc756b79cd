"""HELD-OUT chat-log check set (issue 38): whoever writes or tunes the update rule runs it
(``python -m bench.bench_fiveweeks``) but does not read it.

Dated notes that log conversations with an assistant, the way LongMemEval's sessions look:
each day a ``## Conversation`` section of turns, ``- user: ...``, ``- assistant: ...`` or a
named speaker (``- Tomasz: ...``). Every question is a knowledge update: a later turn changes
what an earlier one said, and the later turn must come first (among the first 3 results and
above the earlier one). In English, Japanese, Russian and Danish, with turns about other things
around them.
"""

from __future__ import annotations

from pathlib import Path

from testing.repo import notes_history

# (day, turns): one session per day
SESSIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("2026-03-02", (
        "user: can you help me plan a birthday dinner for my sister?",
        "assistant: Sure. Where does she live, and what does she like?",
        "user: my sister Maya lives in Portland, she works at a bakery",
        "assistant: Then somewhere that isn't bread-heavy might be a nice change.",
        "user: ha, true. she loves Thai food",
    )),
    ("2026-03-04", (
        "user: 最近仕事が忙しい",
        "assistant: 大変ですね。どんな仕事ですか？",
        "user: 上司は田村さん、厳しいけど公平",
        "user: うちの猫にはロイヤルカナンをあげてる、最近食べムラがある",
        "assistant: 食べムラは季節のせいかもしれません。",
    )),
    ("2026-03-05", (
        "user: what should I check before a long drive?",
        "user: I drive a 2015 Golf, it's been reliable",
        "assistant: Tyres, oil, coolant and wiper fluid. A Golf that age may want new brake pads.",
        "user: my dentist is Dr. Lowe on King Street, I should book a check-up too",
    )),
    ("2026-03-07", (
        "user: помоги составить расписание на неделю",
        "user: муж Павел работает в банке, в ИТ-отделе, приходит поздно",
        "user: у Маши бассейн по вторникам в 17:00",
        "assistant: Тогда вторник после обеда держим свободным.",
        "user: и ещё у меня тариф МТС за 650 в месяц, это дорого?",
        "assistant: Для безлимита — средне. Можно сравнить с другими операторами.",
    )),
    ("2026-03-09", (
        "user: jeg skal have styr på min uge",
        "user: badminton mandag kl. 19 i hallen",
        "user: min søn Oliver bor på kollegium i Odense, han kommer hjem hver anden weekend",
        "assistant: Skal jeg lægge hans weekender ind?",
        "user: ja tak. og jeg har min løn i Nordea, husk at huslejen går fra der",
    )),
    ("2026-03-12", (
        "user: I want to get fitter this spring",
        "user: I go to the gym Mon/Wed/Fri at 7am",
        "assistant: That's a solid base. Want a plan for the days in between?",
        "Tomasz: hi, it's Tomasz, using my brother's account. we're in Kraków, near the old town",
        "assistant: Hi Tomasz! Noted.",
    )),
    ("2026-03-15", (
        "user: 英会話は毎週土曜の朝10時、駅前の教室",
        "assistant: 週末の朝、いいですね。",
        "user: 来月は出張が多いかも",
    )),
    ("2026-03-18", (
        "Birthe: hej, det er Birthe. vi bor i Silkeborg, ude ved søerne",
        "assistant: Hej Birthe. Hvad kan jeg hjælpe med?",
        "Birthe: en opskrift på æblekage",
    )),
    ("2026-04-06", (
        "user: 4月から上司が大西さんに変わった、まだ慣れない",
        "assistant: 新しい上司とは最初の一か月が大事ですね。",
        "user: 猫の餌、ヒルズに切り替えたよ。お腹の調子が良くなった",
    )),
    ("2026-04-10", (
        "user: update on family stuff",
        "user: Maya finally moved to Seattle last weekend, closer to her boyfriend",
        "assistant: That's a big step! Is she still baking?",
        "user: yes, she found a job at a café in Fremont",
    )),
    ("2026-04-14", (
        "user: Павел ушёл из банка, теперь в стартапе по доставке",
        "assistant: Смелый шаг! Как ему там?",
        "user: нравится, но работы больше. бассейн у Маши перенесли на четверг, 18:30",
    )),
    ("2026-04-18", (
        "user: traded in the Golf, I've got a Kia EV6 now",
        "assistant: Nice! Do you have a charger at home?",
        "user: not yet, the electrician comes next week",
        "user: also Dr. Lowe retired, I'm with Dr. Baptiste at SmileCare now",
    )),
    ("2026-04-21", (
        "user: Oliver er flyttet i lejlighed i Aarhus med sin kæreste",
        "assistant: Hvor spændende. Skal jeg opdatere hans adresse?",
        "user: ja. og jeg har skiftet til Lunar, Nordea-kontoen er lukket",
    )),
    ("2026-04-25", (
        "user: 英会話、水曜の夜に移動した。土曜は子どもの習い事で",
        "assistant: 了解です。水曜の夜ですね。",
    )),
    ("2026-04-28", (
        "user: перешла на Билайн, тариф 500 рублей, и интернет лучше",
        "assistant: Отличная экономия.",
        "Tomasz: Tomasz again. we moved to Gdańsk in March, I'm at the shipyard museum now",
    )),
    ("2026-05-02", (
        "user: new schedule: gym on Tuesdays and Thursdays after work now, mornings were too much",
        "assistant: Two evenings a week works. Add a weekend walk?",
        "user: badminton er flyttet til onsdag kl. 20, hallen var booket om mandagen",
    )),
    ("2026-05-06", (
        "Birthe: Birthe her igen. vi er flyttet til Vejle, tættere på børnebørnene",
        "assistant: Hvor dejligt, Birthe.",
    )),
)

# (question, the older turn's fragment, the newer turn's fragment)
QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("where does my sister Maya live?", "my sister Maya lives in Portland",
     "Maya finally moved to Seattle"),
    ("what car do I drive?", "I drive a 2015 Golf", "I've got a Kia EV6 now"),
    ("when do I go to the gym?", "I go to the gym Mon/Wed/Fri", "gym on Tuesdays and Thursdays"),
    ("who is my dentist?", "my dentist is Dr. Lowe", "I'm with Dr. Baptiste"),
    ("where does Tomasz live?", "we're in Kraków", "we moved to Gdańsk"),
    ("私の上司は誰？", "上司は田村さん", "上司が大西さんに変わった"),
    ("猫の餌は何をあげている？", "ロイヤルカナンをあげてる", "ヒルズに切り替えた"),
    ("英会話教室はいつ？", "英会話は毎週土曜", "英会話、水曜の夜に移動"),
    ("где работает мой муж?", "муж Павел работает в банке", "Павел ушёл из банка"),
    ("какой у меня тариф мобильной связи?", "тариф МТС за 650", "перешла на Билайн"),
    ("когда у Маши бассейн?", "бассейн по вторникам", "бассейн у Маши перенесли"),
    ("hvor bor min søn Oliver?", "Oliver bor på kollegium i Odense",
     "Oliver er flyttet i lejlighed"),
    ("hvilken bank bruger jeg?", "min løn i Nordea", "skiftet til Lunar"),
    ("hvornår spiller jeg badminton?", "badminton mandag kl. 19",
     "badminton er flyttet til onsdag"),
    ("hvor bor Birthe?", "vi bor i Silkeborg", "vi er flyttet til Vejle"),
)


def note(day: str, turns: tuple[str, ...]) -> str:
    return f"# {day}\n\n## Conversation\n" + "".join(f"- {t}\n" for t in turns)


def build(parent: Path, name: str = "chat-log") -> Path:
    """One commit per session day (21:00 UTC)."""
    return notes_history(parent, name, {}, "", {day: note(day, turns) for day, turns in SESSIONS})


def locate(fragment: str) -> tuple[str, int]:
    """The one turn holding ``fragment``: (path, 1-based line)."""
    found = [(f"memory/{day}.md", n) for day, turns in SESSIONS
             for n, line in enumerate(note(day, turns).split("\n"), 1) if fragment in line]
    if len(found) != 1:
        raise ValueError(f"{fragment!r} is on {len(found)} turns of the chat log, want 1")
    return found[0]
