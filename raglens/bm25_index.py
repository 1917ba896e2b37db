"""BM25 over the same windows: the lexical baseline every dense configuration is measured against.

``model=bm25`` works wherever a model name does in the headless commands. Its scores are BM25's
(Lucene's variant, bm25s's default: k1 1.5, b 0.75), not cosines: they have no fixed scale, so they
are drawn against the query's own top score, and the instruments that read an absolute cosine
(noise floor, score histogram) say they do not apply.

Tokens are what code search needs: every run of letters, digits and ``_`` is lower-cased and split
on ``_`` and camelCase (``drainPendingJobs`` → ``drain``, ``pending``, ``jobs``); a compound
identifier is kept whole beside its parts, so an exact identifier in a query scores its own rare
token. No stop words are removed and no stemming is done.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from raglens.configuration import BM25_MODEL
from raglens.embedding_events import EngineInfo
from raglens.search import SearchResult, rank_all
from raglens.windows import Window, as_columns

if TYPE_CHECKING:
    from raglens.attribution import Explanation

_WORD = re.compile(r"\w+")


def _camel_parts(word: str) -> list[tuple[int, int]]:
    """Where ``drainPendingJobs`` splits: ``drain``, ``Pending``, ``Jobs``; ``HTTPServer``: ``HTTP``,
    ``Server``; as (start, end) offsets into ``word``."""
    parts, start = [], 0
    for position in range(1, len(word)):
        before, here = word[position - 1], word[position]
        after = word[position + 1] if position + 1 < len(word) else ""
        lower_to_upper = (before.islower() or before.isdigit()) and here.isupper()
        acronym_end = before.isupper() and here.isupper() and after.islower()
        if lower_to_upper or acronym_end:
            parts.append((start, position))
            start = position
    parts.append((start, len(word)))
    return parts


def identifier_token_spans(text: str) -> list[tuple[str, int, int]]:
    """The BM25 tokens of ``text`` with the characters each was read from (a compound: the whole word)."""
    tokens: list[tuple[str, int, int]] = []
    for match in _WORD.finditer(text):
        word, offset = match.group(), match.start()
        parts = []
        for chunk in re.finditer(r"[^_]+", word):
            for start, end in _camel_parts(chunk.group()):
                begin = offset + chunk.start() + start
                parts.append(
                    (text[begin : offset + chunk.start() + end].lower(), begin, offset + chunk.start() + end)
                )
        tokens.extend(parts)
        whole = word.strip("_").lower()
        if len(parts) > 1 and whole:
            tokens.append((whole, offset, match.end()))
    return tokens


def identifier_tokens(text: str) -> list[str]:
    """The BM25 tokens of ``text``: words split on ``_`` and camelCase, lower-cased, compounds kept too."""
    return [token for token, _, _ in identifier_token_spans(text)]


class BM25Scorer:
    """BM25 scores of a list of texts for any query; built in one pass over their tokens, no model."""

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s  # only a lexical run pays for the import

        self.count = len(texts)
        self.texts = list(texts)
        self._bm25 = bm25s.BM25()
        documents = [identifier_tokens(text) for text in texts]
        self.token_counts = [len(tokens) for tokens in documents]
        """How many BM25 tokens each text has: all of them are read, none cut."""
        if texts:
            self._bm25.index(documents, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every text for ``query``, in order; -inf for a text that shares no token
        with it, which BM25 does not retrieve at all (a query of no tokens: none)."""
        tokens = identifier_tokens(query)
        if not self.count or not tokens:
            return np.full(self.count, -np.inf, dtype=np.float32)
        scores = np.asarray(self._bm25.get_scores(tokens), dtype=np.float32)
        retrieved: np.ndarray = np.where(scores > 0, scores, np.float32(-np.inf))
        return retrieved

    def explain(self, query: str, row: int) -> Explanation:
        """Text ``row``'s BM25 score for ``query`` taken apart by query term: BM25 is a sum over them.

        A term scores the text once, however often it occurs there; its share is split evenly over its
        occurrences in the text, so the window's shares add up to the score too.
        """
        from raglens.attribution import BM25_METHOD, Explanation, TextWords, TokenShare

        terms = identifier_token_spans(query)
        known = {token for token, _, _ in terms if token in self._bm25.vocab_dict}
        per_term = {token: float(self._bm25.get_scores([token])[row]) for token in known}
        asked = TextWords(query)
        query_tokens = tuple(
            TokenShare(token, start, end, per_term.get(token, 0.0), asked.kind_of((start, end)))
            for token, start, end in terms
        )
        asked_times = Counter(token for token, _, _ in terms)  # bm25s adds a repeated term's score again
        text = self.texts[row]
        found = [
            (token, start, end) for token, start, end in identifier_token_spans(text) if token in per_term
        ]
        occurrences = Counter(token for token, _, _ in found)
        words = TextWords(text)
        window_tokens = tuple(
            TokenShare(
                token,
                start,
                end,
                per_term[token] * asked_times[token] / occurrences[token],
                words.kind_of((start, end)),
            )
            for token, start, end in found
        )
        total = sum(share.contribution for share in query_tokens)
        return Explanation(BM25_METHOD, total, window_tokens, query_tokens)


class BM25Index:
    """BM25 scores of every window of a corpus for any query; built in one pass, no model."""

    def __init__(self, windows: Sequence[Window], texts: Mapping[str, str]) -> None:
        self.windows = windows
        self._scorer = BM25Scorer(as_columns(windows).texts(texts.__getitem__))

    @property
    def window_count(self) -> int:
        return len(self.windows)

    def scores(self, query: str) -> np.ndarray:
        """The BM25 score of every window for ``query``, in corpus order (see BM25Scorer.scores)."""
        return self._scorer.scores(query)

    def search(self, query: str, k: int) -> SearchResult:
        """The ``k`` best windows for ``query`` by BM25 score, equal scores in corpus order; only
        windows that share a token with it are ranked, so there may be fewer than ``k``."""
        return rank_all(self.scores(query), self.windows, k, cosine=False)

    def explain(self, query: str, row: int, text: str) -> Explanation:
        """Window ``row``'s BM25 score for ``query``, term by term (``text`` is the row's own)."""
        return self._scorer.explain(query, row)


def lazy_bm25_ranker(
    windows: Sequence[Window], texts: Mapping[str, str]
) -> Callable[[str, int], SearchResult]:
    """BM25's ranking over ``windows``, its index built on the first question only: tokenising every
    window is seconds of pure Python on a large corpus, and most callers never ask (the failure lab
    asks only for an exact symbol)."""
    built: list[BM25Index] = []

    def ranked(query: str, k: int) -> SearchResult:
        if not built:
            built.append(BM25Index(windows, texts))
        return built[0].search(query, k)

    return ranked


BM25_ENGINE = EngineInfo(
    name=BM25_MODEL,
    dimension=0,
    max_seq_length=None,
    device="cpu",
    precision="fp32",
    engine="bm25s",
    lexical=True,
)
"""What a BM25 run names in headers and documents: its scores are float32 and nothing approximates them."""
