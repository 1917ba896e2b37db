"""Free pages go back to the system where the C library can; elsewhere nothing is attempted."""

from __future__ import annotations

import platform

import pytest

from raglens.ui.free_memory import give_back_free_memory


def test_without_malloc_trim_nothing_is_done() -> None:
    assert give_back_free_memory(lambda: None) is False


def test_with_malloc_trim_it_is_called_to_trim_everything() -> None:
    calls: list[int] = []

    def trim(pad: int) -> int:
        calls.append(pad)
        return 1

    assert give_back_free_memory(lambda: trim) is True
    assert calls == [0]


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_the_real_c_library_on_linux() -> None:
    assert give_back_free_memory() is True
