"""Questions with a date phrase that counts back from now ("two weeks ago", "last week").

Written before any rule was tuned on it. Eight weeks of one person's daily notes
(``memory/YYYY-MM-DD.md``, first-person ``## Log`` lines on work, cooking, sport, family, travel,
the garden, reading, errands and health; a minority of days also hold ``## Retain`` entries), dated
back from ``NOW``; some days have no note. Each ``Case`` asks about one line of them, in one of
three classes (the phrase's strict window is ``timeparse.find_query_window``'s; the runner asserts
each case's class against it):

- ``near``: people count back loosely; the answer is written a few days OUTSIDE the phrase's strict
  window, and the window holds loosely related lines (``mates``: the same broad area, a weaker
  match);
- ``inside``: the answer is inside the window, and a line a few days outside it (``distractor``)
  matches the question's words about as well or better;
- ``far``: the answer is inside the window and the topic recurs five or more weeks away
  (``distractor``), with a strong lexical match.

Answers often paraphrase the question (semantic recall matters); some share its words. A line
is ``Line(days_back, text)``: ``text`` is unique in the notes and is found on the note of
``NOW - days_back``. A line whose text starts with a Retain kind (``B:``, ``W @X:``) is written
in that day's ``## Retain`` section, the rest under ``## Log``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Literal

NOW = datetime(2025, 6, 20, 12, 0, tzinfo=UTC)  # a Friday
DAYS = 56  # notes from NOW - 56 days to yesterday
Klass = Literal["near", "inside", "far"]
CLASSES: tuple[Klass, ...] = ("near", "inside", "far")
_RETAIN = re.compile(r"^[WBOS](?:\(c=[0-9.]+\))?(?:\s+@\S+)*:")


@dataclass(frozen=True)
class Line:
    days_back: int
    text: str

    @property
    def day(self) -> date:
        return NOW.date() - timedelta(days=self.days_back)

    @property
    def path(self) -> str:
        return f"memory/{self.day.isoformat()}.md"

    @property
    def retain(self) -> bool:
        return bool(_RETAIN.match(self.text))


@dataclass(frozen=True)
class Case:
    id: str
    klass: Klass
    question: str
    answer: Line
    distractor: Line | None = None  # inside, far: the same topic outside the window
    mates: tuple[Line, ...] = field(default_factory=tuple)  # near: related lines in the window


L = Line
CASES: list[Case] = [
    # -- near: the answer a few days outside the strict window, weaker lines inside it
    Case("N1", "near", "What did I plant in the garden two weeks ago?",
         L(18, "Planted the twelve tomato seedlings along the fence, staked them with bamboo."),
         mates=(L(14, "Watered the lawn after work, it was bone dry."),
                L(12, "Read an article about composting kitchen scraps."))),
    Case("N2", "near", "Which novel did I start 5 days ago?",
         L(7, "Began 'The Overstory' by Richard Powers on the train home."),
         mates=(L(5, "Returned two overdue library books, paid the 20 kr fine."),
                L(5, "Read the newspaper's weekend supplement in bed."))),
    Case("N3", "near", "What did I cook for our guests a month ago?",
         L(39, "Lars and Mette over on Saturday; made a lamb tagine with apricots and couscous."),
         mates=(L(30, "Too tired to cook properly, just an omelette."),
                L(27, "Bought a cast iron pan at the kitchen shop."))),
    Case("N4", "near", "Where did I go for a run last week?",
         L(13, "Morning run: 10 km around Søndersø lake, a personal best."),
         mates=(L(9, "Gym session: legs and core, 45 minutes."),
                L(6, "Bought new running socks and gels."))),
    Case("N5", "near", "What did the doctor tell me yesterday?",
         L(2, "GP says the rash is contact dermatitis; prescribed a mild steroid cream."),
         mates=(L(1, "Picked up vitamin D at the pharmacy."),
                L(1, "Booked a dentist check-up for July."))),
    Case("N6", "near", "What did the mechanic say about the car three weeks ago?",
         L(26, "Mechanic at the garage in Vejle says the clutch is worn out, quote 7,800 kr."),
         mates=(L(22, "Washed the car and vacuumed the seats."),
                L(19, "Filled up the tank, diesel is expensive again."))),
    Case("N7", "near", "What did I repair around the house a week ago?",
         L(12, "Swapped the perished washer in the bathroom tap; no more dripping."),
         mates=(L(8, "Hung the new picture frames in the hallway."),
                L(6, "Picked up light bulbs and screws at the hardware store."))),
    Case("N8", "near", "Hvor tog vi børnene hen for to uger siden?",
         L(19, "Took the kids to the North Sea Oceanarium in Hirtshals; Emil loved the sharks."),
         mates=(L(15, "Helped Sofie with her maths homework, fractions again."),
                L(13, "Emil had a cold and stayed home from school."))),
    Case("N9", "near", "Which museum did we visit a couple of weeks ago?",
         L(9, "Spent the afternoon at ARoS; the rainbow panorama was packed with tourists."),
         mates=(L(16, "Watched a documentary about Danish design."),
                L(11, "Walked through the old town in the rain."))),
    Case("N10", "near", "What did I buy at the hardware store 3 days ago?",
         L(4, "Hardware store run: wood glue, sandpaper and two hinges for the shed door."),
         mates=(L(3, "Sanded the shed door, it needs another coat of paint."),)),
    Case("N11", "near", "What was my blood pressure a month ago?",
         L(40, "W: Blood pressure at the pharmacy machine was 128/82."),
         mates=(L(33, "Started taking magnesium before bed."),
                L(29, "Slept badly, woke at 4 and couldn't get back to sleep."))),
    Case("N12", "near", "What did I send my sister last week?",
         L(4, "Posted my sister Anna's birthday parcel: a wool scarf and the Crete photo book."),
         mates=(L(10, "Called Anna, she sounds stressed about the move."),
                L(7, "Wrote a postcard to Grandma."))),
    # -- inside: the answer inside the window, a same-topic line just outside it
    Case("I1", "inside", "Which restaurant did we try last week?",
         L(8, "Tried Mahalo, the Hawaiian poke place on Vestergade, for dinner; great tuna."),
         L(13, "Tried the new restaurant Bistro Nord with Mette, the duck was dry.")),
    Case("I2", "inside", "What did I bake 5 days ago?",
         L(5, "Baked a rye sourdough; the crumb finally came out properly open."),
         L(6, "Baked cinnamon buns for the school bake sale.")),
    Case("I3", "inside", "Which film did we watch yesterday?",
         L(1, "Movie night at home, we watched Past Lives; Mette cried at the end."),
         L(2, "Watched the new Dune film at the cinema, way too loud.")),
    Case("I4", "inside", "What did I discuss with my manager two weeks ago?",
         L(12, "1:1 with Karen: she wants me to lead the billing migration in Q3."),
         L(10, "Talked with my manager about the team offsite budget.")),
    Case("I5", "inside", "Where did we go hiking three weeks ago?",
         L(21, "Hiked the coastal trail at Mols Bjerge with Mette, 14 km, sore feet."),
         L(16, "Hiking in Rold Skov with the walking club, muddy but lovely.")),
    Case("I6", "inside", "What did I buy for the kitchen a month ago?",
         L(30, "B: Ordered a KitchenAid stand mixer while it was on sale."),
         L(23, "Bought new kitchen towels and a bread knife.")),
    Case("I7", "inside", "Which friend did I meet for coffee last week?",
         L(9, "Flat white with Jonas at Great Coffee; he starts a new job in Odense."),
         L(12, "Met Sara for coffee at the harbour café.")),
    Case("I8", "inside", "How far did I swim a week ago?",
         L(7, "Swam 40 lengths at Lyseng pool before work, mostly crawl."),
         L(11, "Swimming: 30 lengths, then the sauna.")),
    Case("I9", "inside", "先週の会議で何が決まった？",
         L(6, "Team meeting: we agreed to push the release to July 3."),
         L(12, "Meeting with design, we decided to drop dark mode for now.")),
    Case("I10", "inside", "Which bill did I pay a month ago?",
         L(33, "Paid the electricity bill for the quarter, 1,240 kr."),
         L(22, "Paid the water bill online.")),
    Case("I11", "inside", "What did the vet say 10 days ago?",
         L(10, "W @Bella: Bella's limp is a sprained paw; the vet says rest for a week."),
         L(12, "Took Bella to the vet for her yearly vaccinations.")),
    # -- far: the answer inside the window, the topic again five or more weeks away
    Case("F1", "far", "What did I grill yesterday?",
         L(1, "Chicken thighs with a yogurt marinade on the balcony grill."),
         L(45, "Grilled burgers at the first barbecue of the year.")),
    Case("F2", "far", "Which concert did we go to two weeks ago?",
         L(13, "Efterklang at Train, brilliant light show, ears still ringing."),
         L(52, "Went to a concert at Musikhuset, the symphony played Sibelius.")),
    Case("F3", "far", "What did I repair on my bike last week?",
         L(6, "Fixed the flat on the rear tyre before work."),
         L(48, "Repaired the bike's brakes, new pads on both wheels.")),
    Case("F4", "far", "How did Emil's football match go two days ago?",
         L(2, "Emil's team won 3-1 and he scored the second goal!"),
         L(50, "Football match: Emil's team lost 0-4 in the pouring rain.")),
    Case("F5", "far", "What birthday cake did I make six weeks ago?",
         L(41, "B @Mette: Made a chocolate layer cake with raspberries for Mette's birthday."),
         L(2, "Made a lemon birthday cake for Lars, his 40th.")),
    Case("F6", "far", "What did I pack for the trip 3 days ago?",
         L(3, "Packed for Copenhagen: the grey suit, chargers and the blue notebook."),
         L(44, "Packed the car for the trip to Skagen: bikes, beach tent, cooler.")),
    Case("F7", "far", "What did I learn in Spanish class two weeks ago?",
         L(15, "Spanish lesson: the subjunctive after 'ojalá' finally clicked."),
         L(53, "Spanish class: we practised ordering food and the past tense.")),
    Case("F8", "far", "Which board game did we play last week?",
         L(10, "Game night, Wingspan; Sofie won by a mile."),
         L(47, "Played Catan with the neighbours, board game night ran late.")),
    Case("F9", "far", "What did the plumber fix six weeks ago?",
         L(42, "The plumber replaced the boiler pressure valve, 1,900 kr."),
         L(3, "Plumber came back about the kitchen tap and fixed it in ten minutes.")),
    Case("F10", "far", "2週間前に誰の結婚式に行った？",
         L(16, "B @Mikkel @Ida: Went to Mikkel and Ida's wedding at the manor; danced until 2."),
         L(54, "My cousin Peter's wedding in Ribe, lovely speeches.")),
    Case("F11", "far", "What did I do about the car insurance 5 days ago?",
         L(5, "Switched the car insurance to Tryg, saves 2,100 kr a year."),
         L(49, "Car insurance renewal letter came, the price went up 12%.")),
]

# Everyday lines on other things, each written once (none answers a question).
FILLER: list[str] = [
    "Stand-up ran long, the deploy script broke again.",
    "Cleared my inbox down to twelve emails.",
    "Code review for Peter's caching change, left a few comments.",
    "Groceries: milk, oats, apples, coffee beans.",
    "Listened to a podcast about the history of salt on the commute.",
    "Fixed a flaky test in the invoicing service.",
    "Sunny and warm, ate breakfast outside.",
    "Paid for Sofie's school trip.",
    "Long call with the Berlin team about the API contract.",
    "Emil lost his house key again; had a copy made.",
    "Wrote the quarterly report draft.",
    "Mette worked late, I did bedtime.",
    "Changed the bed sheets and aired the duvets.",
    "Pairing session with Jonas on the search indexer.",
    "Renewed the parking permit online.",
    "Made pasta with pesto, kids happy.",
    "Headache in the afternoon, drank more water.",
    "Sorted old photos on the laptop.",
    "Incident at work: the queue backed up for an hour.",
    "Phone screen cracked, ordered a protector.",
    "Planned the sprint with the team.",
    "Emptied the dishwasher and cleaned the fridge.",
    "Updated my CV, just in case.",
    "Mum called, she's fine, knee is better.",
    "Soup and bread for dinner.",
    "Interviewed a candidate for the backend role.",
    "Tidied the garage a bit.",
    "Bought birthday candles and wrapping paper.",
    "Sofie has a sore throat, kept an eye on her.",
    "Wrote design notes for the export feature.",
    "Took the bins out, forgot last week.",
    "Cleaned the windows on the south side.",
    "Meal-prepped lentil salad for the week.",
    "Bella chewed a shoe.",
    "Backed up the laptop to the external drive.",
    "Watched football highlights with Emil.",
    "Warm evening, sat on the balcony with a beer.",
    "Ordered printer ink.",
    "Team lunch at the canteen, fish day.",
    "Mette's mum visited for tea.",
    "Sorted the kids' summer clothes.",
    "Migrated two dashboards to the new monitoring tool.",
    "Cancelled the unused streaming subscription.",
    "Made a big salad with feta and olives.",
    "Stretching and foam rolling in the evening.",
    "Rainy commute, soaked by the time I got in.",
    "Signed Emil up for summer football camp.",
    "Answered the landlord's email about the radiator check.",
    "Finished the tax return corrections.",
    "Wind took the patio umbrella over.",
    "Bought a present for Jonas's housewarming.",
    "Weekly planning, set three goals.",
    "Quick trip to the post office with a return.",
    "Production release went out smoothly.",
    "Fish tacos for dinner, a bit too spicy for Sofie.",
    "Kids' parent-teacher evening at school.",
    "Cut my hair short at the barber.",
    "Retro with the team, agreed to write fewer tickets.",
    "Defrosted the freezer.",
]

# Routine lines, written again on other days.
ROUTINE: list[str] = [
    "Did two loads of laundry.",
    "Took the recycling down.",
    "Worked from home, quiet day.",
    "Slow day, mostly meetings.",
    "Evening walk with Bella around the block.",
    "Vacuumed the whole flat.",
    "Cycled to work, headwind both ways.",
    "Lunch at my desk again, need to stop doing that.",
    "Read bedtime stories to Sofie, two chapters.",
    "Cleaned the bathroom.",
    "Emptied the dishwasher.",
    "Stand-up, then heads down on tickets all afternoon.",
    "Groceries after work.",
    "Rain most of the day.",
]

# Lines about other things, each written once.
MORE: list[str] = [
    "Synced with the data team about the nightly export job.",
    "Bought a new kettle, the old one started leaking.",
    "Sofie lost a tooth at school, very proud.",
    "Printed the boarding-pass template for the office trip.",
    "Reset the router, the internet kept dropping.",
    "Mette got her promotion confirmed, we opened a bottle of cava.",
    "Emil's swimming badge arrived in the post.",
    "Long queue at the pharmacy for Mette's allergy tablets.",
    "Set up the new monitor at work, finally two screens.",
    "Fog in the morning, beautiful over the bay.",
    "Wrote thank-you cards for Sofie's teachers.",
    "Renamed half the config keys in the billing service, tests pass.",
    "Took Bella to the dog park, she made a friend.",
    "Our neighbour's son helped carry the old sofa down.",
    "Security training at work, an hour of slides.",
    "Heat wave starting, opened all the windows at night.",
    "Got the summer tyres put back on the car.",
    "Sold the old pram on DBA for 600 kr.",
    "Mette and I planned the summer holiday budget.",
    "Fixed a memory leak in the worker process, big relief.",
    "Emil's class had sports day, he came home sunburnt.",
    "Watched the Champions League final with the neighbours.",
    "Sorted the receipts for the tax deduction.",
    "Hay fever is bad this week.",
    "Ordered school shoes for Emil, size 34.",
    "Deleted a thousand old photos from my phone.",
    "Trained the new intern on our deploy process.",
    "Walked to the bakery for rundstykker, Sunday ritual.",
    "Called the bank about the mortgage rate.",
    "Bella had a bath, the whole bathroom is wet.",
    "Tried the new standing desk setting, back feels better.",
    "Kids built a fort in the living room.",
    "Quarterly all-hands, good numbers.",
    "Stayed up too late reading the news.",
    "Replaced the batteries in the smoke alarms.",
    "Friday drinks with the team at the office.",
    "Signed the permission slip for Sofie's camp.",
    "Mum sent pictures from her trip to Bornholm.",
    "Wrote a long email to the landlord about the noisy pipes.",
    "Emil started learning the recorder, loudly.",
    "Thunderstorm in the evening, power flickered.",
    "Paid the kindergarten fee for June.",
    "Took the morning off to wait for a delivery.",
    "Mette's brother stayed the night on the sofa.",
    "Cleaned out the car boot.",
    "Picked strawberries at a farm stand on the way home.",
    "Ordered a birthday card for Grandpa.",
    "On-call week started, quiet so far.",
    "Fell asleep on the sofa at nine.",
    "Dropped off clothes at the Red Cross shop.",
]

# A few Retain entries on days without a question about them.
FILLER_RETAIN: list[str] = [
    "W @Jonas: Jonas lives in Aarhus C, near the train station.",
    "O(c=0.8) @Mette: Mette prefers the mountains to the beach for holidays.",
    "W @Sofie: Sofie's school starts at 8:10.",
    "B: Set up automatic savings of 1,000 kr a month.",
    "W @Karen: Karen is my manager since January.",
    "W @Bella: Bella is a four-year-old border collie.",
]

# Days back without a note (a day holding a question's line keeps its note).
SKIPPED = {51, 46, 43, 41, 38, 36, 34, 32, 31, 25, 24, 18, 17, 14}


def case_lines() -> list[Line]:
    out: list[Line] = []
    for c in CASES:
        out.append(c.answer)
        if c.distractor is not None:
            out.append(c.distractor)
        out.extend(c.mates)
    return out


def notes() -> dict[str, str]:
    """Path -> text of each daily note, deterministic."""
    return daily_notes(case_lines(), SKIPPED, FILLER + MORE, step=7, retain_at=4)


def daily_notes(lines: Sequence[Line], skipped: Collection[int], filler: Sequence[str], *,
                step: int, retain_at: int) -> dict[str, str]:
    """Path -> text of the daily notes of ``DAYS`` days back to yesterday: each day holds its
    ``lines``, then ``filler`` lines once each and ``ROUTINE`` ones up to 3..8 lines (chosen by
    ``step``), a ``FILLER_RETAIN`` entry every ninth day (at ``retain_at``); a day in
    ``skipped`` without a line has no note. Deterministic."""
    by_day: dict[int, list[str]] = {}
    for line in lines:
        by_day.setdefault(line.days_back, []).append(line.text)
    once = iter(filler)
    routine = iter(ROUTINE * 20)
    retain = iter(FILLER_RETAIN)
    out: dict[str, str] = {}
    for back in range(DAYS, 0, -1):
        texts = by_day.get(back, [])
        if back in skipped and not texts:
            continue
        want = 3 + (back * step) % 6  # 3..8 lines a day
        texts = texts + [next(once, None) or next(routine)
                         for _ in range(max(0, want - len(texts)))]
        if back % 9 == retain_at:
            texts.append(next(retain, ""))
        day = Line(back, "").day
        log = [t for t in texts if t and not _RETAIN.match(t)]
        kept = [t for t in texts if t and _RETAIN.match(t)]
        text = f"# {day.isoformat()}\n\n## Log\n" + "".join(f"- {t}\n" for t in log)
        if kept:
            text += "\n## Retain\n" + "".join(f"- {t}\n" for t in kept)
        out[Line(back, "").path] = text
    return out


def locate(notes_: dict[str, str], line: Line) -> tuple[str, int]:
    """(path, line number) of ``line`` in the notes; its text must occur once in them."""
    hits = [(p, n) for p, text in notes_.items()
            for n, row in enumerate(text.split("\n"), 1) if line.text in row]
    if len(hits) != 1 or hits[0][0] != line.path:
        raise ValueError(f"{line.text!r} found at {hits}, expected once in {line.path}")
    return hits[0]
