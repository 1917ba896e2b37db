"""The core never imports Textual, and nothing cheap pays for torch."""

from __future__ import annotations

import pkgutil
import subprocess
import sys


def _core_modules() -> list[str]:
    """Every module of raglens outside its two front ends (the app and the CLI), found on disk."""
    import raglens

    found = [
        info.name
        for info in pkgutil.walk_packages(raglens.__path__, "raglens.")
        if not info.name.startswith(("raglens.ui", "raglens.cli", "raglens.__main__"))
    ]
    assert "raglens.diagnostics.probes" in found and "raglens.search" in found
    return found


CORE_MODULES = _core_modules()


def loaded_modules_after(code: str) -> set[str]:
    script = f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"
    output = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(output.stdout.split())


def test_core_imports_neither_textual_nor_the_model_libraries() -> None:
    loaded = loaded_modules_after("\n".join(f"import {name}" for name in CORE_MODULES))
    assert set(CORE_MODULES) <= loaded
    for forbidden in ("textual", "torch", "sentence_transformers", "transformers"):
        assert forbidden not in loaded, f"importing the core loaded {forbidden}"


def test_the_cli_parses_and_lists_files_without_torch() -> None:
    loaded = loaded_modules_after(
        "from raglens.cli.main import main\nimport contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    main(['files', 'sample_corpus', '--json'])"
    )
    assert "raglens.cli.main" in loaded
    assert "torch" not in loaded
    assert "sentence_transformers" not in loaded


def test_the_app_module_loads_without_numpy() -> None:
    """numpy loads in the app's workers after the first frame; importing it earlier delays that frame."""
    loaded = loaded_modules_after("import raglens.cli.main\nimport raglens.ui.app")
    assert "raglens.ui.app" in loaded
    assert "numpy" not in loaded
    assert "pathspec" not in loaded
    assert "pygments" not in loaded
