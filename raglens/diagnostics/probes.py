"""The failure lab: four probes of naive RAG's blind spots, chosen from and run on the user's corpus.

1. an exact symbol defined in the corpus, asked by its name; 2. an answer the window grid cuts in
two; 3. one question in English and in other languages; 4. questions the corpus cannot answer,
which still return k hits. Each result explains itself in plain sentences.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from raglens.attribution import (
    Attribution,
    Explanation,
    TokenKind,
    is_exact_for,
    phrase_spans,
    share_of_phrase,
)
from raglens.diagnostics.lexical import (
    IdentifierReport,
    identifier_report,
    looks_like_identifier,
    query_identifier,
)
from raglens.diagnostics.noise_floor import CONTROL_QUESTIONS, NoiseFloor, NoiseVerdict
from raglens.diagnostics.question_language import question_language
from raglens.diagnostics.symbols import Definition, find_definitions
from raglens.lines import LineIndex
from raglens.model_languages import ModelLanguages
from raglens.search import Hit, SearchResult, rank_of, score_of
from raglens.windows import Window, as_columns

Ranker = Callable[[str, int], SearchResult]
"""Embeds a query and ranks every window against it, returning the top k."""
Explainer = Callable[[str, int], Attribution]
"""Takes window ``row``'s score for a question apart into token shares (``question, row``)."""

LANGUAGE_QUESTIONS = (
    ("English", "how are errors handled?"),
    ("German", "wie werden Fehler behandelt?"),
    ("Spanish", "¿cómo se manejan los errores?"),
    ("French", "comment les erreurs sont-elles gérées ?"),
)
"""One question in four languages; the English one's best hit is the answer the others should find."""
UNANSWERABLE_COUNT = 3
"""How many of the control questions the unanswerable probe asks."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_NAME = re.compile(r"[A-Za-z_$][\w$]*")
_PROSE_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ""})


def is_prose(path: str) -> bool:
    """Whether ``path`` is documentation rather than code, by its suffix (none counts as prose)."""
    return PurePosixPath(path).suffix.lower() in _PROSE_SUFFIXES


@dataclass(frozen=True)
class CutSpan:
    """A definition or paragraph one window could hold whole, but which the grid cuts."""

    path: str
    start: int
    end: int
    label: str
    query: str
    """The question it answers: its docstring's or its own first sentence."""
    largest_share: float = 1.0
    """The most of it any one window holds: near 0.5 is an even cut, near 1 a trimmed tail."""


@dataclass(frozen=True)
class ProbePlan:
    """What the built-in probes ask, chosen from the corpus once (parsing every code file takes
    about a second on 3 MB), so planning the queries and running the probes share it."""

    symbol: Definition | None
    """The identifier the exact-symbol probe asks for; None when the corpus defines none that fits."""
    cut_spans: tuple[CutSpan, ...]
    """Every cut definition, then every cut paragraph, each group most evenly cut first; the straddle
    probe asks the first."""

    def queries(self, user_queries: Sequence[str] = ()) -> list[str]:
        """Every query :func:`run_probes` will rank, so a caller can embed them all first."""
        queries = []
        if self.symbol is not None:
            queries.append(self.symbol.short_name)
        if self.cut_spans:
            queries.append(self.cut_spans[0].query)
        queries += [question for _, question in LANGUAGE_QUESTIONS]
        queries += CONTROL_QUESTIONS[:UNANSWERABLE_COUNT]
        queries += user_queries
        return list(dict.fromkeys(queries))


def plan_probes(texts: Mapping[str, str], windows: Sequence[Window]) -> ProbePlan:
    """Choose the symbol and find the cut spans the built-in probes will ask about."""
    definitions = code_definitions(texts)
    return ProbePlan(choose_symbol(texts, definitions), tuple(_cut_spans(texts, windows, definitions)))


@dataclass(frozen=True)
class ProbeContext:
    """What every probe needs: the corpus's texts, its windows, a way to rank a query, and the plan."""

    texts: Mapping[str, str]
    """Path to text of every indexed file, in corpus order."""
    windows: Sequence[Window]
    rank: Ranker
    k: int
    model_name: str
    plan: ProbePlan
    """From :func:`plan_probes` over the same texts and windows."""
    noise: NoiseFloor | None = None
    """The noise band over the same windows (:func:`measure_noise_floor`, as search and the explorer)."""
    languages: ModelLanguages | None = None
    """The languages the model reads, where known."""
    lexical: Ranker | None = None
    """BM25's ranking over the same windows: the exact-symbol probe shows where it ranks the windows
    that hold the name, beside where the model does."""
    explain: Explainer | None = None
    """Where a top hit quotes the question, the share of its score the quoted words carry."""


@dataclass(frozen=True)
class WindowScore:
    """One window's place in one ranking."""

    citation: str
    rank: int | None
    score: float | None


@dataclass(frozen=True)
class ProbeResult:
    """One probe: what was asked, what came back, and what it shows."""

    name: str
    """``exact symbol``, ``boundary straddle``, ``other language``, ``unanswerable`` or ``your probe``."""
    queries: tuple[str, ...]
    explanation: tuple[str, ...]
    """Plain sentences: what was measured and what it means."""
    top_scores: tuple[float, ...]
    """The best score of each query, in the order of ``queries``."""
    windows: tuple[WindowScore, ...] = ()
    """The windows the probe watched (the definition's, both halves, the English answer…)."""
    warning: str | None = None


def _watch(result: SearchResult, windows: Sequence[Window], row: int) -> WindowScore:
    return WindowScore(windows[row].citation, rank_of(result, row), score_of(result, row))


def _place(score: WindowScore) -> str:
    if score.rank is None or score.score is None:
        return f"{score.citation} (not embedded yet)"
    return f"{score.citation} at rank {score.rank} ({score.score:.3f})"


def code_definitions(texts: Mapping[str, str]) -> list[Definition]:
    """Every definition in the code files of ``texts`` (documentation files have none)."""
    return [d for path, text in texts.items() if not is_prose(path) for d in find_definitions(path, text)]


def choose_symbol(texts: Mapping[str, str], definitions: Sequence[Definition]) -> Definition | None:
    """An identifier defined exactly once in code, preferring the one the most other files mention.

    Those are the interesting case: the docs and the callers that quote the name compete with the
    definition itself. ``definitions`` are those of :func:`code_definitions`.
    """
    counts: dict[str, int] = {}
    for definition in definitions:
        counts[definition.short_name] = counts.get(definition.short_name, 0) + 1
    candidates = [
        d
        for d in definitions
        if counts[d.short_name] == 1
        and looks_like_identifier(d.short_name)
        and not d.short_name.startswith(("_", "test"))
        and len(d.short_name) >= 8
    ]
    if not candidates:
        return None

    # Which files use each name, from one pass of a token regex per file: a regex per candidate
    # over the whole corpus took 14 s on 1.2 MB of code.
    wanted = {d.short_name for d in candidates}
    files_using: dict[str, set[str]] = {name: set() for name in wanted}
    for path, text in texts.items():
        for name in wanted.intersection(_NAME.findall(text)):
            files_using[name].add(path)

    best = max(
        enumerate(candidates),
        key=lambda pair: (
            len(files_using[pair[1].short_name] - {pair[1].path}),
            pair[1].kind == "function",
            -pair[0],
        ),
    )
    return best[1]


def quoted_share(context: ProbeContext, question: str, phrase: str, hit: Hit) -> str | None:
    """How much of ``hit``'s score for ``question`` the words of ``phrase`` it quotes carry, exactly;
    None when it does not quote them or nothing can take its score apart."""
    window = hit.window
    text = window.text_in(context.texts[window.path])
    if context.explain is None or not phrase_spans(text, phrase):
        return None
    explanation = context.explain(question, hit.row)
    if not isinstance(explanation, Explanation):
        return None
    quoted = share_of_phrase(explanation, text, phrase)
    split = explanation.share_by_kind()
    rest = split[TokenKind.SPECIAL] + split[TokenKind.PUNCTUATION]
    if not is_exact_for(explanation, hit.score):
        return (
            f"The top hit quotes {phrase!r}: its words carry {quoted:+.3f} of the {explanation.total:.3f} "
            f"its fp32 token vectors give, which is not the {hit.score:.3f} shown (those vectors were "
            "computed otherwise), so that share is not exact for the score shown."
        )
    return (
        f"Of the top hit's {hit.score:.3f}, the quoted words {phrase!r} carry {quoted:+.3f} exactly "
        f"(special tokens and punctuation {rest:+.3f}; y in the explorer shows every token's share)."
    )


def _rows_overlapping(windows: Sequence[Window], path: str, start: int, end: int) -> list[int]:
    numbered = as_columns(windows).numbered_windows_of(path)
    return [row for row, window in numbered if window.start < end and start < window.end]


def probe_exact_symbol(context: ProbeContext, definition: Definition | None = None) -> ProbeResult:
    """Ask for a defined identifier by its exact name, and see where its definition ranks."""
    definition = definition or context.plan.symbol
    if definition is None:
        return ProbeResult(
            "exact symbol",
            (),
            (
                "No identifier-like name (snake_case or camelCase, 8+ characters) is defined exactly once "
                "in a code file of this corpus, so this probe has nothing to ask.",
            ),
            (),
        )
    query = definition.short_name
    result = context.rank(query, context.k)
    line_offset = context.texts[definition.path].find(query, definition.start)
    holding = _rows_overlapping(context.windows, definition.path, line_offset, line_offset + len(query))
    watched = tuple(_watch(result, context.windows, row) for row in holding)
    bm25 = context.lexical(query, max(1, len(context.windows))) if context.lexical is not None else None
    report: IdentifierReport = identifier_report(query, context.texts, context.windows, result, bm25)
    best = min((w for w in watched if w.rank is not None), key=lambda w: w.rank or 0, default=None)
    top = result.hits[0]
    lines = [
        f"Asked for {query!r}, defined once at {definition.location} (found by {definition.found_by}).",
        f"The window holding the definition came back {_place(best) if best else 'not at all yet'}.",
        f"The top hit is {top.window.citation} ({top.score:.3f})"
        + (", the definition itself." if best is not None and best.rank == 1 else ", not the definition."),
        report.describe() + ".",
    ]
    coincidence = quoted_share(context, query, query, top)
    if coincidence is not None:
        lines.append(coincidence)
    if best is not None and best.rank == 1:
        lines.append(
            "Here the definition won; where other windows quote the name (docs, callers, tests) they "
            "compete with it, because embeddings place text by meaning, not by identity."
        )
    else:
        lines.append(
            "Embeddings place text by meaning, not by identity: an exact name is one token among "
            "hundreds in a window, so callers, docs and tests that mention it outrank its definition. "
            "A lexical index (grep, BM25) would find it at once."
        )
    return ProbeResult("exact symbol", (query,), tuple(lines), (top.score,), watched)


_INLINE_CODE = re.compile(r"``[^`]*``|`[^`]*`")
_WORD = re.compile(r"[^\W\d_]{2,}")
MIN_QUESTION_WORDS = 3
"""Fewer words of prose than this (code spans aside) is a label, not a question a user would ask."""


def question_from_docstring(docstring: str | None) -> str | None:
    """The docstring's first sentence, if it reads as prose: what a user might ask of the definition."""
    if not docstring:
        return None
    first = docstring.strip().split("\n\n")[0].replace("\n", " ")
    sentence = re.split(r"(?<=[.!?])\s", first)[0].strip()
    prose = _INLINE_CODE.sub(" ", sentence)
    return sentence if len(_WORD.findall(prose)) >= MIN_QUESTION_WORDS else None


def _paragraphs(path: str, text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if text[s:e].strip()]


def _cut_spans(
    texts: Mapping[str, str], windows: Sequence[Window], definitions: Sequence[Definition]
) -> list[CutSpan]:
    """Definitions with a docstring, then paragraphs, that one window could hold but none does."""
    lengths = as_columns(windows).lengths()
    longest = int(lengths.max()) if len(lengths) else 0
    found: list[CutSpan] = []
    for definition in definitions:
        question = question_from_docstring(definition.docstring)
        if question is not None:
            found.append(
                CutSpan(
                    definition.path,
                    definition.start,
                    definition.end,
                    f"the definition of {definition.name}",
                    question,
                )
            )
    for path, text in texts.items():
        if is_prose(path):
            for start, end in _paragraphs(path, text):
                sentence = re.split(r"(?<=[.!?])\s", text[start:end].strip().replace("\n", " "))[0]
                if len(sentence) >= 20 and end - start >= 200:
                    found.append(CutSpan(path, start, end, "a paragraph", sentence[:200]))
    columns = as_columns(windows)
    windows_of: dict[str, list[Window]] = {}
    """Each file's windows, made once for all of its spans."""

    def largest_share(span: CutSpan) -> float | None:
        """The most of ``span`` one window holds, when the grid cuts it (None: one window holds it all)."""
        own = windows_of.get(span.path)
        if own is None:
            own = windows_of[span.path] = [window for _, window in columns.numbered_windows_of(span.path)]
        holding = [w for w in own if w.start < span.end and span.start < w.end]
        if len(holding) < 2 or any(w.start <= span.start and span.end <= w.end for w in holding):
            return None
        length = span.end - span.start
        return max(min(w.end, span.end) - max(w.start, span.start) for w in holding) / length

    cut = []
    for order, span in enumerate(found):
        share = largest_share(span) if span.end - span.start <= longest else None
        if share is not None:
            cut.append((span.label == "a paragraph", share, order, replace(span, largest_share=share)))
    # The most evenly cut first: a definition whose last 14 characters spill over is a weak example.
    return [span for *_, span in sorted(cut)]


def probe_straddle(context: ProbeContext) -> ProbeResult:
    """Ask the question a cut definition or paragraph answers, and score each of its halves."""
    spans = context.plan.cut_spans
    if not spans:
        return ProbeResult(
            "boundary straddle",
            (),
            ("No definition or paragraph that would fit in one window is cut by this window grid.",),
            (),
        )
    span = spans[0]
    result = context.rank(span.query, context.k)
    rows = _rows_overlapping(context.windows, span.path, span.start, span.end)
    watched = tuple(_watch(result, context.windows, row) for row in rows)
    first_line = context.windows[rows[0]].line_start
    # The same line numbers as every citation: CRLF, lone CR and LF each end a line.
    line_index = LineIndex(context.texts[span.path])
    first_span_line = line_index.line_of(span.start)
    last_span_line = line_index.line_of(max(span.start, span.end - 1))
    lines = [
        f"{span.label.capitalize()} at {span.path}:L{first_span_line}-L{last_span_line} is "
        f"{span.end - span.start} characters, short enough for one window, but the grid cuts it across "
        f"{len(rows)} windows (the first starts at line {first_line}); no window holds more than "
        f"{span.largest_share:.0%} of it.",
        f"Asked {span.query!r}; the parts came back: " + "; ".join(_place(w) for w in watched) + ".",
        "No single hit carries the whole answer: an LLM given the top k sees a fragment, or two "
        "fragments it must join. Overlap only helps when the answer is shorter than the overlap.",
        f"{len(spans)} such cut span(s) in this corpus with these window settings.",
    ]
    return ProbeResult("boundary straddle", (span.query,), tuple(lines), (result.hits[0].score,), watched)


def probe_language(context: ProbeContext) -> ProbeResult:
    """The same question in four languages: does the English question's best window still rank?"""
    (_, english), *others = LANGUAGE_QUESTIONS
    english_result = context.rank(english, context.k)
    target = english_result.hits[0]
    lines = [f"In English, {english!r} ranks {target.window.citation} first ({target.score:.3f})."]
    watched = [WindowScore(target.window.citation, 1, target.score)]
    tops = [target.score]
    for language, question in others:
        result = context.rank(question, context.k)
        place = _watch(result, context.windows, target.row)
        watched.append(place)
        tops.append(result.hits[0].score)
        delta = "" if place.score is None else f", {place.score - target.score:+.3f} against English"
        lines.append(
            f"In {language}, {question!r}: that window at rank {place.rank} "
            f"({place.score:.3f}{delta}); its own top hit {result.hits[0].window.citation} "
            f"({result.hits[0].score:.3f})."
            if place.score is not None
            else f"In {language}, {question!r}: that window is not embedded yet."
        )
    warning = None
    languages = context.languages
    if languages is not None and languages.codes is not None:
        warning = (
            f"{context.model_name} reads {languages.describe()} (from {languages.source}): a question in "
            "another language is matched by shared tokens and names, not by meaning."
        )
    return ProbeResult(
        "other language",
        tuple(q for _, q in LANGUAGE_QUESTIONS),
        tuple(lines),
        tuple(tops),
        tuple(watched),
        warning,
    )


def probe_unanswerable(context: ProbeContext, answerable_tops: Sequence[float]) -> ProbeResult:
    """Off-topic questions: they still get k hits; where do their scores sit against real answers'?

    Three of the control questions are shown with their hits; the band is the noise floor's, from all
    of them, so ``probe`` says what ``search`` and the explorer say.
    """
    questions = CONTROL_QUESTIONS[:UNANSWERABLE_COUNT]
    results = [context.rank(q, context.k) for q in questions]
    tops = tuple(r.hits[0].score for r in results)
    lines = [
        f"{q!r}: {len(r.hits)} hits anyway, scores {r.hits[-1].score:.3f}-{r.hits[0].score:.3f}, "
        f"top {r.hits[0].window.citation}."
        for q, r in zip(questions, results, strict=True)
    ]
    noise = context.noise
    if noise is not None:
        lines.append(
            f"All {len(noise.controls)} off-topic questions topped at {noise.low:.3f}-{noise.high:.3f}; "
            f"{noise.describe_band()}."
        )
        outliers = sum(noise.stands_above(control.top_score) for control in noise.controls)
        if outliers:
            lines.append(
                f"{outliers} of the off-topic questions score above the band themselves: the band's edge "
                "is a percentile, so an outlier does not move it, and a hit there is no answer either."
            )
    if answerable_tops and noise is not None:
        verdicts = [noise.verdict(top) for top in answerable_tops]
        above = verdicts.count(NoiseVerdict.ABOVE)
        undecided = verdicts.count(NoiseVerdict.UNDECIDED)
        separable = min(answerable_tops) > noise.high
        lines.append(
            f"The real questions above topped at {min(answerable_tops):.3f}-{max(answerable_tops):.3f}: "
            f"{above} of {len(answerable_tops)} clearly above the band, {undecided} undecided, "
            f"{len(answerable_tops) - above - undecided} within it; "
            + (
                f"every one of them beats every off-topic question ({noise.high:.3f}): a score floor "
                "between them would refuse those and keep these."
                if separable
                else "no floor separates them: an off-topic question scores as high as a real one."
            )
        )
    lines.append("Naive RAG has no floor: it always returns k windows, however far they are.")
    return ProbeResult("unanswerable", questions, tuple(lines), tops)


def probe_query(context: ProbeContext, query: str) -> ProbeResult:
    """A user's own probe: its hits, and where they stand against the noise band."""
    result = context.rank(query, context.k)
    lines = [f"{hit.rank}. {hit.window.citation} ({hit.score:.3f})" for hit in result.hits]
    noise = context.noise
    language = question_language(query, context.languages)
    if language is not None and not language.model_reads_it:
        lines.append(f"No noise verdict: {language.describe()}.")
    elif noise is not None:
        verdicts = [noise.verdict(hit.score) for hit in result.hits]
        lines.append(
            f"{verdicts.count(NoiseVerdict.ABOVE)} of {len(result.hits)} hits stand above the noise band, "
            f"{verdicts.count(NoiseVerdict.UNDECIDED)} undecided ({noise.describe_band()})."
        )
    name = query_identifier(query)
    if name is not None:
        lines.append(identifier_report(name, context.texts, context.windows, result).describe() + ".")
    coincidence = quoted_share(context, query, query.strip(), result.hits[0]) if result.hits else None
    if coincidence is None and name is not None and result.hits:
        coincidence = quoted_share(context, query, name, result.hits[0])
    if coincidence is not None:
        lines.append(coincidence)
    return ProbeResult("your probe", (query,), tuple(lines), (result.hits[0].score,))


def run_probes(context: ProbeContext, user_queries: Sequence[str] = ()) -> list[ProbeResult]:
    """The four built-in probes, then one for each of ``user_queries``."""
    found = [probe_exact_symbol(context), probe_straddle(context), probe_language(context)]
    # Each probe's first query is a real question (for the languages, the English one).
    answerable = [result.top_scores[0] for result in found if result.top_scores]
    found.append(probe_unanswerable(context, answerable))
    found.extend(probe_query(context, query) for query in user_queries)
    return found
