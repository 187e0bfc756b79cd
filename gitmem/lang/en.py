"""English."""

from __future__ import annotations

from gitmem.lang import Language

_W = r"[\w.+:/@!-]+"  # one word of a value: "bx-01", "9:30", "Model 3"'s parts
_THE = r"(?:the |our |my |his |her |their |its |a |an )?"

LANGUAGE = Language(
    code="en",
    families={
        "residence": (
            r"lives? in|lives? at|living in|resides? in|residing in|relocated to|"
            r"relocating to|moved (?:to|into|back to|out of|abroad)"
            r"(?! (?:the |our |their |his |her )?(?:[\w-]+ ){0,2}"
            r"(?:office|team|floor|room|desk|building|site|hub))|"
            r"moving (?:to|into|back to)|"
            r"moves (?:to|into|back to)|home is (?:in|now)|(?:home|postal|street) address|"
            r"based in|settled in|bought a (?:house|flat|place) in|rents? a (?:flat|place|room) in|"
            r"(?:have|has|got) a new (?:place|flat|house|apartment|address)|new address|"
            r"moved house"),
        "employer": (
            r"works? (?:at|for)|working (?:at|for)|worked (?:at|for)|job (?:at|with)|"
            r"employed (?:at|by)|hired (?:at|by)|new job|position at|joined [a-z0-9]|"
            r"started (?:a new job|at|with)|quit (?:his|her|their|my) job|resigned from|"
            r"left (?:his|her|their|my) job|intern(?:ing|ship)? at|is now (?:a |an )?\w+ at"),
        "partner": (
            r"married|engaged|divorced|is dating|are dating|broke up|separated from|"
            r"(?:his|her|their) (?:wife|husband|girlfriend|boyfriend|fianc[ée]e?|partner) is"),
        "name": r"(?:is|are|now|was|were|been|be|gets?) (?:called|named|renamed)|renamed|goes by",
        "age": r"\d+ years? old|turned \d+|is \d+ now",
        "manager": r"reports? to|reporting to|(?:new )?(?:manager|boss|supervisor|team lead) is",
        "email": r"e-?mail (?:is|address is)|new e-?mail|switched to \w+mail|\S+@\S+\.\w+",
        "phone": r"(?:phone|mobile|cell) (?:number )?is|new (?:phone |mobile )?number|"
                 r"number is \+?\d",
        "vehicle": r"drives? (?:a|an|the)|drove (?:a|an|the)|driving (?:a|an|the)|"
                   r"(?:got|bought) a (?:new |used )?car",
        "diet": (r"vegan|vegetarian|pescatarian|eats? (?:meat|fish) again|keto|gluten-free|"
                 r"eats only|only eats|feeds? (?:him|her|them|it)|on a [\w-]+ diet"),
        "leave": (r"on (?:parental|sick|maternity|paternity) leave|back at work|"
                  r"back from (?:leave|parental leave)|returned to work|"
                  r"back(?=!|[.,;]| at work| from| to work|$)"),
        "hospital": (r"in (?:the )?hospital|hospitali[sz]ed|admitted to|discharged|"
                     r"out of (?:the )?hospital"),
        "commute": r"commutes?|commuting|to work by|takes the (?:train|bus|tube|metro) to work",
        "study": (r"stud(?:ies|ying|ied) (?:at|in)|student at|enrolled (?:at|in)|majoring in|"
                  r"goes to (?:school|university|college)|started (?:school|university|college)|"
                  r"(?:goes to|started at|attends|moved to|changed to|switched to|transferred to) "
                  r"(?:[\w-]+ ){0,3}(?:primary|secondary|school|academy|college|university|"
                  r"kindergarten|nursery)|is in year \d"),
        "password": (r"password is|passphrase is|pin is|code is now|password,? it'?s|"
                     r"new password|(?:rotated|changed|reset) the (?:[\w-]+ ){0,2}password"),
        "status": (r"(?:is|was|are|were|got|has been|have been|been) (?:paused|on hold|resumed|"
                   r"cancell?ed|shut down|shelved|revived)|is live|went live|back on track|"
                   r"(?:paused|resumed|cancell?ed|shelved) the project"),
        "endpoint": (r"listens on (?:port )?\d+|(?:runs|is served|serves) on port|port is \d+|"
                     r"url is|endpoint is|(?:lives|is) at https?://"),
        "habit": r"smokes|smoking|quit smoking|stopped smoking|drinks alcohol|sober|teetotal",
        "team": (r"(?:is|are) on the [\w-]+ team|joined the [\w-]+ team|moved to the [\w-]+ team|"
                 r"transferred to|works? in the [\w-]+ team"),
        "role": (r"took over|takes over|handed (?:[\w-]+ ){0,3}over|hands (?:[\w-]+ ){0,3}over|"
                 r"passed (?:[\w-]+ ){0,3}on to|is now in charge|now runs|now leads|"
                 r""r"in charge of|responsible for|owns the|owner of|leads? (?:the|its|our|"
                 r"their)|"
                 r"leading the|is led by|is run by|run by|runs the|manag(?:es|ing) the|"
                 r"maintainer of|on call for|"
                 r"point of contact|takes care of|handles the|took over|taking over|"
                 r"hands? over|handed (?:\w+ ){0,2}over"),
        "place": (r"sits? on the|located (?:in|at|on)|held (?:at|in)|takes place (?:in|at)|"
                  r"is on the \w+ floor|moved (?:up |down )?to the \w+ floor|venue is"),
        "tool": (r"runs on|running on|hosted (?:on|at|by)|stored (?:in|on)|"
                 r"stores (?:its|their|the) \w+ in|migrated (?:to|from)|"
                 r"moved (?:\w+ )?(?:off|onto)|deployed (?:on|to)|backed up to"),
        "schedule": (r"\d{1,2}[:.]\d{2}|\d{1,2} ?(?:am|pm)|at (?:noon|midnight)|"
                     r"(?:at|to|until|from) \d{1,2}(?![.,]?\d|\s*(?:%|km|kg|gb|mb|th|st|nd|rd|"
                     r"people|days?|weeks?|years?|minutes|hours|ms|s|sec|seconds|mb|gb)\b)|"
                     r"mondays?|tuesdays?|wednesdays?|thursdays?|fridays?|saturdays?|sundays?|"
                     r"every (?:day|week|morning|evening)"),
        "deadline": (r"due (?:on|by|in)|deadline|expires? (?:on|in)|renews? (?:on|in)|"
                     r"postponed to|pushed (?:[\w-]+ ){0,3}(?:back )?to|brought forward to"),
        "price": (r"costs?|now costs|price is|prices? (?:went|go) up|went (?:up|down) to|"
                  r"raised (?:[\w-]+ ){0,2}to|increased to|dropped to|[£$€] ?\d|\d ?(?:kr|dkk|"
                  r"eur|usd)"),
        "care": (r"(?:vet|doctor|dentist|gp|physio|therapist|landlord) is|sees dr\.?|goes to dr\.?|"
                 r"new (?:vet|doctor|dentist|gp)|switched (?:vets?|doctors?|dentists?|gps?)"),
        "provider": (r"(?:bank|provider|carrier|isp|insurer|insurance|broadband|mobile plan|plan|"
                     r"tariff) (?:is|with)|banks? with|account (?:at|with)|is with [\w-]+ now|"
                     r"(?:switched|moved|changed) (?:my |our )?(?:bank|provider|carrier|isp|"
                     r"insurer|plan|tariff|broadband)"),
        "household": r"lives? with|living with|moved in with",
        "birthday": r"birthday is|born on|was born|date of birth",
    },
    attribute_nouns={
        "residence": r"address|home|flat|apartment|house",
        "employer": r"job|employer|company|workplace",
        "partner": r"wife|husband|partner|girlfriend|boyfriend|fianc[ée]e?|spouse",
        "name": r"name|surname|nickname",
        "age": r"age",
        "manager": r"manager|boss|supervisor|team lead|line manager",
        "email": r"e-?mail|e-?mail address",
        "phone": r"phone|mobile|cell|number|phone number|mobile number",
        "vehicle": r"car|vehicle|bike|motorbike",
        "diet": r"diet",
        "password": r"password|passphrase|pin|wifi password|wi-fi password",
        "birthday": r"birthday|date of birth|bday",
        "care": r"vet|doctor|dentist|gp|landlord|physio|therapist",
        "role": r"role|title|job title|position",
    },
    change=(r"now|no longer|not anymore|any ?more|moved|moving|moves|switched|switching|changed|"
            r"replaced|replacing|instead|became|has become|upgraded|migrated|took over|"
            r"taken over|handed (?:\w+ ){0,2}over|from now on|these days|as of|starting|"
            r"left|quit|retired|decommissioned|renamed|transferred|promoted|rescheduled|"
            r"postponed|shifted|sold|from (?:this|next) \w+ on|rebooked|no more|raised|"
            r"increased|dropped|rotated|since (?:the|then|\w+ \d{4})|pushed|brought forward|"
            r"closed|went up|went down|"
            r"swapped|retired|traded|traded in"),
    old_value=(
        rf"\breplac(?:ed|ing|es) {_THE}(?P<old>{_W}(?: {_W}){{0,2}}?)(?= with\b| by\b| as\b|"
        r"[,.;]|$)",
        rf"\bswitched (?:over )?(?:[\w-]+ ){{0,3}}?from {_THE}(?P<old>{_W}(?: {_W})?) to\b",
        rf"\bswapped {_THE}(?:[\w-]+'s )?(?P<old>{_W}(?: {_W})?) (?:for|with)\b",
        rf"\bmoved (?:[\w-]+ ){{0,3}}?(?:off|from|out of) {_THE}(?P<old>{_W}(?: {_W})?)"
        r"(?= onto\b| to\b| into\b|[,.;]|$)",
        rf"\b(?:no longer|not anymore) (?:at|in|with|on|using|uses|use|works? (?:at|for)|"
        rf"lives? in) {_THE}(?P<old>{_W})",
        rf"\binstead of {_THE}(?P<old>{_W}(?: {_W})?)",
        rf"\bsold {_THE}(?P<old>{_W}(?: {_W})?)",
        rf"\btraded (?:in )?{_THE}(?P<old>{_W}(?: {_W})?) (?:for|with)\b",
        rf"\b(?:moved|moves|moving|switched|switches|changed|rescheduled|shifted|raised|dropped|"
        rf"increased|lowered|upgraded|migrated|"
        rf"went) (?:[\w-]+ ){{0,4}}?from {_THE}(?P<old>{_W}(?: {_W})?) to\b",
        rf"(?P<old>{_W}) ?(?:→|->|=>) ?{_W}",
        rf"\bno more {_THE}(?P<old>{_W}(?: {_W})?)",
        rf"\b(?:took|takes|taken|taking) over (?:[\w-]+ ){{0,4}}?from (?P<old>{_W})",
        rf"\b(?:replacing|replaces|in place of|succeeds|succeeded) (?P<old>{_W})",
        rf"(?:^|[,;.] )(?P<old>{_W}) (?:handed|hands|passed) (?:[\w-]+ ){{0,4}}?(?:over|on) to\b",
        rf"(?:^|[,;.] ){_THE}(?P<old>{_W}(?: {_W})?) (?:\w+ )?(?:closed|shut down|(?:was |"
        rf"is )?retired|"
        r"decommissioned|is gone)\b",
    ),
    continuity=r"still|keeps|keep|continues|remains|stays|as before|as usual|unchanged|again",
    plan=(r"will|'ll|going to|plans? to|planned for|planning to|plan is to|decided to|decision|"
          r"intends? to|"
          r"about to|scheduled to"),
    event=(r"visited|went to|traveled|travelled|flew|met|attended|saw|watched|bought|"
           r"had (?:a|an|dinner|lunch|breakfast|coffee)|ate|called|celebrated|hiked|ran|"
           r"played|won|lost|spent|took a|stayed|toured"),
    many=(r"plays?|playing|speaks?|speaking|has an?|have an?|owns an?|likes?|loves?|enjoys?|"
          r"learns?|learning|collects?|knows?|is allergic|visited|has been to|can"),
    additive=r"also|as well|too|in addition|another|besides|second",
    household=r"lives? with|living with|moved in with",
    possessive=(r"(?:(?P<owner>[\w.-]+)(?:'s|’s|s'|’)|(?<![\w'])(?P<pronoun>(?i:his|her|their|my|"
                r"our|its)))\s+(?P<noun>(?i:[a-z][\w-]*)(?: (?i:[a-z][\w-]*))?)(?P<after>.{0,14})"),
    copula=r"is|was|are|were|has been|became|changed to|now|moved to|changed",
    qualifiers=(r"work|personal|private|home|office|mobile|landline|second|backup|spare|holiday|"
                r"summer|weekend"),
    first_person=r"i|i'm|i've|i'd|i'll|we|we're|we've|my|our|me|us",
    relations=(r"parents?|mother|father|mom|mum|dad|sister|brother|siblings?|son|daughter|"
               r"kids?|children|child|family|wife's|husband's|friend|friends|colleague|"
               r"colleagues|cousin|aunt|uncle|grand\w+|neighbou?rs?|roommate|flatmate|team|"
               r"group|department|company's|office|squad|band|club|class|dog|cat|pets?|"
               r"landlord's|car insurance|insurance|landline|boss's|manager's|partner's"),
    judgements={
        "quality": (r"good(?: enough)?|great|excellent|fine|solid|nice|decent|works? well|"
                    r"worked well|awesome|superb|brilliant|top-notch|impressive",
                    r"bad|poor|terrible|awful|mediocre|worse|lousy|subpar|disappointing"),
        "preference": (r"prefers?|preferred|likes?|liked|loves?|loved|enjoys?|enjoyed|fond of|"
                       r"favou?rs?",
                       r"dislikes?|disliked|hates?|hated|can'?t stand"),
        "reliability": (r"reliable|dependable|stable|rock[- ]solid|robust|works? fine|"
                        r"working fine|worked fine|(?:no|zero) (?:drops|outages|crashes|"
                        r"downtime|issues|problems|hiccups)|without (?:drops|issues|problems|"
                        r"hiccups|outages)",
                        r"unreliable|flaky|unstable|crash(?:es|ed|y)?|keeps (?:failing|crashing|"
                        r"breaking)|broken|breaks|fails|failing|drops out|outages?"),
        "speed": (r"fast|faster|quick|snappy|speedy|responsive",
                  r"slow|slower|sluggish|laggy|takes forever"),
        "cost": (r"cheap|cheaper|affordable|inexpensive",
                 r"expensive|pricey|costly|overpriced"),
        "value": (r"worth (?:it|the money|the price|paying for)|good value|pays off",
                  r"(?:a )?waste of money"),
        "ease": (r"easy|easier|simple|intuitive|convenient|straightforward|painless|handy|"
                 r"user-friendly",
                 r"hard to use|difficult|complicated|confusing|clunky|painful|cluttered|"
                 r"annoying|cumbersome|tedious|fiddly"),
        "noise": (r"quiet|calm", r"noisy|loud|overwhelming|distracting|spammy|"
                                 r"too many notifications"),
        "care": (r"careful|thorough|meticulous|diligent|attentive",
                 r"careless|sloppy|rushed|hasty"),
        "punctuality": (r"on time|punctual", r"late|always late|behind schedule|"
                                             r"misses deadlines"),
        "suitability": (r"the right|right (?:choice|call|tool|fit|pick|option)|best choice|"
                        r"ideal|perfect for|well suited|good fit|suits",
                        r"wrong (?:choice|call|tool|fit|pick)|bad fit|poor fit|unsuitable"),
        "usefulness": (r"useful|helpful|usable|valuable|indispensable",
                       r"useless|pointless|unusable|worthless"),
        "efficiency": (r"saves? (?:me |us |a lot of |lots of )?time|time-saver|productive|"
                       r"efficient",
                       r"waste of time|wastes? (?:my |our )?time|inefficient"),
        "clarity": (r"clear|readable|understandable|well written",
                    r"unclear|hard to read|vague"),
    },
    negation=(r"not|no|never|n't|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|"
              r"no longer|not anymore|hardly|barely|neither|nor"),
    ended=(r"stopped using|stopped relying on|no longer use|no longer using|"
           r"(?:don't|do not|doesn't) use|not using|gave up on|gave up|ditched|abandoned|"
           r"quit using|"
           r"moved (?:off|away from)|switched away from|uninstalled|cancell?ed (?:the |our |my )?"
           r"(?:subscription|plan|account)"),
)
