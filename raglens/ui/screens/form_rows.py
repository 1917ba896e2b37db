"""The rows the explorer's forms are made of: a label beside its field, one row each."""

from __future__ import annotations

from textual.containers import Horizontal
from textual.widgets import Input, Label, Select

from raglens.windows import Unit


def unit_row(field_id: str, unit: Unit) -> Horizontal:
    """``unit`` and a choice of chars, words or lines."""
    choices = Select([(u.value, u.value) for u in Unit], value=unit.value, allow_blank=False, id=field_id)
    return Horizontal(Label("unit"), choices, classes="settings-row")


def text_row(label: str, field_id: str, value: str, placeholder: str = "") -> Horizontal:
    """``label`` and a one-line text field holding ``value``."""
    return Horizontal(
        Label(label), Input(value, placeholder=placeholder, id=field_id), classes="settings-row"
    )
