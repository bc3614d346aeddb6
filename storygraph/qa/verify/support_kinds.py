"""Is the answer of the kind the question asks for? A name for "what is X's name" (issue 27,
docs/ISSUES.md#support-quotes).

The support check's name check confirmed a name that is merely in a source: 「…お婆さんの名前
は？」 → 「谷川の末です。」 (谷川, the river she washed in, is in the sentence about her). A
question asking for a name is answered by a name only where a source gives it as one: the
name followed by a naming verb (白という犬, 讃岐の造麻呂といふ, 赫映姫と名をつけ), after a word
for name (名は讃岐の造麻呂), or in apposition after the noun the question asks the name of
(飼犬の白 for 飼犬の名前); in English after "named" / "called" or "name is / was".

The question room reads the kind off the question's words (`QuestionAnalysis.asked_kind`,
storygraph.qa.question.question_words: "name" for 名前 / 名 / name, "" for any other question:
those keep the checks they had) and the noun it asks the name of (`QuestionAnalysis.name_owner`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from storygraph.text.normalize import normalize_name

_JA_NAMING_AFTER = r"[」』]?(?:と(?:いう|いふ|言う|言ふ|申す|申し|呼|名|つけ)|って)"
_JA_NAMING_BEFORE = r"名前?(?:は|を|が)[「『]?"
_EN_NAMING_BEFORE = r"(?:named|called|name (?:is|was))\s+(?:the\s+)?"
_NAMING_TAIL = re.compile(r"(?:と(?:いう|いふ|言う|言ふ|申す)(?:の|もの)?)$")


def given_as_name(owner: str, names: Sequence[str], sources: Sequence[str]) -> str:
    """The first of `names` (the answer's words, its graph names) a source gives as a name
    (module docstring), "" when none is. The noun before の in apposition is `owner`, the one a
    Japanese question asks the name of (飼犬の名前: 飼犬の白; `QuestionAnalysis.name_owner`),
    any noun when it names none (a question read across languages)."""
    before = re.escape(normalize_name(owner)) if owner else r"[^\s、。「」]"
    for name in names:
        wanted = normalize_name(_NAMING_TAIL.sub("", name.strip()).strip())
        if not wanted:
            continue
        key = re.escape(wanted)
        patterns = (
            key + _JA_NAMING_AFTER,
            _JA_NAMING_BEFORE + key,
            before + "の" + key + r"(?![\u4e00-\u9fff])",
            _EN_NAMING_BEFORE + key + r"\b",
        )
        if any(re.search(p, normalize_name(text)) for p in patterns for text in sources):
            return name
    return ""
