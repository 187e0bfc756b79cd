"""Danish."""

from __future__ import annotations

from gitmem.lang import Language

_W = r"[\w.+:/@!'-]+"
_THE = r"(?:den |det |de |vores |min |mit |sin |sit |hans |hendes |deres |en |et )?"

LANGUAGE = Language(
    code="da",
    families={
        "residence": (r"bor(?: nu| stadig| fortsat)? (?:i|på)|boede i|bosat i|flyttet til|"
                      r"flyttede til|flytter til|"
                      r"flytte til|er flyttet|ny adresse|adressen er|har købt (?:hus|lejlighed) i"),
        "employer": (r"arbejder (?:hos|på|for|i)|arbejdede (?:hos|på|for|i)|job (?:hos|på|i)|"
                     r"nyt job|nye job|ansat (?:hos|på|i)|startede (?:hos|på|i)|sagt op|"
                     r"begynder (?:hos|på)|skifter job"),
        "partner": r"gift med|blevet gift|forlovet|skilt|er sammen med|kæreste med",
        "name": r"hedder nu|kaldes nu|omdøbt|navnet er",
        "age": r"\d+ år gammel|fyldte \d+|fylder \d+|er \d+ år",
        "manager": r"refererer til|ny chef|nærmeste leder er|chefen er",
        "email": r"mail(?:adresse)? er|ny mail|\S+@\S+\.\w+",
        "phone": (r"nummer er|nyt nummer|mobil(?:nummer)? er|telefon(?:nummer)? er|"
                  r"skiftet (?:tlf\.? ?)?nummer|telefonnummer(?:et)? er"),
        "vehicle": r"kører i en|kører en|ny bil|købt en bil|har fået en bil",
        "diet": r"veganer|vegetar|spiser ikke kød|spiser kød igen|glutenfri",
        "leave": r"på barsel|på orlov|barselsorlov|tilbage på arbejde|tilbage fra barsel",
        "hospital": r"indlagt|indlæggelse|udskrevet",
        "commute": (r"pendler|cykler på arbejde|kører på arbejde|tager (?:toget|bussen) på arbejde|"
                    r"cykler nu|kører nu i"),
        "study": (r"studerer (?:på|i)|læser (?:på|til)|læser \w+ (?:på|i)|skiftet studie|"
                  r"går i skole|startede i skole|optaget på|går i \d+\.? klasse|"
                  r"(?:skiftet|flyttet) til (?:en |et )?[\w-]*skole"),
        "password": r"kodeord(?:et)? er|adgangskode(?:n)? er|koden er nu",
        "role": (r"leder (?!af\b)[\w-]+(?:et|en)\b|er formand|formand for|er valgt som|"
                 r"overtaget efter|ansvarlig for|"
                 r"ansvaret for|står for|tovholder|har overtaget|overtog|"
                 r"overtager|leder (?:af )?projektet|er leder af"),
        "place": r"sidder på|holdes (?:i|på)|ligger (?:på|i) \w+ sal|på \w+ sal|lokalet er",
        "tool": (r"kører på (?!arbejde)|ligger på|gemmes (?:i|på)|migreret til|flyttet over på|"
                 r"gået over til|skiftet til"),
        "status": r"sat på pause|genoptaget|stoppet|lukket ned|aflyst",
        "endpoint": r"lytter på (?:port )?\d+|kører på port|porten er|adressen er https?://",
        "habit": r"ryger|stoppet med at ryge|holdt op med at ryge",
        "team": r"er på \w+teamet|skiftet til \w+teamet|flyttet til \w+teamet|i afdelingen",
        "schedule": (r"kl\.? ?\d{1,2}|klokken \d{1,2}|\d{1,2}[:.]\d{2}|"
                     r"(?:mandag|tirsdag|onsdag|torsdag|fredag|lørdag|søndag)(?:e|en)?"),
        "deadline": r"frist(?:en)? er|senest|fornyes|udløber",
        "care": r"(?:dyrlæge|læge|tandlæge|udlejer)(?:n)? er",
        "provider": (r"konto i|konto hos|bank(?:en)? er|skiftet bank|skiftet udbyder|"
                     r"udbyder(?:en)? er|abonnement hos|forsikret hos"),
        "household": r"bor sammen med|bor med",
        "birthday": r"fødselsdag er|har fødselsdag|født den|blev født",
    },
    attribute_nouns={
        "residence": r"adresse|adressen|bopæl|lejlighed",
        "employer": r"job|jobbet|arbejde|arbejdsplads|arbejdsgiver|firma",
        "partner": r"kone|mand|kæreste|hustru|ægtefælle|forlovede",
        "name": r"navn|navnet|efternavn",
        "manager": r"chef|chefen|leder|nærmeste leder",
        "email": r"mail|mailen|e-mail|mailadresse",
        "phone": r"nummer|nummeret|telefon|telefonnummer|mobil|mobilnummer",
        "vehicle": r"bil|bilen|cykel",
        "password": r"kodeord|adgangskode|wifi-kode|kode",
        "birthday": r"fødselsdag|fødselsdato",
        "care": r"læge|lægen|dyrlæge|tandlæge|udlejer",
        "role": r"rolle|titel|stilling",
    },
    change=(r"nu|nu er|ikke længere|ikke mere|flyttet|flyttede|skiftet|skiftede|ændret|ændrede|"
            r"erstattet|erstattede|i stedet|blevet|blev|overtaget|overtog|fra nu af|startet|"
            r"startede|rykket|rykkede|rykker|fremover|hævet|hævede|sænket|solgt|solgte|"
            r"udskiftet|udskiftede|gået over til|har solgt"),
    old_value=(
        rf"\b(?:erstattede|erstattet|udskiftede|udskiftet) {_THE}(?P<old>{_W}(?: {_W})?)"
        r" (?:med|af)\b",
        rf"\bskiftet? {_THE}(?P<old>{_W}(?: {_W})?) ud\b",
        rf"\bskiftede {_THE}(?P<old>{_W}(?: {_W})?) ud\b",
        rf"\b(?:flyttet|flyttede|skiftet|skiftede|ændret|ændrede|rykket|rykkede) "
        rf"(?:[\w-]+ ){{0,4}}?fra {_THE}(?P<old>{_W}(?: {_W})?) til\b",
        rf"\bi stedet for {_THE}(?P<old>{_W}(?: {_W})?)",
        rf"\b(?:overtaget|overtog|overtager) (?:[\w-]+ ){{0,4}}?(?:efter|fra) (?P<old>{_W})",
        rf"(?:^|[,;.] )(?P<old>{_W}) (?:har )?(?:givet|overdraget|afleveret) (?:[\w-]+ ){{0,4}}?"
        r"(?:videre )?til\b",
        rf"\b(?:solgte|har solgt|solgt) {_THE}(?P<old>{_W}(?: {_W})?)",
        rf"\bikke længere (?:hos|på|i|med) {_THE}(?P<old>{_W})",
        rf"(?:^|[,;.] ){_THE}(?P<old>{_W}) (?:er|blev) (?:lukket|nedlagt|udfaset|stoppet)\b",
    ),
    continuity=r"stadig|fortsat|fortsætter|beholder|bliver ved|som før|uændret",
    plan=(r"skal|vil|planlægger|planen er|har besluttet|besluttede|beslutning"),
    event=(r"besøgte|var i|var på|rejste|fløj|mødte|deltog|så|købte|spiste|fejrede|vandrede|"
           r"spillede|vandt|tabte"),
    many=r"spiller|taler|har en|har et|har været|kan lide|elsker|lærer|samler|kan",
    additive=r"også|desuden|endnu en|endnu et|ekstra",
    household=r"bor sammen med|bor med",
    possessive=(r"(?:(?<![\w])(?P<pronoun>(?i:hans|hendes|deres|vores|sin|sit|sine|min|mit|"
                r"mine))(?=\s)|"
                r"(?<![\w])(?P<owner>[A-ZÆØÅ][\w-]+?)(?:'s|"
                r"s))\s+(?P<noun>(?i:[a-zæøå][\w-]*)(?: (?i:[a-zæøå][\w-]*))?)"
                r"(?P<after>.{0,14})"),
    copula=r"er|var|blev|er nu|er blevet|skiftet til",
    qualifiers=r"arbejds\w*|privat\w*|hjemme\w*|mobil\w*|sommer\w*|ekstra|reserve\w*",
    first_person=r"jeg|vi|min|mit|mine|vores|mig|os",
    relations=(r"forældre|mor|far|søster|bror|søskende|søn|datter|børn|barn|familie|ven|"
               r"venner|veninde|kollega|kolleger|fætter|kusine|onkel|tante|nabo|naboer|team|"
               r"teamet|hold|holdet|afdeling|afdelingen|kontor|kontoret|gruppe|gruppen|hund|"
               r"hunden|kat|katten|klub|klasse|firmaet"),
    judgements={
        "quality": (r"gode? nok|godt? nok|god|godt|gode|fin|fint|fine|fremragende|glimrende|super|"
                    r"udmærket",
                    r"dårlig\w*|elendig\w*|ringe"),
        "preference": (r"foretrækker|kan (?:godt )?lide|elsker|synes godt om", r"hader"),
        "reliability": (r"pålidelig\w*|stabil\w*|virker fint|kører fint|(?:ingen|uden) "
                        r"(?:afbrydelser|nedbrud|problemer|fejl)",
                        r"upålidelig\w*|ustabil\w*|går ned|crasher|nedbrud"),
        "speed": (r"hurtig\w*", r"langsom\w*|langsomme|sløv\w*|tung\w*"),
        "cost": (r"billig\w*", r"dyr|dyre|dyrt"),
        "value": (r"pengene værd|det værd", r"spild af penge"),
        "ease": (r"nem\w*|let|lette|enkel\w*|praktisk\w*",
                 r"besværlig\w*|bøvlet\w*|kompliceret|irriterende|svær\w*"),
        "noise": (r"stille|rolig", r"støjende|larmende|for mange notifikationer"),
        "care": (r"grundig\w*|omhyggelig\w*", r"sjusket\w*|sjuskede|skødesløs\w*"),
        "punctuality": (r"punktlig\w*|til tiden", r"forsinket|kommer for sent"),
        "suitability": (r"(?:det )?rigtige (?:valg|værktøj)|det rette valg|ideel\w*|"
                        r"passer godt|velegnet",
                        r"forkerte valg|uegnet"),
        "usefulness": (r"nyttig\w*|brugbar\w*", r"ubrugelig\w*|nytteløs\w*"),
        "efficiency": (r"sparer (?:\w+ )?tid|effektiv\w*", r"spild af tid|ineffektiv\w*"),
        "clarity": (r"klar|klare|tydelig\w*|forståelig\w*", r"uklar\w*|utydelig\w*"),
    },
    negation=r"ikke|ingen|aldrig|ikke længere|ikke mere",
    ended=(r"holdt op med at bruge|holdt op med|stoppede med at bruge|stoppet med|"
           r"bruger ikke .{0,30}? mere|bruger ikke længere|har droppet|droppede|droppet|opgav|"
           r"skiftet væk fra"),
)
