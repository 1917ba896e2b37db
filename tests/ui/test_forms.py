"""The explorer's forms parse each field as the CLI's ``--vs`` and ``--grid`` do: the same parsers,
the same messages, and a model folder with a comma in its name is one model."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static

from raglens.configuration import GridAxis, RetrievalConfig, parse_k, parse_size
from raglens.errors import BadInputError
from raglens.ui.screens.grid import GridRequest, GridScreen, parse_request
from raglens.ui.screens.settings import Settings, SettingsScreen, parse_settings
from raglens.ui.screens.versus import VersusChoice, VersusScreen
from raglens.windows import Unit, WindowParams
from tests.ui.conftest import make_app, screen_shown, wait_until

A = RetrievalConfig(WindowParams(Unit.CHARS, 1000, 200), precision="fp32")


def message_of(parse: object, text: str) -> str:
    """The message a field parser refuses ``text`` with."""
    assert callable(parse)
    with pytest.raises(BadInputError) as raised:
        parse(text)
    return str(raised.value)


async def test_a_model_folder_with_a_comma_typed_in_the_v_form_is_b_s_model() -> None:
    app = make_app()
    chosen: list[VersusChoice | None] = []
    async with app.run_test(size=(160, 45)) as pilot:
        app.push_screen(VersusScreen(A, None), chosen.append)
        await wait_until(pilot, lambda: screen_shown(app, VersusScreen, "#versus-model"), "the B form")
        model = app.screen.query_one("#versus-model", Input)
        model.focus()
        await wait_until(pilot, lambda: model.has_focus, "the model field focused")
        await pilot.press(*"/models/e5,small", "enter")
        await wait_until(pilot, lambda: bool(chosen), "the form closed")
    assert chosen == [VersusChoice(RetrievalConfig(A.params, "/models/e5,small", None, "fp32"))]


async def test_an_emptied_model_field_is_the_bundled_model_not_a_s() -> None:
    a = RetrievalConfig(A.params, "/models/e5,small", 512, "fp32")
    app = make_app()
    chosen: list[VersusChoice | None] = []
    async with app.run_test(size=(160, 45)) as pilot:
        app.push_screen(VersusScreen(a, None), chosen.append)
        await wait_until(pilot, lambda: screen_shown(app, VersusScreen, "#versus-model"), "the B form")
        assert app.screen.query_one("#versus-model", Input).value == "/models/e5,small"
        app.screen.query_one("#versus-model", Input).value = ""
        app.screen.query_one("#versus-tokens", Input).value = ""
        await pilot.click("#versus-apply")
        await wait_until(pilot, lambda: bool(chosen), "the form closed")
    assert chosen == [VersusChoice(RetrievalConfig(A.params, None, None, "fp32"))]


async def test_a_bad_size_in_the_v_form_is_the_shared_message() -> None:
    app = make_app()
    chosen: list[VersusChoice | None] = []
    async with app.run_test(size=(160, 45)) as pilot:
        app.push_screen(VersusScreen(A, None), chosen.append)
        await wait_until(pilot, lambda: screen_shown(app, VersusScreen, "#versus-size"), "the B form")
        app.screen.query_one("#versus-size", Input).value = "abc"
        await pilot.click("#versus-apply")
        error = app.screen.query_one("#versus-error", Static)
        await wait_until(pilot, lambda: bool(str(error.render())), "the refusal")
        assert (
            str(error.render()) == message_of(parse_size, "abc") == "size must be a whole number, got 'abc'"
        )
        assert not chosen and isinstance(app.screen, VersusScreen)


async def test_a_bad_size_in_the_w_form_is_the_shared_message() -> None:
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("escape", "w")
        await wait_until(pilot, lambda: screen_shown(app, SettingsScreen, "#settings-apply"), "the settings")
        app.screen.query_one("#settings-size", Input).value = "abc"
        await pilot.click("#settings-apply")
        error = app.screen.query_one("#settings-error", Static)
        await wait_until(pilot, lambda: bool(str(error.render())), "the refusal")
        assert str(error.render()) == message_of(parse_size, "abc")
        assert isinstance(app.screen, SettingsScreen)


@pytest.mark.parametrize(
    ("key", "screen", "field"), [("w", SettingsScreen, "#settings-size"), ("v", VersusScreen, "#versus-size")]
)
async def test_both_forms_open_on_the_size_so_typed_digits_land_there(key, screen, field) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.main.corpus is not None, "the corpus")
        await pilot.press("escape", key)
        await wait_until(pilot, lambda: screen_shown(app, screen, field), "the form")
        await pilot.press("ctrl+a", "ctrl+k", "8", "0", "0")  # the form's first keys, typed at once
        assert app.screen.query_one(field, Input).value == "800"


async def test_a_quoted_model_with_a_comma_in_the_x_form_is_one_value() -> None:
    app = make_app()
    chosen: list[GridRequest | None] = []
    async with app.run_test(size=(160, 45)) as pilot:
        app.push_screen(GridScreen(A, "golden.jsonl", 3), chosen.append)
        await wait_until(pilot, lambda: screen_shown(app, GridScreen, "#grid-axes"), "the grid form")
        app.screen.query_one("#grid-axes", Input).value = 'model=all-MiniLM-L6-v2,"/models/e5,small" size=600'
        await pilot.click("#grid-run")
        await wait_until(pilot, lambda: bool(chosen), "the form closed")
    axes = (GridAxis("model", ("all-MiniLM-L6-v2", "/models/e5,small")), GridAxis("size", ("600",)))
    assert chosen == [GridRequest(axes, 8, 2)]


def test_the_forms_parse_k_and_the_window_with_the_shared_parsers() -> None:
    assert parse_settings("words", "200", "20", "5") == Settings(WindowParams(Unit.WORDS, 200, 20), 5)
    for form in (
        lambda k: parse_settings("chars", "1000", "200", k),
        lambda k: parse_request("size=600", k, A),
    ):
        assert message_of(form, "0") == message_of(parse_k, "0") == "k must be at least 1, got 0"
        assert message_of(form, "x") == message_of(parse_k, "x")
    assert message_of(lambda s: parse_settings("chars", s, "0", "5"), "1e3") == message_of(parse_size, "1e3")
    request = parse_request('model="/my models/e5,small",b  overlap=0,100', "8", A)
    assert request.axes == (
        GridAxis("model", ("/my models/e5,small", "b")),
        GridAxis("overlap", ("0", "100")),
    )
    assert request.count == 4
    assert "a double quote is not closed" in message_of(lambda t: parse_request(t, "8", A), 'model="a')
