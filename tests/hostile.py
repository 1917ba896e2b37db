"""A hostile corpus, generated in a temporary folder: every kind of file a real repository holds.

Nothing here is committed as binary junk; ``build_hostile_corpus`` writes it and says, for each
path, what raglens should make of it.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

TERMINAL_ATTACK = (
    "Clear \x1b[2J\x1b[H, move \x1b[10;10H, title \x1b]0;owned\x07, "
    "clipboard \x1b]52;c;cm0gLXJmIH4=\x07, bell \x07, erase\x08\x08, C1 \x9b31m, bidi \u202eevil\u202c.\n"
    "[bold red]markup[/] and [link=x]y[/link].\n"
)
"""Escape sequences, OSC clipboard and title writes, bells, backspaces, C1 CSI, bidi and Rich markup."""

INDEXED = "indexed"
MANY_FILES = 400


def build_hostile_corpus(root: Path, outside: Path) -> dict[str, str]:
    """Write the corpus under ``root`` (and a target under ``outside``); path -> reason or INDEXED."""
    expected: dict[str, str] = {}

    def write(path: str, content: bytes | str, outcome: str) -> Path:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else content
        target.write_bytes(data)
        expected[path] = outcome
        return target

    noise = random.Random(1234)
    write(
        "binary.bin", b"\x7fELF\x02\x01\x01\x00" + bytes(noise.randrange(256) for _ in range(4000)), "binary"
    )
    write("nul_in_text.txt", b"looks like text\x00but has a NUL\n", "binary")
    write("random.dat", b"\x00" + bytes(noise.randrange(256) for _ in range(2000)), "binary")
    write("invalid_utf8.txt", b"caf\xc3 broken \x81\x8d\x8f\x90\x9d bytes\nsecond line\n", INDEXED)
    write("utf16_bom.txt", "UTF-16 with a byte-order mark\nline two\n".encode("utf-16"), INDEXED)
    write("utf16_nobom.txt", "UTF-16 without a BOM, little endian\n".encode("utf-16-le"), INDEXED)
    write("cp1252.txt", "Windows-1252: naïve café \u2013 \u201cquotes\u201d\n".encode("cp1252"), INDEXED)
    write("crlf.txt", b"one\r\ntwo\r\nthree\r\n", INDEXED)
    write("lone_cr.txt", b"one\rtwo\rthree\r", INDEXED)
    write("empty.txt", b"", "empty")
    write("blank.txt", " \n\t\n  \r\n", "empty")
    write("terminal_attack.md", TERMINAL_ATTACK * 4, INDEXED)
    write("bundle.js", "var a=1;" * 100_000, "generated")  # one 800 kB line
    write("app.min.js", "x", "generated")
    huge = write("huge.log", b"", "too large")
    with huge.open("r+b") as handle:
        handle.truncate(30 * 1024 * 1024)  # 30 MB, sparse: skipped by size before it is read
    for number in range(MANY_FILES):
        write(f"many/note_{number:04}.txt", f"small note {number}\n", INDEXED)
    write("docs/real.md", "# The real document\nlinked to from elsewhere\n", INDEXED)
    os.symlink("real.md", root / "docs" / "alias.md")
    expected["docs/alias.md"] = "symlink"  # the target is indexed under its own path, once
    (outside / "secret.txt").write_text("outside the root\n", encoding="utf-8")
    os.symlink(outside / "secret.txt", root / "escape.txt")
    expected["escape.txt"] = "symlink"
    os.symlink(root / "nowhere.txt", root / "dangling.txt")
    expected["dangling.txt"] = "symlink"
    (root / "loop").mkdir()
    os.symlink("../loop", root / "loop" / "again")
    expected["loop/again"] = "symlink"
    write(".gitignore", "*.secret\n!keep.secret\nout/\n", INDEXED)
    write("drop.secret", "ignored\n", "ignored")
    write("keep.secret", "kept by a negation rule\n", INDEXED)
    write("out/result.txt", "in an ignored folder\n", "ignored")
    del expected["out/result.txt"]
    expected["out/"] = "ignored"  # a folder is listed once, with a trailing slash
    write("sub/.gitignore", "local.txt\n", INDEXED)
    write("sub/local.txt", "ignored by the nested rule\n", "ignored")
    write("sub/shared.txt", "kept\n", INDEXED)
    write("node_modules/pkg/index.js", "module.exports = 1\n", "vendored")
    del expected["node_modules/pkg/index.js"]
    expected["node_modules/"] = "vendored"
    return expected
