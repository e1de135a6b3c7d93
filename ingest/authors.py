"""Authors of a paper from its first page: the names printed between the title and the abstract.

The lines under the title hold names, affiliations, addresses, e-mails and footnote marks, in
every layout there is: one comma-separated list ("A, B, and C"), a grid of name / affiliation /
e-mail columns, ACM's "NAME, Affiliation, Country" lines. Each line is cut into segments (at
commas, "and", superscript marks, wide gaps between the pieces pypdf reports) and each segment is
kept when it reads as a person's name: capitalised words, initials and particles, no digits, no
organisation or place words (a run of four words or more is several names printed apart). A line
is an author line when its names outnumber its other segments; a line of names right under an
affiliation, without the wider gap that starts a new author block, is an address ("Mountain
View") and is left out."""

from __future__ import annotations

import re
import unicodedata

from ingest.page_lines import Line, letters

_SEP = "\x1f"
# TeX sets an accented letter as a spacing accent then the letter ("Herv´e"): pypdf keeps both.
_ACCENTS = {"´": "\u0301", "`": "\u0300", "¨": "\u0308", "˘": "\u0306", "ˆ": "\u0302", "˜": "\u0303",
            "¸": "\u0327", "ˇ": "\u030c", "˚": "\u030a", "˝": "\u030b", "˙": "\u0307"}  # fmt: skip
_ACCENTED = re.compile(f"([{''.join(_ACCENTS)}]) ?([A-Za-zıȷ])")
_EMAIL = re.compile(r"\{[^}]*\}\s*@\S+|\S+@\S+|https?://\S+|<[^>]*>@\S+")
_ORCID = re.compile(r"\[[\dX\s\-−–]{15,}\]")
# Where one name ends: list punctuation, "and", footnote and affiliation marks, digits.
_SPLIT = re.compile(r"\s*(?:\n|,|;|\band\b|&|·|•|\||\x1f|[∗*†‡§¶⋆♦♣♠♥□■⋄◇⇤#]|\d+)\s*")
_PARTICLES = {"van", "von", "der", "den", "de", "del", "della", "di", "da", "dos", "du", "la", "le",
              "bin", "al", "ter", "ten", "zu", "y", "et"}  # fmt: skip
# Words of organisations, titles and notes that a name never contains.
_NOT_NAME = {
    "university", "institute", "institut", "department", "dept", "school", "college", "laboratory",
    "laboratories", "laboratoire", "lab", "labs", "centre", "center", "research", "science",
    "sciences", "engineering", "technology", "technologies", "inc", "ltd", "llc", "gmbh", "corp",
    "corporation", "company", "group", "team", "deepmind", "google", "microsoft", "facebook",
    "meta", "openai", "ibm", "nvidia", "amazon", "apple", "adobe", "intel", "bytedance", "alibaba",
    "tencent", "baidu", "huawei", "samsung", "salesforce", "foundation", "academy", "hospital",
    "faculty", "division", "national", "international", "ecole", "école", "normale", "polytechnique",
    "senior", "member", "fellow", "ieee", "acm", "student", "preprint", "draft", "abstract", "equal",
    "contribution", "corresponding", "author", "authors", "email", "e-mail", "correspondence",
    "computer", "computing", "informatics", "mathematics", "physics", "statistics", "artificial",
    "intelligence", "machine", "learning", "road", "street", "avenue", "square", "campus", "kingdom",
    "states", "republic", "usa", "published", "conference", "proceedings", "journal", "workshop",
    "arxiv", "manuscript", "version", "demo", "code", "project",
}  # fmt: skip
_NOT_NAME_STEMS = ("universit", "institu", "laborat", "departm", "technolog", "scien", "engineer")
_PLACES = re.compile(
    r"\b(new york|mountain view|san francisco|san diego|san jose|palo alto|menlo park|los angeles|"
    r"hong kong|tel aviv|ann arbor|santa barbara|santa cruz|santa clara|college park|chapel hill|"
    r"abu dhabi|new jersey|new delhi|new haven|stony brook|united kingdom|united states|south korea)\b"
)
_END_OF_BLOCK = re.compile(
    r"^(abstract|keywords|key words|index terms|ccs concepts|acm reference|introduction|"
    r"(1|i)\.?\s+introduction)\b",
    re.IGNORECASE,
)


def opens_body(line: str) -> bool:
    """A heading that ends the front page's title, author and abstract blocks."""
    return bool(_END_OF_BLOCK.match(line.strip()))


_MAX_LINES_BEFORE_NAMES = 6  # lines under the title without a name: not an author block
_NEW_BLOCK_GAP = 1.55  # a gap of this many type sizes starts another author's block


def authors_below(lines: list[Line], title_bottom: float) -> list[str]:
    """The names printed under the title (whose last line sits at `title_bottom`), in order.
    `lines` are the page's lines without the text of its figures."""
    names: list[str] = []
    previous: str | None = None  # the previous line's text when it was an author line
    previous_y = title_bottom
    before_names = 0
    for line in sorted(lines, key=lambda ln: -ln.y):
        text = line.text.strip()
        if line.y >= title_bottom - 1 or letters(text) < 2:
            continue
        if opens_body(text) or is_prose(text):
            break
        segments = _segments(line)
        close = previous_y - line.y < _NEW_BLOCK_GAP * line.size
        if previous is not None and close and _continues_name(previous, segments):
            # a name broken at the line's end: "..., Benjamin Charles Germain" / "Lee, Jacob ..."
            names[-1] = f"{names[-1]} {segments.pop(0)}"
        found = names_in(segments)
        # Names right under an affiliation, as close as its lines are to each other, are part of
        # it (a city: "Mountain View"); another author's block starts after a wider gap.
        new_block = previous is not None or not names or previous_y - line.y >= _NEW_BLOCK_GAP * line.size
        if found and new_block:
            names.extend(n for n in found if n not in names)
            previous = _clean(_joined(line)).rstrip()
        else:
            previous = None
            if not names:
                before_names += 1
                if before_names > _MAX_LINES_BEFORE_NAMES:
                    break
        previous_y = line.y
    return names


def names_in(segments: list[str]) -> list[str]:
    """The names on an author line (its segments), or [] when the line is not one."""
    found: list[str] = []
    others = 0
    for segment in segments:
        name = as_name(segment)
        if name:
            found.extend(_split_run(name))
            continue
        if found and not others and _is_organisation(segment):
            return found  # ACM: "NAME, Affiliation, Country": the names that open the line
        others += 1
    return found if found and len(found) >= others else []


def _continues_name(previous: str, segments: list[str]) -> bool:
    """The line opens with the last word of the name that ended the previous line, unbroken by a
    comma or a mark, and goes on with more names."""
    return (
        previous[-1:].isalpha() and len(segments) > 1 and _kind(segments[0]) == "word"
        and bool(names_in(segments[1:]))
    )  # fmt: skip


def _segments(line: Line) -> list[str]:
    """The line cut where one name can end; pieces without two letters (marks, "()") dropped."""
    return [s.strip(" .") for s in _SPLIT.split(_clean(_joined(line))) if letters(s) >= 2] or [""]


def as_name(segment: str) -> str | None:
    """The segment as a person's name ("Aidan N. Gomez", "LUCY LU WANG" -> "Lucy Lu Wang"), or
    None when it is not one."""
    tokens = segment.strip(" .").split()
    if not 2 <= len(tokens) <= 12 or re.search(r"[@:/()\[\]{}=+<>\d]", segment):
        return None
    if _is_organisation(segment) or _PLACES.search(segment.lower()):
        return None
    if all(_is_capitals(t) for t in tokens):  # ACM prints names in capitals
        tokens = [t if _is_initial(t) else _title_case(t) for t in tokens]
    kinds = [_kind(t) for t in tokens]
    if None in kinds or kinds[0] not in ("word", "initial") or kinds[-1] not in ("word", "letter"):
        return None
    if "letter" in kinds[:-1] or kinds.count("word") + kinds.count("letter") < 2:
        return None
    return " ".join(tokens)


def _split_run(name: str) -> list[str]:
    """Names printed apart but reported as one run of words ("Kaiming He Xiangyu Zhang"): a name
    is its given names, initials and particles up to a second word; short runs are one name."""
    tokens = name.split()
    if sum(_kind(t) == "word" for t in tokens) < 4:
        return [name]
    out: list[list[str]] = [[]]
    for token in tokens:
        current = out[-1]
        if sum(_kind(t) == "word" for t in current) >= 2 and _kind(token) != "particle":
            out.append(current := [])
        current.append(token)
    if len(out) > 1 and sum(_kind(t) == "word" for t in out[-1]) < 2:
        out[-2].extend(out.pop())  # an odd word left over: a three-word name
    return [" ".join(name_tokens) for name_tokens in out]


def _kind(token: str) -> str | None:
    if _is_organisation(token):
        return None
    if token in _PARTICLES:
        return "particle"
    if _is_initial(token):
        return "initial"
    if len(token) == 1 and token.isupper():
        return "letter"  # a one-letter family name ("Weinan E")
    if (
        len(token) >= 2
        and token[0].isupper()
        and any(ch.islower() for ch in token)
        and all(ch.isalpha() or ch in "-’'" for ch in token)
    ):
        return "word"
    return None


def _is_initial(token: str) -> bool:
    return re.fullmatch(r"(?:[A-Z][a-z]?\.)(?:-?[A-Z]\.)*", token) is not None


def _is_capitals(token: str) -> bool:
    if _is_initial(token):
        return True
    word = re.sub(r"[-’']", "", token)
    return len(word) >= 2 and word.isalpha() and word.isupper() and bool(re.search(r"[AEIOUY]", word))


def _title_case(token: str) -> str:
    return re.sub(r"[^\W\d_]+", lambda m: m.group(0).capitalize(), token)


def _is_organisation(segment: str) -> bool:
    """Words of an organisation, title or note, which a name never has."""
    words = {w.lower() for w in re.findall(r"[^\W\d_]+", segment)}
    return bool(words & _NOT_NAME) or any(w.startswith(_NOT_NAME_STEMS) for w in words)


def _joined(line: Line) -> str:
    """The line's text with a separator where pieces sit apart (grid columns) or run together
    without a space ("Jonathan MallinsonJakub Adamek"), and none for superscript marks."""
    size = line.size
    out: list[str] = []
    previous = None
    for part in line.parts:
        if line.is_mark(part):  # affiliation, footnote, equal contribution
            out.append(_SEP)
            previous = None
            continue
        if previous is not None:
            end = previous.x + 0.5 * previous.height * len(previous.text)
            glued = previous.text[-1:].islower() and part.text[:1].isupper()
            if part.x - end > previous.height or part.x < previous.x - size or glued:
                out.append(_SEP)
        out.append(part.text)
        previous = part
    return "".join(out)


def _clean(text: str) -> str:
    text = _ACCENTED.sub(lambda m: unicodedata.normalize("NFC", m.group(2) + _ACCENTS[m.group(1)]), text)
    text = unicodedata.normalize("NFKC", text)
    text = _ORCID.sub(_SEP, text)
    # An address in small capitals comes in pieces ("ADAMSANTORO", "@", "GOOGLE", ".COM").
    text = re.sub(r"\x1f?@\x1f?", "@", text)
    text = re.sub(r"(@[\w.-]*)\x1f(?=\.)", r"\1", text)
    return _EMAIL.sub(_SEP, text)


def is_prose(text: str) -> bool:
    """A sentence (the abstract without its heading, a footnote), not a name or an address."""
    words = re.findall(r"[^\W\d_][\w'’-]*", _EMAIL.sub(" ", text))
    lower = [w for w in words if w[0].islower() and w not in _PARTICLES and w != "and"]
    return len(words) >= 8 and len(lower) >= 0.5 * len(words)
