"""Judge the user's level (BSc / MSc / PhD) from what they write.

Explicit statements win ("I'm a PhD student"); otherwise the Flesch-Kincaid grade of the user's
own words and their use of field jargon decide. Once decided, a level stays for the conversation
unless the user states another one."""

from __future__ import annotations

import re

LEVELS = ("BSc", "MSc", "PhD")
TARGET_GRADE = {"BSc": 15.5, "MSc": 16.5, "PhD": 17.5}

_EXPLICIT = [
    (re.compile(r"\b(phd|ph\.d|doctoral|postdoc|researcher|professor|faculty)\b", re.I), "PhD"),
    (re.compile(r"\b(master'?s?|msc|m\.sc|graduate student|grad student)\b", re.I), "MSc"),
    (
        re.compile(
            r"\b(bachelor'?s?|bsc|b\.sc|undergrad\w*|freshman|sophomore|high school|beginner|newbie|"
            r"explain like|eli5|layman|simple terms|new to)\b",
            re.I,
        ),
        "BSc",
    ),
]
_JARGON = re.compile(
    r"\b(ablation|asymptotic|convergence|gradient|variational|posterior|stochastic|regulari[sz]ation|"
    r"embedding|attention|transformer|backprop\w*|hessian|eigen\w*|kernel|latent|entropy|bayesian|"
    r"manifold|lipschitz|convex|sota|fine-tun\w*|quantization|distillation|inductive bias|"
    r"sample complexity|generali[sz]ation bound|theorem|lemma)\b",
    re.I,
)


def explicit_level(text: str) -> str | None:
    for pattern, level in _EXPLICIT:
        if pattern.search(text):
            return level
    return None


def judge_level(text: str) -> tuple[str, str]:
    """(level, why) for one user message."""
    stated = explicit_level(text)
    if stated:
        return stated, "the user said so"
    from agent.readability import flesch_kincaid

    words = len(text.split())
    grade = flesch_kincaid(text) if words >= 6 else 8.0
    jargon = len(_JARGON.findall(text))
    score = grade + 2.5 * jargon
    if score >= 16:
        level = "PhD"
    elif score >= 11:
        level = "MSc"
    else:
        level = "BSc"
    return level, f"writing grade {grade:.1f}, {jargon} technical term(s)"


def decide_level(message: str, current: str | None) -> tuple[str, str, bool]:
    """(level, reason, changed) for the conversation after this message."""
    stated = explicit_level(message)
    if stated:
        return stated, "the user said so", stated != current
    if current:
        return current, "kept from earlier in the conversation", False
    level, why = judge_level(message)
    return level, why, True


LEVEL_STYLE = {
    "BSc": "The user is an undergraduate (BSc). Explain intuitively, define every technical term, "
    "prefer short sentences and a concrete example; avoid formulas unless asked.",
    "MSc": "The user is a graduate student (MSc). Assume core CS and ML background; explain methods "
    "precisely, name the key ideas and how they compare.",
    "PhD": "The user is a researcher (PhD). Be dense and precise: assumptions, methodology, "
    "quantitative results, limitations and open questions; use field terminology freely.",
}
