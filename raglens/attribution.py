"""Why a score: a mean-pooled cosine taken apart, exactly, into the shares of the tokens that made it.

A mean-pooling model's vector of a text is ``m/‖m‖`` with ``m`` the mean of its n contextual token
vectors ``h_i`` (special tokens included, as the pooling counts them). With the query's own token
vectors ``g_j`` (mean ``p``), the cosine is

    score = Σ_j Σ_i  g_j·h_i / (n_q n ‖p‖ ‖m‖)

so every (query token, window token) pair has a share, and the shares add up to the score. A window
token's share is its column of that matrix, a query token's its row. They are the contextual vectors'
shares, not what deleting a word would do: each ``h_i`` has read the whole text. CLS or last-token
pooling has no such sum, and is refused rather than approximated. Plain numpy; no model here.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

import numpy as np

MEAN_POOLING_METHOD = "exact: mean pooling"
BM25_METHOD = "exact: BM25 per query term"


class TokenKind(Enum):
    """What a token is, for the one line that splits a score into content and the rest."""

    CONTENT = "content"
    SPECIAL = "special"
    """The model's own markers ([CLS], [SEP]): in every text, about nothing."""
    PUNCTUATION = "punctuation"
    STOP_WORD = "stop word"


_STOP_WORD_LIST = """
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me
more most my myself no nor not now of off on once only or other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_WORD_LIST.split())
"""English function words: shares they carry come with almost every window, whatever it is about."""


@dataclass(frozen=True, eq=False)
class TokenStates:
    """One text's contextual token vectors, as the model pools them, and where each token came from."""

    text: str
    """The text as the tokenizer was given it."""
    tokens: tuple[str, ...]
    """Each token as the tokenizer writes it (``[CLS]``, ``drain``, ``##ing``)."""
    spans: tuple[tuple[int, int] | None, ...]
    """Each token's characters in the text, end excluded; None for a special token."""
    vectors: np.ndarray
    """Shape (tokens, dimension): the vectors the mean pooling averages, in token order."""

    def __post_init__(self) -> None:
        if not (len(self.tokens) == len(self.spans) == self.vectors.shape[0]):
            raise ValueError(
                f"{len(self.tokens)} tokens, {len(self.spans)} spans and {self.vectors.shape[0]} vectors"
            )
        if not self.tokens:
            raise ValueError("a text with no tokens has no vector to take apart")


def token_spans(
    special_tokens_mask: Sequence[int], offsets: Sequence[tuple[int, int]]
) -> tuple[tuple[int, int] | None, ...]:
    """Each token's characters from a tokenizer's offsets, None for a special token (its offsets are
    ``(0, 0)``, which would read as the text's start)."""
    return tuple(
        None if special else (int(start), int(end))
        for special, (start, end) in zip(special_tokens_mask, offsets, strict=True)
    )


@dataclass(frozen=True)
class TokenShare:
    """One token's share of a score: positive pulls the text toward the other text, negative away."""

    token: str
    start: int | None
    """The token's first character in its text; None for a special token."""
    end: int | None
    contribution: float
    kind: TokenKind


@dataclass(frozen=True)
class WordShare:
    """The shares of one word's tokens (or of one special token, or one run of punctuation), summed."""

    word: str
    contribution: float
    count: int
    """How many times the word occurs in the text (strongest words sum over every occurrence)."""
    kind: TokenKind


@dataclass(frozen=True)
class Explanation:
    """A score taken apart into its window tokens' and its query tokens' shares, each summing to it."""

    method: str
    total: float
    """The sum of the shares: the score as these token vectors give it."""
    window_tokens: tuple[TokenShare, ...]
    query_tokens: tuple[TokenShare, ...]

    def residual(self, shown: float) -> float:
        """How far the sum of the shares is from the score shown (fp32 engines: below 1e-5)."""
        return self.total - shown

    def share_by_kind(self) -> dict[TokenKind, float]:
        """The window tokens' shares by kind: content against special tokens, punctuation and stop words."""
        split = dict.fromkeys(TokenKind, 0.0)
        for share in self.window_tokens:
            split[share.kind] += share.contribution
        return split

    def strongest_words(self, text: str, count: int = 8) -> list[WordShare]:
        """The window's words whose shares (summed over their occurrences) are largest in size."""
        words = word_shares(text, self.window_tokens)
        return sorted(words, key=lambda word: -abs(word.contribution))[:count]

    def query_words(self, question: str) -> list[WordShare]:
        """Each word of the question with its share, in the question's order."""
        return word_shares(question, self.query_tokens, merge_repeats=False)


@dataclass(frozen=True)
class Unexplained:
    """No exact taking-apart exists for this score; ``reason`` says why, in one line."""

    reason: str


Attribution = Explanation | Unexplained


@runtime_checkable
class ExplainsScores(Protocol):
    """An engine that can give the token vectors its mean pooling averages."""

    def token_states(self, text: str) -> TokenStates | Unexplained:
        """The token vectors of ``text`` as the model reads it (cut at its limit), or why there are none."""
        ...


def no_explanation_for(pooling: str) -> Unexplained:
    """The refusal for a model that does not pool by the mean, named by its pooling."""
    return Unexplained(f"no exact attribution for {pooling} pooling (only a mean of token vectors adds up)")


def pooling_refusal(module_kinds: Sequence[str], pooling_mode: str) -> Unexplained | None:
    """Why a model's score cannot be taken apart exactly, or None when it can (transformer, mean, normalise).

    ``module_kinds`` are the sentence-transformers module classes in order; ``pooling_mode`` names the
    pooling (``mean``, ``cls``, ``lasttoken``, ``max``...).
    """
    kinds = [kind.rpartition(".")[2] for kind in module_kinds]
    if kinds[:2] != ["Transformer", "Pooling"]:
        return Unexplained(f"no exact attribution for modules {' → '.join(kinds)}")
    if pooling_mode != "mean":
        return no_explanation_for(pooling_mode)
    if kinds[2:] not in ([], ["Normalize"]):
        return Unexplained(f"no exact attribution through the {kinds[2]} module after the pooling")
    return None


def explain_with(engine: object, question: str, window_text: str) -> Attribution:
    """Take apart ``engine``'s cosine of ``question`` and ``window_text``: one extra pass over each."""
    if not isinstance(engine, ExplainsScores):
        name = getattr(engine, "name", type(engine).__name__)
        return Unexplained(f"the engine of {name} cannot give its token vectors")
    query = engine.token_states(question)
    if isinstance(query, Unexplained):
        return query
    window = engine.token_states(window_text)
    if isinstance(window, Unexplained):
        return window
    return explain_pair(query, window)


def share_matrix(query: TokenStates, window: TokenStates) -> np.ndarray:
    """Each (query token, window token) pair's share of the pooled cosine, in float64; they sum to it."""
    g = np.asarray(query.vectors, dtype=np.float64)
    h = np.asarray(window.vectors, dtype=np.float64)
    query_mean, window_mean = g.mean(axis=0), h.mean(axis=0)
    scale = len(g) * len(h) * float(np.linalg.norm(query_mean)) * float(np.linalg.norm(window_mean))
    if scale == 0.0:
        return np.zeros((len(g), len(h)))
    matrix: np.ndarray = (g @ h.T) / scale
    return matrix


def explain_pair(query: TokenStates, window: TokenStates, method: str = MEAN_POOLING_METHOD) -> Explanation:
    """The exact shares of each window token and each query token in the two texts' pooled cosine."""
    matrix = share_matrix(query, window)
    return Explanation(
        method,
        float(matrix.sum()),
        shares_of(window, matrix.sum(axis=0)),
        shares_of(query, matrix.sum(axis=1)),
    )


def shares_of(states: TokenStates, contributions: np.ndarray) -> tuple[TokenShare, ...]:
    """Each token of ``states`` with its contribution and the kind of the word that holds it."""
    words = TextWords(states.text)
    shares = []
    for token, span, contribution in zip(states.tokens, states.spans, contributions.tolist(), strict=True):
        start, end = span if span is not None else (None, None)
        shares.append(TokenShare(token, start, end, float(contribution), words.kind_of(span)))
    return tuple(shares)


_WORD = re.compile(r"\w+|[^\w\s]+")
"""A word is a run of letters, digits and ``_`` (an identifier is one word); punctuation runs apart."""


class TextWords:
    """The words of one text, and which word holds a token: a token belongs to the word its first
    non-blank character is in (SentencePiece and byte-level tokens start on the space before it)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans = [(match.start(), match.end()) for match in _WORD.finditer(text)]
        self._starts = [start for start, _ in self.spans]

    def index_of(self, span: tuple[int, int]) -> int | None:
        """The index of the word holding the token at ``span``; None for a token of blanks only."""
        start, end = span
        while start < end and start < len(self.text) and self.text[start].isspace():
            start += 1
        index = bisect.bisect_right(self._starts, start) - 1
        if index >= 0 and self.spans[index][0] <= start < self.spans[index][1] and start < end:
            return index
        return None

    def word(self, index: int) -> str:
        start, end = self.spans[index]
        return self.text[start:end]

    def kind_of(self, span: tuple[int, int] | None) -> TokenKind:
        """Special (no characters of its own), or the kind of the word holding the token: a piece of
        ``isinstance`` is content, though the piece is ``is``."""
        if span is None:
            return TokenKind.SPECIAL
        index = self.index_of(span)
        return TokenKind.PUNCTUATION if index is None else word_kind(self.word(index))


def word_kind(word: str) -> TokenKind:
    """Punctuation (no letter or digit), a stop word, or content."""
    if not any(character.isalnum() for character in word):
        return TokenKind.PUNCTUATION
    return TokenKind.STOP_WORD if word.lower() in STOP_WORDS else TokenKind.CONTENT


def word_shares(text: str, shares: Sequence[TokenShare], *, merge_repeats: bool = True) -> list[WordShare]:
    """The shares of ``shares``' tokens summed per word of ``text``; special tokens stay apart.

    With ``merge_repeats``, every occurrence of a word (case folded) is one entry, in order of first
    occurrence; without, each occurrence is its own entry, in the text's order.
    """
    words = TextWords(text)
    totals: dict[object, float] = {}
    named: dict[object, tuple[str, TokenKind]] = {}
    occurrences: dict[object, set[object]] = {}
    for position, share in enumerate(shares):
        if share.start is None or share.end is None:
            word, kind, occurrence = share.token, TokenKind.SPECIAL, ("special", position)
        else:
            index = words.index_of((share.start, share.end))
            if index is None:
                continue  # a token of blanks only: it has no word to belong to
            word = words.word(index)
            kind, occurrence = word_kind(word), ("word", index)
        key: object = occurrence
        if merge_repeats:
            key = ("special", word) if kind is TokenKind.SPECIAL else ("word", word.casefold())
        totals[key] = totals.get(key, 0.0) + share.contribution
        named.setdefault(key, (word, kind))
        occurrences.setdefault(key, set()).add(occurrence)
    return [
        WordShare(named[key][0], total, len(occurrences[key]), named[key][1]) for key, total in totals.items()
    ]


SPLIT_ORDER = (TokenKind.CONTENT, TokenKind.STOP_WORD, TokenKind.PUNCTUATION, TokenKind.SPECIAL)
_SPLIT_NAMES = {
    TokenKind.CONTENT: "content",
    TokenKind.STOP_WORD: "stop words",
    TokenKind.PUNCTUATION: "punctuation",
    TokenKind.SPECIAL: "special tokens",
}


def describe_split(explanation: Explanation) -> str:
    """One line: the shares' sum, split into content, stop words, punctuation and special tokens."""
    split = explanation.share_by_kind()
    parts = " ".join(f"{split[kind]:+.3f} {_SPLIT_NAMES[kind]}" for kind in SPLIT_ORDER)
    return f"{explanation.total:.3f} = {parts}"


EXACT_RESIDUAL = 1e-5
"""How far the shares' sum may be from the score shown for the two to be the same fp32 number."""


def is_exact_for(explanation: Explanation, shown: float) -> bool:
    """Whether the shares add up to the score shown (to fp32's precision)."""
    return abs(explanation.residual(shown)) <= EXACT_RESIDUAL


def describe_exactness(explanation: Explanation, shown: float | None) -> str:
    """How the shares were computed and how far their sum is from the score shown (None: none shown)."""
    if shown is None:
        return f"{explanation.method}; no score is shown for this window yet (it is not ranked)"
    residual = explanation.residual(shown)
    if is_exact_for(explanation, shown):
        return f"{explanation.method}; the shares sum to the score shown, within {abs(residual):.0e}"
    return (
        f"{explanation.method}; the shares sum to {explanation.total:.4f}, {residual:+.1e} from the score "
        f"shown ({shown:.4f}): these token vectors are not the ones that score was computed from (a "
        "reduced precision, another engine, or a window re-read since); raglens cannot tell which"
    )


def adds_nothing(word: WordShare) -> bool:
    """Whether a word's share is zero or against the match: the other text has nothing for it."""
    return word.contribution <= 0.0


def describe_share(word: WordShare, *, asked: bool = False) -> str:
    """What follows a word in a list of shares: `` ×22 +0.041`` (how often, when more than once, and
    its share); for a word of the question (``asked``), `` nothing here`` when it adds nothing."""  # noqa: RUF002
    times = f" ×{word.count}" if word.count > 1 else ""  # noqa: RUF001
    nothing = " nothing here" if asked and adds_nothing(word) else ""
    return f"{times} {word.contribution:+.3f}{nothing}"


def phrase_spans(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where ``phrase`` occurs in ``text``, case ignored; a phrase that starts or ends with a word
    character only as a whole word there (``id`` is not in ``valid``)."""
    if not phrase.strip():
        return []
    before = r"(?<!\w)" if re.match(r"\w", phrase) else ""
    after = r"(?!\w)" if re.search(r"\w$", phrase) else ""
    pattern = re.compile(before + re.escape(phrase) + after, re.IGNORECASE)
    return [(match.start(), match.end()) for match in pattern.finditer(text)]


def share_of_phrase(explanation: Explanation, window_text: str, phrase: str) -> float:
    """The share of the window tokens that lie inside an occurrence of ``phrase`` (see phrase_spans)."""
    spans = phrase_spans(window_text, phrase)
    return sum(
        share.contribution
        for share in explanation.window_tokens
        if share.start is not None and any(begin <= share.start < end for begin, end in spans)
    )
