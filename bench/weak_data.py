"""The weak-flag set of bench/bench_weak.py (issue 37 item 6): a small multilingual workspace and
questions it answers or does not, in every supported language.

Written before the flag was tuned, without looking at how any of it scores. Answerable questions
are asked as people ask them (a question word, a possessive, a paraphrase now and then); each
names its target by a piece of the one line that answers it. Unanswerable ones ask about
something the notes never say, often about a person or thing they do mention ("What is Alice's
favourite film?"): the hard case for a flag that counts shared words. The held-out third is
every third question of each language and class (``held_out``)."""

from __future__ import annotations

from dataclasses import dataclass

# path -> text; one commit per file, on the file's day.
NOTES: dict[str, str] = {
    "memory/2026-10-05.md": """# 2026-10-05

## Retain
- W @Alice: Alice is now Head of Product at Northwind.
- W @Bob: Bob's daughter started school in Aarhus this autumn.
- B @Peter: Peter switched the home router to a UniFi Dream Machine.
- W @Carol: Carol is allergic to shellfish.

## Notes
The NAS backups run every night at 02:00 and keep thirty days.
Our landlord raised the rent to 1,450 a month from November.
""",
    "memory/2026-10-09.md": """# 2026-10-09

## Retain
- W @Dave: Dave drives an old blue Volvo estate.
- W @Emma: Emma plays the cello in a local orchestra.
- O(c=0.8) @Frank: Frank prefers tea over coffee.
- W: The team offsite is planned for March in Lisbon.

## Notes
The dentist appointment was moved to Thursday at 9.
We adopted a cat and called her Miso.
The kitchen tap leaks again; a plumber is booked for Monday.
The car insurance renews in January, with Topdanmark.
""",
    "memory/2026-10-12.md": """# 2026-10-12

## Retain
- W @Mette: Mette arbejder som sygeplejerske på Rigshospitalet.
- B @Søren: Søren har købt en ny ladcykel.
- W @Anne: Anne er flyttet til Odense.
- W @Lars: Lars spiller badminton hver tirsdag aften.
- O(c=0.9) @Mette: Mette kan ikke lide koriander.

## Noter
Vi skal holde sommerferie på Bornholm i juli.
Mormor fylder 90 år den 12. marts.
Varmepumpen blev serviceret i september.
""",
    "memory/2026-10-15.md": """# 2026-10-15

## Retain
- W @Ida: Ida læser medicin i København.
- W @Jens: Jens og Hanne har fået en søn, der hedder Oscar.
- W: Hunden Bella skal vaccineres i november.

## Noter
Vi har skiftet elselskab til Andel Energi.
Bilen skal til syn i februar.
""",
    "memory/2026-10-18.md": """# 2026-10-18

## Retain
- W @Иван: Иван работает врачом в Казани.
- B @Ольга: Ольга купила новую машину, красную Škoda.
- W @Сергей: Сергей играет на гитаре по выходным.
- W @Маша: Маша учится в МГУ на юридическом факультете.
- O(c=0.9) @Дмитрий: Дмитрий не ест мясо.
- W @Николай: Николай стал директором филиала.

## Заметки
Наш офис переехал на Тверскую улицу.
Бабушке исполнится 80 лет в мае.
Отпуск запланирован на август, едем в Сочи.
""",
    "memory/2026-10-21.md": """# 2026-10-21

## Retain
- W @Анна: Анна говорит по-испански.
- W: Кот Барсик боится пылесоса.

## Заметки
Стиральная машина сломалась, мастер придёт в среду.
Подписка на журнал заканчивается в декабре.
""",
    "memory/2026-10-24.md": """# 2026-10-24

## Retain
- W @田中: 田中さんは品川に住んでいる。
- W @鈴木: 鈴木さんはデザイナーとして働いている。
- W @佐藤: 佐藤さんの誕生日は4月3日。
- W @山本: 山本さんは猫を二匹飼っている。
- W @高橋: 高橋さんはテニスが得意。
- W @伊藤: 伊藤さんは大阪の銀行に勤めている。

## メモ
来月、京都に出張する予定。
新しいノートパソコンは金曜日に届く。
会議室の予約は毎週火曜日。
""",
    "memory/2026-10-27.md": """# 2026-10-27

## Retain
- W @中村: 中村さんは朝ごはんにパンを食べる。
- W: 息子はピアノを習っている。

## メモ
冷蔵庫が壊れたので修理を頼んだ。
年末は実家に帰る。
""",
    "memory/2026-10-29.md": """# 2026-10-29

## Retain
- W @王伟: 王伟在腾讯做产品经理。
- O(c=0.8) @李娜: 李娜喜欢喝绿茶。
- W @张明: 张明下周去北京出差。
- W @陈静: 陈静养了一只狗。
- W @刘洋: 刘洋的女儿在学钢琴。

## 笔记
我们的服务器每天凌晨三点备份。
""",
    "memory/2026-10-31.md": """# 2026-10-31

## Retain
- W @민수: 민수는 부산에 살아요.
- W @지영: 지영 씨는 삼성에서 디자이너로 일해요.
- W @준호: 준호는 매주 토요일에 축구를 해요.
- W @서연: 서연이는 고양이를 키워요.
- W @현우: 현우 씨의 생일은 7월 9일이에요.

## 메모
다음 달에 제주도로 여행을 가요.
""",
}


@dataclass(frozen=True)
class Question:
    lang: str
    text: str
    target: str | None  # a piece of the one line that answers it; None: the notes do not


def _answerable(lang: str, pairs: str) -> list[Question]:
    out = []
    for line in pairs.strip().splitlines():
        text, _, target = line.partition(" => ")
        out.append(Question(lang, text.strip(), target.strip()))
    return out


def _unanswerable(lang: str, texts: str) -> list[Question]:
    return [Question(lang, t.strip(), None) for t in texts.strip().splitlines()]


QUESTIONS: tuple[Question, ...] = (
    *_answerable("en", """
What is Alice's job? => Head of Product
Where does Bob's daughter go to school? => school in Aarhus
When do the NAS backups run? => NAS backups
Which router does Peter use at home? => UniFi
How much is the rent now? => raised the rent
What is Carol allergic to? => shellfish
Where is the team offsite? => Lisbon
What car does Dave drive? => Volvo
When is the dentist appointment? => dentist
What did we call the cat? => Miso
What instrument does Emma play? => cello
Who is coming to fix the kitchen tap? => plumber
Does Frank like coffee? => tea over coffee
When does the car insurance renew? => insurance renews
Which company is Alice working for? => Northwind
"""),
    *_unanswerable("en", """
What is Alice's favourite film?
When is Bob's birthday?
What is the wifi password?
Which gym does Carol go to?
How old is Dave's son?
What did the vet say about the dog?
Where did we go skiing last winter?
What is Frank's phone number?
Who won the chess tournament?
What is the interest rate on the mortgage?
"""),
    *_answerable("da", """
Hvad laver Mette? => sygeplejerske
Hvor arbejder Mette? => Rigshospitalet
Hvad har Søren købt? => ladcykel
Hvor skal vi holde sommerferie? => Bornholm
Hvor bor Anne nu? => Odense
Hvor gammel bliver mormor? => Mormor fylder
Hvornår blev varmepumpen serviceret? => Varmepumpen
Hvornår spiller Lars badminton? => badminton
Hvornår skal Bella vaccineres? => Bella
Hvad studerer Ida? => medicin
Hvilket elselskab har vi? => elselskab
Hvad hedder Jens og Hannes søn? => Oscar
Hvornår skal bilen til syn? => syn i februar
Hvad kan Mette ikke lide? => koriander
Hvad er Mettes arbejde? => sygeplejerske
"""),
    *_unanswerable("da", """
Hvem er Sørens kone?
Hvornår har Lars fødselsdag?
Hvad er koden til alarmen?
Hvilken bil kører Anne?
Hvor går Ida til yoga?
Hvad koster internettet om måneden?
Hvem vandt fodboldkampen i søndags?
Hvad hedder Mettes kat?
Hvornår kommer vinduespudseren?
Hvor meget koster Idas husleje?
"""),
    *_answerable("ru", """
Кем работает Иван? => врачом
Где работает Иван? => в Казани
Что купила Ольга? => Ольга купила
Где теперь наш офис? => Тверскую
На чём играет Сергей? => гитаре
Сколько лет исполнится бабушке? => Бабушке
Куда мы едем в отпуск? => Сочи
Где учится Маша? => МГУ
Ест ли Дмитрий мясо? => мясо
Когда придёт мастер? => мастер
На каком языке говорит Анна? => по-испански
Когда заканчивается подписка на журнал? => Подписка
Чего боится Барсик? => Барсик
Что делает Иван? => врачом
Кем стал Николай? => директором
"""),
    *_unanswerable("ru", """
Когда день рождения у Ольги?
Какой пароль от роутера?
Где живёт Сергей?
Сколько стоит аренда квартиры?
Кто выиграл турнир по шахматам?
Как зовут собаку Маши?
Что сказал стоматолог?
Какую книгу читает Дмитрий?
Когда починили крышу?
Сколько зарабатывает Николай?
"""),
    *_answerable("ja", """
田中さんはどこに住んでいますか => 品川
鈴木さんの仕事は何ですか => デザイナー
佐藤さんの誕生日はいつ？ => 誕生日
京都に行くのはいつ？ => 京都
山本さんは何を飼っていますか => 猫を二匹
ノートパソコンはいつ届きますか => ノートパソコン
会議室の予約は何曜日？ => 会議室
高橋さんの得意なスポーツは？ => テニス
冷蔵庫はどうなった？ => 冷蔵庫
中村さんは朝ごはんに何を食べますか => パン
息子は何を習っていますか => ピアノ
年末はどこに帰りますか => 実家
伊藤さんはどこに勤めていますか => 銀行
"""),
    *_unanswerable("ja", """
田中さんの電話番号は？
鈴木さんはどこに住んでいますか
車の保険はいつ更新しますか
佐藤さんの好きな食べ物は？
犬の名前は何ですか
次の健康診断はいつ？
山本さんの奥さんの名前は？
駐車場の番号は何番？
引っ越しの日はいつですか
"""),
    *_answerable("zh", """
王伟做什么工作？ => 产品经理
李娜喜欢喝什么？ => 绿茶
张明什么时候去北京？ => 北京
服务器几点备份？ => 备份
陈静养了什么宠物？ => 一只狗
谁在学钢琴？ => 钢琴
"""),
    *_unanswerable("zh", """
王伟的生日是什么时候？
李娜住在哪里？
公司的年会在哪里举行？
张明开什么车？
"""),
    *_answerable("ko", """
민수는 어디에 살아요? => 부산에
지영 씨는 어디에서 일해요? => 삼성에서
준호는 무슨 운동을 해요? => 축구
서연이는 무엇을 키워요? => 고양이
다음 달에 어디로 여행 가요? => 제주도
현우 씨 생일이 언제예요? => 생일은
"""),
    *_unanswerable("ko", """
민수의 직업은 뭐예요?
지영 씨는 어떤 차를 타요?
회사 주소가 뭐예요?
준호의 여자친구 이름은?
"""),
)


def held_out(questions: tuple[Question, ...] = QUESTIONS) -> set[Question]:
    """Every third question of each language and class (answerable or not), counted in order."""
    seen: dict[tuple[str, bool], int] = {}
    out: set[Question] = set()
    for q in questions:
        key = (q.lang, q.target is None)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] % 3 == 0:
            out.add(q)
    return out
