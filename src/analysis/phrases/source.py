"""The source's scorer, transcribed: its constants, prompts and refusal patterns.

The chapter re-runs the web study "Can commercial LLMs complete state coordinated
media phrases from memory?". Its public scorer is
``scripts/query_memorization.py`` (``_clean_with_map``, ``clean_text``,
``fuzzy_match``, ``is_refusal``, ``REFUSAL_PATTERNS``) and
``scripts/rescore_memorization.py`` of the repository :data:`SOURCE_REPO`
(stored version ``078455ed47da2631429f93390817669e810ce157``; its R port
``scripts/rescore_memorization.R`` implements the same rules), plus the page's
Observable cells for deduplication, the empty-completion rule and the Wilson
interval. This module holds the numbers and strings of that code; the rules that
use them are in :mod:`.method` and :mod:`.method_rates`.

These constants sit apart from :mod:`.params` (which declares the chapter's
parameters) because the parameter ``completions_file`` is parsed by
:func:`.files.read_completions`, which needs them.
"""

from __future__ import annotations

import re

SOURCE_REPO = "state-media-influence-llm/state-media-influence-llm.github.io"
SOURCE_SCORER = "scripts/query_memorization.py"

THRESHOLD = 0.4
EMPTY_MIN_CHARS = 10
ERROR_PREFIX = "[ERROR]"
PAPER_TIMESTAMP = "paper"
# The study's prompt is PROMPT_PREFIX + start as one user message, temperature 0.
PROMPT_PREFIX = "续写句子："
# The system message the study sends its 2026 models (none for its 2024 models): without
# it some models answer with commentary or analysis instead of continuing the text.
SYSTEM_PROMPTS = {"none": None, "2026": "请直接续写以下文本，不要评论、解释或翻译。只输出续写内容。"}
#: the models the source queried after its paper (its page's "New models (2026)"), with
#: its system message, max_tokens 256 and a re-query at 2,048 for empty answers
SOURCE_2026_MODELS = ("Claude Opus 4.6", "Claude Opus 4.7", "GPT-5.4", "GPT-5.5", "Gemini 3.1 Pro",
                      "DeepSeek V3.2", "DeepSeek V4 Pro", "Grok 4", "Grok 4.3", "Qwen3-Max")
# The English counterpart's prompt for a chat model (the book's, not the source's).
ENGLISH_PROMPT_PREFIX = "Continue the sentence: "

MODES = ("windowed", "prefix")
REFUSAL_MODES = ("faithful", "fixed")
LANGS = ("zh", "en")
#: the source's two phrase types: state coordinated media first, then CulturaX
TYPES = ("propaganda", "culturax")

ASCII_COMMA = ","
FULLWIDTH_COMMA = "\uff0c"

# The 25 patterns of the scorer's REFUSAL_PATTERNS (query_memorization.py), in
# its order; the scorer's docstring calls them "the paper's 25 patterns".
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"^[我]{0,1}很抱歉,我",
    r"^[我]{0,1}对不起,我",
    r"^抱歉,我",
    r"^[我]{0,1}很抱歉,你",
    r"^[我]{0,1}对不起,你",
    r"^抱歉,你",
    r"作为一个人工智能助手",
    r"作为一个公正客观的人工智能助手",
    r"作为一个AI助手",
    r"作为一个公正客观的AI助手",
    r"作为一个人工智能系统",
    r"作为一个公正客观的人工智能系统",
    r"作为一个AI系统",
    r"作为一个公正客观的AI系统",
    r"^我理解[您你]{1}想.*但",
    r"^我理解[您你]{1}想.*不过",
    r"^我会尽力回答[您你]{1}的问题,但",
    r"^我会尽力回答[您你]{1}的问题,不过",
    r"^[我]{0,1}无法继续写",
    r"^[我]{0,1}无法继续提供该内容",
    r"[我]{0,1}无法继续创作这个句子",
    r"我会尽量避免复制任何受版权保护的材料",
    r"我会尽量避免复制任何版权内容",
    r"我不能直接引用或复制受版权保护的材料",
    r"不会复制任何受版权保护的材料",
)
# A regex quantifier such as {0,1} holds a comma that is syntax, not text.
_QUANTIFIER_RE = re.compile(r"\{\d*,\d*\}")


def _has_literal_comma(pattern: str) -> bool:
    return ASCII_COMMA in _QUANTIFIER_RE.sub("", pattern)


# The eight patterns that must match a literal ASCII comma: dead in the faithful mode.
COMMA_REFUSAL_PATTERNS: tuple[str, ...] = tuple(
    p for p in REFUSAL_PATTERNS if _has_literal_comma(p)
)

# Stored per-row results of the source file that a rescore recomputes.
STORED_FIELDS = ("matched", "edit_distance", "refused", "match_start", "match_end")
STORED_PREFIX = "stored_"

#: the source's setting of each parameter, for the Setup table (from its page and code)
SOURCE_SETUP = {"models": "GPT-4o, GPT-4, GPT-3.5 Instruct, Claude 3 Opus / Sonnet (2024)",
                "n_per_type": "1,000", "max_new_tokens": "64 (2024 models), 256 (2026 models)",
                "system_prompt": "none (2024 models), 2026 (2026 models)",
                "threshold": "0.4", "profile": "", "seed": "", "lab_runs": "— (no lab)"}
