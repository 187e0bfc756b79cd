"""A cross-language recall set: 48 questions, each asked in another language than its answer's.

Answers are in English, Japanese, Danish and Russian (12 each), half of them plain note lines
under a ``## Log`` heading, as people write them, the rest Retain entries; every question is in one
of the other three languages. Each daily note mixes languages, as a multilingual person's notes
do, and holds distractors: lines near a target's topic that do not answer it (a bicycle bought,
not stolen; a gas bill, not the electricity bill). Written for issue 41 before any tuning; the
questions whose number is 2 modulo 3 are held out (16), the rest are the development set (32).

``TARGETS``: (id, answer language, kind ``log``/``retain``, the line as written, question
language, question). ``DISTRACTORS``: (language, kind, line). ``layout`` places them in daily
notes, deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass

TARGETS: list[tuple[str, str, str, str, str, str]] = [
    # -- answers in English
    ("E1", "en", "log", "Signed the lease for the new office in Aarhus; we move in on March 1.",
     "ja", "新しい事務所の賃貸契約に署名したのはいつ？"),
    ("E2", "en", "log", "Maria's daughter was born on Tuesday, her name is Ella.",
     "ru", "Как зовут новорождённую дочку Марии?"),
    ("E3", "en", "log", "The dentist appointment moved to next Friday at 9.",
     "da", "Hvornår er tiden hos tandlægen nu?"),
    ("E4", "en", "retain", "W @Tom: Tom is allergic to peanuts.",
     "ja", "トムは何のアレルギーを持っている？"),
    ("E5", "en", "retain", "W: The company laptop is a ThinkPad X1 with 32 GB of memory.",
     "ru", "Какой у меня рабочий ноутбук?"),
    ("E6", "en", "log", "Cancelled the gym membership because the price went up.",
     "da", "Hvorfor opsagde jeg mit medlemskab i fitnesscentret?"),
    ("E7", "en", "retain", "B: Planted tulip bulbs along the south fence.",
     "ja", "南側の柵に沿って何を植えた？"),
    ("E8", "en", "log", "Our flight to Lisbon leaves at 6:40 from gate B12.",
     "ru", "Во сколько вылетает самолёт в Лиссабон?"),
    ("E9", "en", "retain", "O(c=0.8) @Anna: Anna prefers phone calls to long emails.",
     "da", "Hvordan vil Anna helst kontaktes?"),
    ("E10", "en", "log", "The car failed its inspection because of worn brake discs.",
     "ja", "車検に落ちた理由は何？"),
    ("E11", "en", "retain",
     "W: The wifi password at the cabin is written inside the fuse box door.",
     "ru", "Где записан пароль от интернета на даче?"),
    ("E12", "en", "log", "Finished reading the biography of Marie Curie.",
     "da", "Hvilken bog om en kendt fysiker læste jeg færdig?"),
    # -- answers in Japanese
    ("J1", "ja", "log", "息子のサッカーの試合は土曜日の朝八時から。",
     "en", "When does my son's football match start?"),
    ("J2", "ja", "log", "駅前の新しいラーメン屋は月曜日が定休日。",
     "da", "Hvilken dag har det nye nudelsted ved stationen lukket?"),
    ("J3", "ja", "retain", "W @Kenji: 健司さんは大阪に引っ越した。",
     "ru", "Куда переехал Кэндзи?"),
    ("J4", "ja", "log", "屋根の雨漏りを修理業者に見てもらった。",
     "en", "Did anyone come to look at the leaking roof?"),
    ("J5", "ja", "retain", "O(c=0.7) @Yuki: 由紀さんは辛い料理が苦手だ。",
     "da", "Kan Yuki lide stærk mad?"),
    ("J6", "ja", "log", "パスポートの有効期限が来年の三月に切れる。",
     "ru", "Когда истекает срок действия паспорта?"),
    ("J7", "ja", "retain", "W: 会社の忘年会は十二月十九日に新宿で行う。",
     "en", "When and where is the company's end-of-year party?"),
    ("J8", "ja", "log", "母の誕生日プレゼントに青いスカーフを買った。",
     "da", "Hvad købte jeg i fødselsdagsgave til min mor?"),
    ("J9", "ja", "retain", "B: ベランダのトマトに毎朝水をやっている。",
     "ru", "Что я поливаю каждое утро на балконе?"),
    ("J10", "ja", "log", "電気代が先月より三割高くなった。",
     "en", "How much did the electricity bill go up?"),
    ("J11", "ja", "retain", "W @Sato: 佐藤さんはチームの新しいマネージャーだ。",
     "da", "Hvem er holdets nye leder?"),
    ("J12", "ja", "log", "図書館で借りた本の返却期限は金曜日。",
     "ru", "Когда нужно вернуть книги в библиотеку?"),
    # -- answers in Danish
    ("D1", "da", "log", "Vandvarmeren i kælderen er gået i stykker.",
     "en", "What broke down in the basement?"),
    ("D2", "da", "log", "Sofie starter i børnehave den 1. august.",
     "ja", "ソフィーはいつ幼稚園に通い始める？"),
    ("D3", "da", "retain", "W @Lars: Lars har købt et sommerhus ved Skagen.",
     "ru", "Что купил Ларс?"),
    ("D4", "da", "log", "Vi har besluttet at male stuen grøn.",
     "en", "What colour are we painting the living room?"),
    ("D5", "da", "retain", "O(c=0.8) @Mette: Mette synes, at møderne om mandagen er spild af tid.",
     "ja", "メッテは月曜日の会議についてどう思っている？"),
    ("D6", "da", "log", "Cyklen blev stjålet foran banegården i går aftes.",
     "ru", "Где украли велосипед?"),
    ("D7", "da", "retain", "W: Forsikringen på huset fornyes hvert år i oktober.",
     "en", "When does the home insurance renew?"),
    ("D8", "da", "log", "Bedstemor fylder halvfems på søndag, og vi holder fest i haven.",
     "ja", "祖母の九十歳の誕生日会はどこで開く？"),
    ("D9", "da", "retain", "B: Skiftede olie på plæneklipperen.",
     "ru", "Какое обслуживание я сделал газонокосилке?"),
    ("D10", "da", "log", "Naboen klager over støj fra vores varmepumpe.",
     "en", "Why is the neighbour complaining?"),
    ("D11", "da", "retain", "W: Bestyrelsesmødet i foreningen er flyttet til den 14. november.",
     "ja", "協会の理事会はいつに変更された？"),
    ("D12", "da", "log", "Jeg har tilmeldt mig et kursus i spansk om tirsdagen.",
     "ru", "На какие курсы я записался?"),
    # -- answers in Russian
    ("R1", "ru", "log", "Ремонт кухни закончится к концу месяца.",
     "en", "When will the kitchen renovation be finished?"),
    ("R2", "ru", "log", "Ирина нашла новую работу в банке.",
     "da", "Hvor har Irina fået nyt job?"),
    ("R3", "ru", "retain", "W @Oleg: Олег живёт в Новосибирске уже пять лет.",
     "ja", "オレグはどの都市に住んでいる？"),
    ("R4", "ru", "log", "Кот снова отказывается есть сухой корм.",
     "en", "What food does the cat refuse?"),
    ("R5", "ru", "retain",
     "O(c=0.7) @Dmitri: Дмитрий считает, что переход на новый сервер слишком рискованный.",
     "da", "Hvad mener Dmitri om at flytte til den nye server?"),
    ("R6", "ru", "log", "Мы забронировали гостиницу в Праге на майские праздники.",
     "ja", "五月の連休にどこのホテルを予約した？"),
    ("R7", "ru", "retain", "W: Пароль от роутера хранится в менеджере паролей.",
     "en", "Where is the router password kept?"),
    ("R8", "ru", "log", "Отопление в доме включат пятнадцатого октября.",
     "da", "Hvornår bliver varmen tændt i huset?"),
    ("R9", "ru", "retain", "B: Отвёз зимние шины в шиномонтаж.",
     "ja", "冬用タイヤをどこに持って行った？"),
    ("R10", "ru", "log", "У Саши температура, он сегодня дома.",
     "en", "Who has a fever and is staying home today?"),
    ("R11", "ru", "retain", "W @Nina: Нина — главный бухгалтер нашей фирмы.",
     "da", "Hvem er firmaets regnskabschef?"),
    ("R12", "ru", "log", "Купили абонемент в бассейн на полгода.",
     "ja", "プールの会員券は何ヶ月分買った？"),
]

DISTRACTORS: list[tuple[str, str, str]] = [
    ("en", "log", "Bought a new saddle for the bicycle."),
    ("en", "log", "The plumber fixed the kitchen tap."),
    ("en", "log", "Paid the water bill for the summer house."),
    ("en", "log", "Anna's son started school in August."),
    ("en", "log", "The office printer is out of toner again."),
    ("en", "log", "Booked a table at the Italian restaurant for Friday."),
    ("en", "retain", "W @Tom: Tom lent me his ladder."),
    ("en", "retain", "W: Renewed the car insurance online."),
    ("en", "log", "The cat's vaccination is due in spring."),
    ("en", "log", "Took the train to Malmö for the conference."),
    ("ja", "log", "猫の予防接種を来月予約した。"),
    ("ja", "log", "車のタイヤの空気圧を確認した。"),
    ("ja", "log", "東京のホテルは駅から近い。"),
    ("ja", "log", "新しい冷蔵庫が届いた。"),
    ("ja", "log", "昨日は雨で散歩に行けなかった。"),
    ("ja", "retain", "W @Kenji: 健司さんは料理教室に通っている。"),
    ("ja", "log", "ガス代の請求書が届いた。"),
    ("ja", "log", "娘はピアノの発表会で緊張していた。"),
    ("da", "log", "Vi spiste pizza hos Lars i weekenden."),
    ("da", "log", "Køkkenet skal have nye skabslåger."),
    ("da", "log", "Mødet med banken er flyttet til torsdag."),
    ("da", "log", "Katten har fået en ny foderskål."),
    ("da", "log", "Bilen skal til service i næste uge."),
    ("da", "retain", "W @Mette: Mette er flyttet til Odense."),
    ("da", "log", "Haven trænger til at blive luget."),
    ("da", "log", "Vi så en film om rumfart i biografen."),
    ("ru", "log", "Купил новый замок для велосипеда."),
    ("ru", "log", "Маша пошла в школу в сентябре."),
    ("ru", "log", "Счёт за газ пришёл больше обычного."),
    ("ru", "log", "Заказали новый диван в гостиную."),
    ("ru", "log", "Встреча с директором перенесена на среду."),
    ("ru", "retain", "W @Oleg: Олег купил новую машину."),
    ("ru", "log", "Сломался пылесос."),
    ("ru", "log", "Летом ездили на дачу к родителям."),
]


@dataclass(frozen=True)
class Placed:
    """Where one line of the set sits: its file and line number."""

    path: str
    line: int
    text: str


def held_out(target_id: str) -> bool:
    """Every third question (by its number within its answer language) is held out."""
    return int(target_id[1:]) % 3 == 2


def layout(days: int = 12) -> tuple[dict[str, str], dict[str, Placed]]:
    """The notes (path -> text) and where each target's line is. Lines are dealt round-robin
    over ``days`` daily notes, targets and distractors interleaved, so every note mixes
    languages and topics; each note has a ``## Log`` list and a ``## Retain`` list."""
    items: list[tuple[str | None, str, str]] = []  # (target id or None, kind, line)
    distractors = iter(DISTRACTORS)
    for n, (tid, _lang, kind, line, _ql, _q) in enumerate(TARGETS):
        items.append((tid, kind, line))
        if n % 3 != 2:
            extra = next(distractors, None)
            if extra is not None:
                items.append((None, extra[1], extra[2]))
    items.extend((None, kind, line) for _, kind, line in distractors)
    logs: list[list[tuple[str | None, str]]] = [[] for _ in range(days)]
    retains: list[list[tuple[str | None, str]]] = [[] for _ in range(days)]
    for n, (which, kind, line) in enumerate(items):
        (logs if kind == "log" else retains)[n % days].append((which, line))
    notes: dict[str, str] = {}
    where: dict[str, Placed] = {}
    for day in range(days):
        date = f"2025-10-{day * 2 + 3:02d}"
        path = f"memory/{date}.md"
        lines = [f"# {date}", "", "## Log"]
        for which, line in logs[day]:
            lines.append(f"- {line}")
            if which:
                where[which] = Placed(path, len(lines), line)
        lines += ["", "## Retain"]
        for which, line in retains[day]:
            lines.append(f"- {line}")
            if which:
                where[which] = Placed(path, len(lines), line)
        notes[path] = "\n".join(lines) + "\n"
    return notes, where
