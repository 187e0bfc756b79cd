"""Knowledge updates: does a later statement replace an earlier one? One value type
(:class:`Statement`) and one :func:`replaces`, which owns the ordering too, asked by recall,
``entity``, ``review`` and ``reflect`` alike (docs/memory-format.md, "Knowledge updates").

A replacement is *declared* (the writer said so: a nested ``- replaces: <ref>`` item, resolved to
fact ids before it gets here) or found by the *rule*. The rule works on ordinary wording without
a language model, from the signals a statement carries:

* **Same subject**: the two share an entity (``@Alice``; for a plain note line, the known entity
  names it mentions). Without one, they must share a topic phrase ("the gateway host", "build
  server") and the newer must word a change ("moved", "now").
* **Same attribute**, any of:
  - a single-valued *attribute family* both statements word (where someone lives, where they
    work, what they are responsible for, who they are with, what something is called, what
    they study, how old they are): "lives in Berlin" / "moved to Lisbon" / "住んでいる" /
    "引っ越した" / "живёт" / "переехал" / "bor" / "er flyttet". A family is a small per-language
    table of cue patterns; only attributes that hold one value at a time are families
    (pets, languages, visits and hobbies are not: "has a dog" and "has a cat" are both true);
  - the same claim in other words (``parse.similarity``: stems, synonyms, CJK words), unless
    both are events ("visited Porto" / "visited Faro");
  - the newer one words a *change* (moved, switched, replaced, now, no longer, 変更, теперь,
    flyttet, skiftet, ...) and they share a content word besides names ("standup is at 9:30" /
    "we moved standup to 10").
* Never: the same words again (a repetition confirms), two separate stated periods (two trips),
  kinds that do not replace each other (experiences are events; opinions only replace
  opinions; a note line replaces a world fact or an observation and is replaced by them).

Pure functions, no I/O. Wrong merges are worse than missed ones where a signal is weak; the
benchmark (``bench/bench_updates.py``) measures both.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from gitmem.domain import Basis, ResultKind
from gitmem.parse.retain import entity_key
from gitmem.parse.similarity import Claim, claim, texts_match

# Kinds whose statements a later one can replace ("note": a plain line outside Retain
# sections). Experience entries (B) are events: "fixed the crash" stays true after "fixed the
# crash again".
UPDATABLE = frozenset({"world", "observation", "opinion", "note"})
_STATE_KINDS = frozenset({"world", "observation", "note"})
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Statement:
    """A fact or a plain note line, as the knowledge-update rule sees it."""

    kind: ResultKind
    text: str
    entities: tuple[str, ...]  # subjects first, then mentions (a note line: names it mentions)
    stated: str  # the day it was stated: its daily note's day, else its record day; '' unknown
    recorded_at: str  # when the memory recorded it (ISO); '' unknown
    path: str
    line: int
    period: tuple[str, str] | None = None  # the event period it states itself, if any
    fact_id: str = ""
    # what its '- replaces:' item names: fact ids (resolved by the index), or raw citations
    # (``path#Lline``, read from git by review)
    declared: frozenset[str] = field(default_factory=frozenset)
    end_line: int = 0

    def later_than(self, other: Statement) -> bool:
        """Stated after ``other``: a later day, then a later record time, then further down
        the same file (two files of one day and one commit have no order)."""
        mine, theirs = (self.stated, self.recorded_at), (other.stated, other.recorded_at)
        if mine != theirs:
            return mine > theirs
        return self.path == other.path and self.line > other.line

    @property
    def keys(self) -> frozenset[str]:
        return _keys(self.entities)

    def prepared(self) -> Claim:
        return claim(self.text, self.entities)


@functools.lru_cache(maxsize=8192)
def _keys(entities: tuple[str, ...]) -> frozenset[str]:
    """Entity keys, made once per entity list: recall compares each statement with many."""
    return frozenset(entity_key(e) for e in entities) - {""}


def replaces(newer: Statement, older: Statement, common: frozenset[str] = frozenset(), *,
             answered: bool = False) -> Basis | None:
    """Whether ``newer`` replaces ``older``, and on what basis: declared by its writer (always
    holds), or found by the rule (``newer`` stated later; see the module's docstring).
    ``common``: frame terms of templated notes (``parse.similarity.common_terms``)."""
    if (newer.path, newer.line) == (older.path, older.line) and newer.text == older.text:
        return None
    if declares(newer, older):
        return "declared"
    if not newer.later_than(older):
        return None
    return "rule" if same_attribute(newer, older, common, answered=answered) else None


def declares(newer: Statement, older: Statement) -> bool:
    """Whether ``newer``'s '- replaces:' item names ``older``: its fact id, or a citation of
    one of its lines."""
    if not newer.declared:
        return False
    if older.fact_id and older.fact_id in newer.declared:
        return True
    last = max(older.line, older.end_line)
    for ref in newer.declared:
        path, sep, lines = ref.partition("#L")
        first = lines.split("-", 1)[0]
        if sep and path == older.path and first.isdigit() and older.line <= int(first) <= last:
            return True
    return False


def plausible(newer_text: str, older_text: str) -> bool:
    """A cheap necessary condition of the rule, read from the texts alone (review's pre-check
    of many lines): a shared word, a shared attribute family, or a worded change."""
    from gitmem.parse.similarity import statement_terms

    return (bool(statement_terms(newer_text).keys() & statement_terms(older_text).keys())
            or bool(shared_families(newer_text, older_text)) or words_change(newer_text))


def shared_families(newer_text: str, older_text: str) -> frozenset[str]:
    """The attribute families both texts word (the older text's are read only when the newer
    words one: most statements word none, and reading them is 19 regular expressions)."""
    mine = families(newer_text)
    return mine & families(older_text) if mine else mine


def may_replace(newer: Statement, older: Statement) -> bool:
    """Cheap necessary conditions of ``replaces(newer, older)``, for a caller that tries many
    pairs (review): declared (then only ``replaces`` can tell), or stated later about a shared
    subject or wording a change (``same_attribute`` needs one or the other), and
    ``plausible``."""
    if newer.declared:
        return True
    return (newer.later_than(older) and (bool(newer.keys & older.keys)
                                         or words_change(newer.text))
            and plausible(newer.text, older.text))


@dataclass(frozen=True)
class _Terms:
    """A set of a statement's terms and their first four letters (of the alphabetic terms of
    four letters or more), for :func:`_overlap`."""

    terms: frozenset[str]
    prefixes: frozenset[str]


def _terms(terms: frozenset[str]) -> _Terms:
    return _Terms(terms, frozenset(t[:4] for t in terms if len(t) >= 4 and t.isalpha()))


def _overlap(a: _Terms, b: _Terms) -> set[str]:
    """Terms of ``a`` that ``b`` holds too, or with the same first four letters (a statement's
    language is guessed from its own few words, so "læser" may be stemmed as English in one
    and as Danish in the other)."""
    return {t for t in a.terms if t in b.terms or (len(t) >= 4 and t.isalpha()
                                                   and t[:4] in b.prefixes)}


@dataclass(frozen=True)
class _Matched:
    """What :func:`_shared` reads of one prepared statement: made once per (text, entities),
    since recall compares each statement with many (up to ``CANDIDATES`` later facts, and
    every other shown result)."""

    claim: Claim
    signature: _Terms  # its full-weight terms, names left out
    values: _Terms  # its terms that weigh at least as a value (names of things, numbers; not
    # a single CJK character, which alone says little)


@functools.lru_cache(maxsize=8192)
def _matched(text: str, entities: tuple[str, ...]) -> _Matched:
    c = claim(text, entities)
    return _Matched(c, _terms(c.signature), _terms(frozenset(
        t for terms in c.variants for t, w in terms.items()
        if w >= 0.5 and (len(t) > 1 or t.isascii()))))


def _kinds_replace(newer: str, older: str) -> bool:
    if newer not in UPDATABLE or older not in UPDATABLE:
        return False
    return newer == older or (newer in _STATE_KINDS and older in _STATE_KINDS)


@functools.lru_cache(maxsize=8192)
def _normal(text: str) -> str:
    return _WS.sub(" ", text).strip().casefold()


def _disjoint(a: tuple[str, str] | None, b: tuple[str, str] | None) -> bool:
    return a is not None and b is not None and (a[1] < b[0] or b[1] < a[0])


def same_attribute(newer: Statement, older: Statement, common: frozenset[str] = frozenset(),
                   *, answered: bool = False) -> bool:
    """The rule without the ordering: two statements about one subject's one attribute.
    ``answered``: both answer one question about that subject with the same word of it (two
    facts about one subject that answer the same question are the same attribute), which
    counts as the attribute unless they are events or things one has several of."""
    if not _kinds_replace(newer.kind, older.kind) or _disjoint(newer.period, older.period):
        return False
    if _normal(newer.text) == _normal(older.text) or relation(newer.text) != relation(older.text):
        return False
    change = words_change(newer.text)
    if not newer.keys & older.keys:
        # no shared subject: a shared topic phrase that the newer one says changed
        return change and bool(topic_phrases(newer.text) & topic_phrases(older.text))
    if answered and (is_event(newer.text) or is_event(older.text) or "?" in newer.text
                     or "?" in older.text):
        return False  # answering one question, but about what happened, or asking
    family = shared_families(newer.text, older.text)
    if family - _NEEDS_SHARED_WORD:
        return True
    if additive(newer.text):  # "now also speaks German": one more, not another
        return False
    a, b = _matched(newer.text, newer.entities), _matched(older.text, older.entities)
    # what they share counts only with a family or a worded change (most pairs have neither)
    shared = _shared(a, b, newer.keys | older.keys, common) if family or change else None
    if shared is not None and family and (shared.words or (shared.named and change)):
        return True  # a time and a shared word
    # events ("visited Porto" / "visited Faro") and things one has several of ("plays handball"
    # / "plays the piano") stay true side by side unless the newer one words a change
    events = (is_event(newer.text) and is_event(older.text)) or (
        many_valued(newer.text) and many_valued(older.text) and not change)
    if events:
        return False
    # a clock time or weekday on one side only says they are about different things
    # ("builds start at 02:00" / "bx-02 replaced bx-01"; "the minutes of the board meeting go
    # out within a week" / "the board meets on the last Thursday from now on")
    # (read only with a worded change: both places it counts need one)
    timed = change and (("schedule" in families(newer.text))
                        != ("schedule" in families(older.text)))
    # answering one question counts with a worded change only ("standup is at 9:30" /
    # "we moved standup to 10"): two true statements often answer one question too
    if (answered and change and not timed) or texts_match(a.claim, b.claim, common):
        return True
    # or a worded change and a shared word
    return bool(shared is not None and change and (shared.words or shared.values) and not timed)


@dataclass(frozen=True)
class _Shared:
    words: frozenset[str]  # full-weight terms both hold, names left out
    values: frozenset[str]  # names of things and numbers both hold ("sold the Corolla")
    named: frozenset[str]  # the subject's own name in both texts ("定例会議は…" / "定例は…")


def _shared(a: _Matched, b: _Matched, keys: frozenset[str], common: frozenset[str]) -> _Shared:
    """What two prepared statements hold in common; a name's stem depends on the language its
    sentence was read in ("Mette" -> met / mett), so terms a subject's key starts with are
    names."""
    names = a.claim.names | b.claim.names

    def named(t: str) -> bool:
        return any(k.startswith(t) for k in keys)

    values = _overlap(a.values, b.values)
    return _Shared(
        words=frozenset(t for t in _overlap(a.signature, b.signature) - common - names
                        if not named(t)),
        values=frozenset(t for t in values - common - names if not named(t)),
        named=frozenset(t for t in values if named(t)))


# --- the tables -------------------------------------------------------------------------------
# Cue patterns are matched on NFKC, case-folded text (word boundaries for the alphabetic
# scripts; CJK cues are substrings). Each family is an attribute that holds one value at a time.

_FAMILIES: dict[str, str] = {
    "residence": (
        r"\b(?:live[sd]?|living|resides?|resided|residing|relocat\w*|moved (?:to|into|back to|"
        r"in with|out of)|moving to|home is|(?:home|postal|street) address|apartment|flat in|"
        r"house in|based in|settled in|lives? in)\b"
        r"|\b(?:bor|boede|bosat|bosatte|flyttet|flyttede|flytter|flytte|adresse|lejlighed|"
        r"bopæl)\b"
        r"|(?:жив[её]т|живут|живу|жила?\b|живёшь|проживает|проживают|переех\w*|переезж\w*|"
        r"переселил\w*|адрес\w*|квартир\w*|поселил\w*)"
        r"|(?:住ん|住む|住み|住ま|在住|引っ越|引越|転居|住所|暮らし|暮らす|暮らして|移り住)"
        r"|(?:住在|住址|搬到|搬家|居住|定居)"
    ),
    "employer": (
        r"\b(?:works? (?:at|for)|working (?:at|for)|worked (?:at|for)|job (?:at|with)|"
        r"employ\w*|hired (?:at|by)|new job|(?:his|her|their|my|a) job|position at|quit|"
        r"resigned|left (?:his|her|their) job|started (?:at|with)|intern(?:ing|ship)? at|"
        r"company|employer)\b"
        r"|\b(?:arbejder (?:hos|på|for|i)|arbejdede (?:hos|på|for|i)|job (?:hos|på|i)|"
        r"nyt job|nye job|ansat|ansættelse|stilling|firma|virksomhed|startede (?:hos|på|i)|"
        r"sagt op|arbejdsplads)\b"
        r"|(?:работа[ею]т? (?:в|на)\b|работал\w* (?:в|на)\b|устроил\w*|трудится|компани\w*|"
        r"должност\w*|уволил\w*|перешл?[её]л? (?:в|на) работу|новая работа|новую работу|"
        r"работу в)"
        r"|(?:勤め|勤務|働い|働く|入社|転職|職場|退職|就職|社員)"
        r"|(?:工作|上班|公司|入职|跳槽|辞职)"
    ),
    "role": (
        r"\b(?:in charge of|responsible for|responsibility|owner of|lead(?:s|ing)? the|"
        r"manag(?:es|er of|ing) the|maintainer|on call|point of contact|takes care of|"
        r"handles|handling|took over|hands? over|handed (?:\w+ ){0,2}over|runs the)\b"
        r"|\b(?:ansvarlig|ansvaret|står for|tovholder|overtaget|overtog)\b"
        r"|(?:отвечает за|ответственн\w*|руковод\w*|занимается|курирует)"
        r"|(?:担当|責任者|リーダー|窓口|当番|引き継)"
        r"|(?:负责|主管|接手)"
    ),
    "partner": (
        r"\b(?:married|wife|husband|girlfriend|boyfriend|engaged|fianc[ée]e?|dating|"
        r"divorced|spouse|separated)\b"
        r"|\b(?:gift med|kone|kæreste|forlovet|skilt|hustru|ægtefælle)\b"
        r"|(?:женат|замужем|жена\b|муж\b|девушк\w*|помолвл\w*|развел\w*|развёл\w*|встречается)"
        r"|(?:結婚|妻|夫|彼女|彼氏|婚約|離婚|交際|付き合)"
        r"|(?:结婚|老婆|老公|女朋友|男朋友|离婚)"
    ),
    "name": (
        r"\b(?:(?:is|are|now|was|were|been|be|gets?) (?:called|named|renamed)|renamed|"
        r"name is|goes by)\b"
        r"|\b(?:hedder|kaldes|omdøbt|navn er)\b"
        r"|(?:называ\w*|зовут|переименова\w*)"
        r"|(?:と呼ばれ|名前は|改名|という名前)"
        r"|(?:叫做|名字|改名)"
    ),
    "study": (
        r"\b(?:stud(?:ies|ying|ied) (?:at|in)|student at|enrolled|majoring|degree in|"
        r"university|college|grad school|phd|school|primary|secondary|kindergarten|nursery)\b"
        r"|\b(?:studerer|læser (?:på|til)|læser|universitet|uddannelse|gymnasium|\w*skole|"
        r"\w*skolen|klasse|børnehave|vuggestue)\b"
        r"|(?:учится|учился|училась|университет\w*|институт\w*|поступил\w*|школ\w*|курс[еа]?\b|"
        r"детск\w* сад\w*)"
        r"|(?:大学|専攻|在学|学校|入学)"
        r"|(?:大学|专业|读书)"
    ),
    "age": (
        r"\b(?:\d+ years? old|turned \d+|age \d+|aged \d+)\b"
        r"|\b(?:\d+ år gammel|fyldte \d+|fylder \d+)\b"
        r"|(?:\d+ (?:год|года|лет)\b|исполнилось)"
        r"|(?:\d+歳|\d+才)"
        r"|(?:\d+岁)"
    ),
    "contact": (
        r"\b(?:phone|mobile|cell|number|e-?mail|address|contact|reach (?:him|her|them) at)\b"
        r"|\b(?:telefon\w*|\w*nummer|nummeret|mobil\w*|\w*mail|kontakt\w*)\b"
        r"|(?:телефон\w*|номер\w*|почт\w*|контакт\w*)"
        r"|(?:電話|番号|携帯|メール|アドレス|連絡先|担当者)|(?:电话|号码|手机|邮箱|联系)"
    ),
    "vehicle": (
        r"\b(?:drives?|drove|driving|car|vehicle|motorbike|motorcycle|scooter)\b"
        r"|\b(?:bil|bilen|kører)\b|(?:машин\w*|автомобил\w*|ездит на)"
        r"|(?:車|乗って|乗り換え)|(?:开车|汽车)"
    ),
    "diet": (
        r"\b(?:vegan|vegetarian|pescatarian|diet|keto|gluten|dairy|allergic|food)\b"
        r"|\b(?:veganer|vegetar|kost|diæt|foder)\b|(?:диет\w*|вегетариан\w*|веган\w*|корм\w*)"
        r"|(?:ベジタリアン|菜食|食事|ダイエット|アレルギー|餌|フード)|(?:吃素|饮食)"
    ),
    "tool": (
        r"\b(?:uses|using|used for|runs on|running on|hosted (?:on|at|by)|stored (?:in|on)|"
        r"stores (?:its|their|the)|migrated (?:to|from)|moved (?:\w+ )?(?:off|onto)|"
        r"lives? on|database|backend|stack|deployed (?:on|to))\b"
        r"|\b(?:bruger|kører på|ligger på|gemmes|database)\b"
        r"|(?:использу\w*|хран\w*|работает на\b|развёрнут\w*|база данных)"
        r"|(?:使って|使用|で動|動いて|保存|データベース|管理して|移行)"
        r"|(?:使用|运行在|部署|数据库|迁移)"
    ),
    "manager": (
        r"\b(?:manager|boss|reports to|supervisor|team lead)\b"
        r"|\b(?:chef|leder|nærmeste leder)\b|(?:руководител\w*|начальни\w*)"
        r"|(?:上司|マネージャー|課長|部長)|(?:经理|领导|上司)"
    ),
    "deadline": (
        r"\b(?:due|deadline|expires?|expiry|renew\w*|postponed to|pushed to)\b"
        r"|\b(?:frist|fristen|deadline|senest|fornyes|udløber)\b"
        r"|(?:срок\w*|дедлайн\w*|продлен\w*|истекает)"
        r"|(?:締切|締め切り|期限|までに|延び)|(?:截止|期限)"
    ),
    "place": (
        r"\b(?:floor|sits?|located|venue|held (?:at|in)|takes place)\b"
        r"|\b(?:etage|sal|kontor|lokale|sidder|holdes)\b"
        r"|(?:этаж\w*|офис\w*|комнат\w*|находится|переговорк\w*|проходит в)"
        r"|(?:階|会場|部屋|オフィス|会議室|席|場所)|(?:楼|会议室|办公室|地点)"
    ),
    "care": (
        r"\b(?:vet|doctor|dentist|gp|clinic|physio|therapist|landlord|lettings)\b"
        r"|\b(?:dyrlæge|læge|tandlæge|klinik|udlejer)\b"
        r"|(?:врач\w*|ветеринар\w*|клиник\w*|стоматолог\w*|арендодател\w*|хозяйк\w*)"
        r"|(?:医者|病院|獣医|歯医者|クリニック|大家)|(?:医生|医院|兽医|房东)"
    ),
    "commute": (
        r"\b(?:commutes?|commuting|to work by|takes the (?:train|bus|tube|metro))\b"
        r"|\b(?:pendler|cykler på arbejde|tager toget)\b|(?:добирается|ездит на работу)"
        r"|(?:通勤|(?:会社|職場|オフィス)に(?:来て|来る|通って|通う)|で出社)|(?:通勤|上班坐)"
    ),
    "hospital": (
        r"\b(?:in (?:the )?hospital|hospitali[sz]ed|admitted to|discharged|out of (?:the )?"
        r"hospital)\b|\b(?:indlagt|indlæggelse|udskrevet)\b"
        r"|(?:госпитализ\w*|в больнице|выписал\w*|выписан\w*)|(?:入院|退院)|(?:住院|出院)"
    ),
    "leave": (
        r"\b(?:on (?:parental|sick|maternity|paternity) leave|back at work|back from leave|"
        r"returned to work|(?:'s|is|are) back(?=[!.,;]| at\b| from\b| to work\b|$))"
        r"|\b(?:barsel|barselsorlov|orlov|tilbage på arbejde|er tilbage)\b"
        r"|(?:декрет\w*|больничн\w*|вышл?[аи]? на работу|вернул\w* на работу)"
        r"|(?:産休|育休|復帰|職場に戻)|(?:产假|复工)"
    ),
    "schedule": (
        r"(?:\b\d{1,2}[:.]\d{2}\b|\b\d{1,2} ?(?:am|pm)\b|\bat (?:noon|midnight)\b"
        r"|\b(?:at|to|until|from) \d{1,2}\b(?![.,]?\d|\s*(?:%|km|kg|gb|mb|th|st|nd|rd|people|"
        r"days?|weeks?|years?|minutes|hours))"
        r"|\bkl\.? ?\d{1,2}\b|\bklokken \d{1,2}\b|\bв \d{1,2}(?::\d{2})?\b"
        r"|\d{1,2}時|\d{1,2}点"
        # 七時, 十二時 (not 一時停止 "paused for now", not 三時間 "three hours")
        r"|(?<![一二三四五六七八九十])(?:十[一二]|[二三四五六七八九十])[時点](?!間|停|的|期)"
        r"|\b(?:mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|daily|"
        r"weekly|every (?:day|week|morning|evening))\b"
        r"|\b(?:mandag|tirsdag|onsdag|torsdag|fredag|lørdag|søndag)(?:e|en)?\b"
        r"|(?:понедельник\w*|вторник\w*|сред[уаы]\b|четверг\w*|пятниц\w*|суббот\w*|"
        r"воскресень\w*|каждый день|по утрам)"
        r"|(?:月曜|火曜|水曜|木曜|金曜|土曜|日曜|毎朝|毎日|毎週)|(?:周[一二三四五六日]|星期|每天))"
    ),
}
# The other person or pet a statement is about when it names one after a possessive ("Alice's
# parents live in Hamburg", "Bob's partner Sam works at ..."): then it is not about the
# subject's own attribute.
_RELATION = (
    r"(?:^|\s)(?:\w+'s|his|her|their|my|our|hans|hendes|deres|min|mit|mine|\w+s)\s+"
    r"(parents?|mother|father|mom|mum|dad|sister|brother|siblings?|son|daughter|kids?|"
    r"children|wife|husband|partner|girlfriend|boyfriend|friend|boss|colleague|cousin|aunt|"
    r"uncle|grand\w+|neighbou?r|roommate|flatmate|forældre|mor|far|søster|bror|søn|datter|"
    r"børn|kone|mand|kæreste|ven|veninde|kollega)\b"
    r"|(?:^|\s)(родители|мать|отец|мама|папа|сестра|брат|жена|муж|сын|дочь|дети|друг|подруга|"
    r"коллега)\s"
    r"|の(両親|母親|父親|母|父|妹|姉|弟|兄|息子|娘|奥さん|妻|夫|旦那さん|彼女|彼氏|友人|友達|"
    r"同僚|子供|子ども)"
    r"|的(父母|妈妈|爸爸|妻子|丈夫|女朋友|男朋友|朋友|同事|孩子)"
)
# Only these families name an attribute by themselves; "schedule" (a clock time) says only
# that both state a time, so it also needs a shared word ("standup at 9:30" / "standup at 10").
_NEEDS_SHARED_WORD = frozenset({"schedule"})

_CHANGE = (
    r"\b(?:now|no longer|not anymore|any ?more|moved|moving|switched|switching|changed|"
    r"replaced|replacing|replaces|instead|since|became|become|has become|upgraded|"
    r"migrated|took over|taken over|handed (?:\w+ ){0,2}over|from now on|these days|"
    r"currently|as of|"
    r"starting|started|left|quit|retired|decommissioned|renamed|transferred|promoted|"
    r"rescheduled|postponed|shifted|sold|from (?:this|next) \w+ on|off the|went up|went down|"
    r"rebooked|no more|raised|increased|dropped)\b"
    r"|\b(?:nu|nu er|ikke længere|ikke mere|flyttet|flyttede|skiftet|skiftede|ændret|ændrede|"
    r"erstattet|erstattede|i stedet|siden|blevet|blev|overtaget|overtog|fra nu af|"
    r"startet|startede|rykket|rykkede|rykker|fremover|hævet|hævede|sænket|fra nu)\b"
    r"|(?:теперь|сейчас|больше не|уже не|переех\w*|перешл?[её]л|перешла|сменил\w*|"
    r"заменил\w*|заменён\w*|поменял\w*|вместо|стал[аио]?\b|"
    r"с тех пор|перенес\w*|перенёс\w*|переназначил\w*|уволил\w*|перевел\w*|перевёл\w*|"
    r"ушл?[аи]? из|ушёл из|отключил\w*|поднял\w*|подорожал\w*|снизил\w*)"
    r"|(?:今は|今では|現在|もう|引っ越|変更|変わ|替え|代わり|交代|移転|移っ|移し|"
    r"になりました|になった|ことになった|ことにした|乗り換え|切り替え|異動|転職|退職|後任|引き継|移行|延び|"
    r"更新|再開|手放)"
    r"|(?:现在|已经|不再|搬到|换成|改为|改成|变成|替换|换了|改到)"
)
_EVENT = (
    r"\b(?:visited|went|traveled|travelled|flew|met|attended|saw|watched|bought|had (?:a|an|"
    r"dinner|lunch|breakfast|coffee)|ate|called|celebrated|hiked|ran|played|won|lost|"
    r"spent|took a|stayed|toured)\b"
    r"|\b(?:besøgte|var i|var på|rejste|fløj|mødte|deltog|så|købte|spiste|fejrede|vandrede|"
    r"spillede|vandt|tabte|boede på)\b"
    r"|(?:побывал\w*|ездил\w*|съездил\w*|встретил\w*|посетил\w*|купил\w*|ходил\w*|сходил\w*|"
    r"летал\w*|слетал\w*|отметил\w*|поужинал\w*|смотрел\w*)"
    r"|(?:行った|行きました|訪れ|訪問|会った|会いました|買った|買いました|見た|見ました|"
    r"食べた|旅行|出張|参加)"
    r"|(?:去了|参观|见了|买了|看了|吃了|旅游)"
)
_MANY = (
    r"\b(?:plays?|playing|speaks?|speaking|has an?|have an?|owns an?|likes?|loves?|enjoys?|"
    r"learns?|learning|collects?|knows?|is allergic|visited|has been to|can)\b"
    r"|\b(?:spiller|taler|har en|har et|har været|kan lide|elsker|lærer|samler|kan)\b"
    r"|(?:играет|говорит|есть (?:собака|кошка)|любит|учит|собирает|умеет|бывал\w*)"
    r"|(?:弾け|弾く|話せ|話す|飼って|好き|習って|集めて|できる|行ったことがある)"
    r"|(?:会说|会弹|喜欢|养了|去过)"
)
_ADDITIVE = (
    r"\b(?:also|as well|too|in addition|another|besides)\b|\b(?:også|desuden|endnu en)\b"
    r"|(?:тоже|также|ещё один|еще один|ещё одн|кроме того)"
    r"|(?:[^\s]も(?:[^\s]{0,8})(?:始め|飼|習|弾))"
    r"|(?:也|还)"
)
_HOUSEHOLD = (
    r"\b(?:lives? with|living with|moved in with|bor sammen med|bor med)\b|(?:живёт с|живет с|"
    r"живут с)|(?:と一緒に住|と暮らし|と同居)|(?:和.{1,6}住|同居)"
)
_ARTICLES = frozenset("the a an our my his her their its this that den det en et de".split())  # noqa: SIM905 - a word list reads better as text


@functools.cache
def _compiled() -> tuple[dict[str, re.Pattern[str]], re.Pattern[str], re.Pattern[str],
                         re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str],
                         re.Pattern[str]]:
    """Compiled on first use: recall imports this module for every query."""
    return ({name: re.compile(rx) for name, rx in _FAMILIES.items()}, re.compile(_CHANGE),
            re.compile(_EVENT), re.compile(r"(?<!\S)joined (?=[A-Z0-9])"),
            re.compile(r"[^\W\d_][\w'-]*"), re.compile(_RELATION), re.compile(_MANY),
            re.compile(_HOUSEHOLD))


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@functools.lru_cache(maxsize=8192)
def families(text: str) -> frozenset[str]:
    """The attribute families a statement words (see ``_FAMILIES``)."""
    table, _, _, joined, _, _, _, household = _compiled()
    plain = _plain(text)
    found = {name for name, rx in table.items() if rx.search(plain)}
    if "residence" in found and household.search(plain):  # "lives with", not "lives in"
        found = (found - {"residence"}) | {"household"}
    if joined.search(unicodedata.normalize("NFKC", text)):  # "joined Globex", not "the club"
        found.add("employer")
    return frozenset(found)


@functools.lru_cache(maxsize=8192)
def additive(text: str) -> bool:
    """Whether a statement adds one more of something ("also", "også", "тоже", "も")."""
    return bool(_additive().search(_plain(text)))


@functools.cache
def _additive() -> re.Pattern[str]:
    return re.compile(_ADDITIVE)


@functools.lru_cache(maxsize=8192)
def many_valued(text: str) -> bool:
    """Whether a statement tells of one of several things a subject can have at once: plays,
    speaks, has, likes, learns (one may do all of them)."""
    return bool(_compiled()[6].search(_plain(text)))


@functools.lru_cache(maxsize=8192)
def relation(text: str) -> str:
    """The relative or pet a statement is about ("Alice's parents ..." -> "parents"), or ''."""
    m = _compiled()[5].search(_plain(text)[:80])
    return next((g for g in m.groups() if g), "") if m else ""


@functools.lru_cache(maxsize=8192)
@functools.lru_cache(maxsize=8192)
def words_change(text: str) -> bool:
    """Whether a statement words a change (moved, now, no longer, 変更, теперь, flyttet)."""
    return bool(_compiled()[1].search(_plain(text)))


@functools.lru_cache(maxsize=8192)
def is_event(text: str) -> bool:
    """Whether a statement tells of an event (visited, met, bought, 行った, побывал)."""
    return bool(_compiled()[2].search(_plain(text)))


def topic_words(text: str) -> list[tuple[str, str]]:
    """The adjacent content-word pairs of ``topic_phrases``, as written (case folded): stop
    words of English, Danish and Russian, articles, capitalised names and change words left
    out ("har skiftet" is no topic)."""
    return _topic_words(text)


@functools.lru_cache(maxsize=8192)
def _topic_words(text: str) -> list[tuple[str, str]]:
    from gitmem.parse.similarity import _DANISH_STOP, _RUSSIAN_STOP
    from gitmem.parse.textfold import STOPWORDS

    words = _compiled()[4].findall(unicodedata.normalize("NFKC", text))
    out: list[tuple[str, str]] = []
    previous = ""
    for word in words:
        low = word.casefold()
        content = (len(low) > 2 and low not in STOPWORDS and low not in _DANISH_STOP
                   and low not in _RUSSIAN_STOP and low not in _ARTICLES
                   and not word[:1].isupper() and not words_change(low))
        current = low if content else ""
        if previous and current:
            out.append((previous, current))
        previous = current
    return out


@functools.lru_cache(maxsize=8192)
def topic_phrases(text: str) -> frozenset[str]:
    """Two adjacent content words ("gateway host", "build server"): what a statement without
    a shared entity can still be about; words cut to five letters (a crude stem: "hosts" meets
    "host")."""
    return frozenset(f"{a[:5]} {b[:5]}" for a, b in _topic_words(text))


def newest_replacing(older: Statement, candidates: Sequence[Statement],
                     common: frozenset[str] = frozenset()) -> tuple[Statement, Basis] | None:
    """The first of ``candidates`` (newest first) that replaces ``older``, with the basis: a
    declared replacement wins over the rule's, wherever it stands."""
    declared = next((c for c in candidates if declares(c, older)), None)
    if declared is not None:
        return declared, "declared"
    for cand in candidates:
        basis = replaces(cand, older, common)
        if basis is not None:
            return cand, basis
    return None
