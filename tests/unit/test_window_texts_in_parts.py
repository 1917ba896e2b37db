"""A window set's texts travel to the embedding process in parts and arrive whole, in order."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raglens import embedding_events
from raglens.embedding_events import IndexWindows, TextsInParts, WindowTexts, index_windows_requests


def received(requests: list[WindowTexts | IndexWindows], joiner: TextsInParts) -> IndexWindows:
    for request in requests[:-1]:
        assert isinstance(request, WindowTexts)
        joiner.add(request)
    last = requests[-1]
    assert isinstance(last, IndexWindows)
    return joiner.join(last)


@given(st.integers(0, 40), st.integers(1, 7), st.lists(st.integers(0, 39), max_size=3))
def test_the_parts_join_to_the_texts_sent(count: int, part_size: int, first: list[int]) -> None:
    texts = [f"window {row}" for row in range(count)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedding_events, "TEXTS_PER_PART", part_size)
        requests = index_windows_requests(3, texts, first)
    assert all(len(r.texts) <= part_size for r in requests if isinstance(r, WindowTexts))
    assert len(requests) == max(1, -(-count // part_size)), "every part but the last is full"
    assert received(requests, TextsInParts()) == IndexWindows(3, tuple(texts), tuple(first))


def test_a_set_missing_a_part_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_events, "TEXTS_PER_PART", 2)
    *parts, last = index_windows_requests(5, ["a", "b", "c", "d", "e"])
    joiner = TextsInParts()
    assert isinstance(parts[0], WindowTexts) and isinstance(last, IndexWindows)
    joiner.add(parts[0])  # the second part is lost
    with pytest.raises(ValueError, match="2 texts in parts, 4 sent"):
        joiner.join(last)


def test_parts_of_a_set_replaced_before_its_last_part_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_events, "TEXTS_PER_PART", 2)
    joiner = TextsInParts()
    joiner.add(WindowTexts(1, ("old a", "old b")))  # set 1's last part never came: a re-cut replaced it
    new = index_windows_requests(2, ["a", "b", "c"])
    assert received(new, joiner) == IndexWindows(2, ("a", "b", "c"))
    assert joiner.join(IndexWindows(4, ("d",))) == IndexWindows(4, ("d",)), "nothing is left over"


@given(st.integers(0, 20), st.integers(1, 5))
def test_each_text_s_key_is_made_as_its_part_comes_and_joined_in_order(count: int, part_size: int) -> None:
    """The embedding process keys each part on arrival, while the app still sends the rest."""
    keyed: list[str] = []

    def key_texts(texts: Sequence[str]) -> list[bytes]:
        keyed.extend(texts)
        return [text.encode() for text in texts]

    texts = [f"window {row}" for row in range(count)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedding_events, "TEXTS_PER_PART", part_size)
        *parts, last = index_windows_requests(3, texts)
    joiner = TextsInParts(key_texts)
    joiner.add(WindowTexts(2, ("replaced",)))  # a set replaced before its last part: not keyed with
    for part in parts:
        assert isinstance(part, WindowTexts)
        joiner.add(part)
    assert keyed == ["replaced", *texts[: len(texts) - len(last.texts)]], "each part keyed as it came"
    assert isinstance(last, IndexWindows)
    joined, keys = joiner.join_keyed(last)
    assert joined == IndexWindows(3, tuple(texts)) and keys == [text.encode() for text in texts]
    assert TextsInParts().join_keyed(IndexWindows(4, ("d",)))[1] is None, "no keys without a keyer"
