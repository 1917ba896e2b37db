"""``raglens``: the entry point that parses arguments and turns core errors into exit codes."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from enum import IntEnum
from typing import TYPE_CHECKING, TextIO, cast

from rich.console import Console

from raglens import __version__
from raglens.cli.consoles import GuardedStdout, HeadlessConsole, discard_output
from raglens.corpus import DEFAULT_MAX_FILE_BYTES, Corpus, CorpusOptions, require_indexable, scan_corpus
from raglens.diagnostics.golden import ExpectedRef, check_question
from raglens.errors import BadInputError, RaglensError
from raglens.locations import CACHE_DIR_ENV, cache_dir_named, log_folder
from raglens.printable import printable
from raglens.windows import Unit, WindowParams

if TYPE_CHECKING:  # imported when the explorer starts, and only then
    from raglens.ui.app_config import AppConfig


class ExitCode(IntEnum):
    """What ``raglens`` exits with."""

    OK = 0
    BAD_INPUT = 2
    NOTHING_INDEXABLE = 3
    CACHE_UNUSABLE = 4
    OUTPUT_UNWRITABLE = 5
    INTERRUPTED = 130
    PIPE_CLOSED = 141
    TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwind like Ctrl+C, so open transactions roll back and files close."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


SUBCOMMANDS = ("search", "files", "probe", "eval", "cache")

_DESCRIPTION = """\
See how rung-1 naive RAG behaves on your own files: fixed windows, one embedding model,
cosine top-k with no floor.

commands:
  raglens PATH [QUERY]            open the explorer on PATH (a terminal app), QUERY typed in
  raglens search PATH QUERY       print the top-k windows for QUERY (--json for scripts)
  raglens files PATH              list what would be indexed and what is skipped, and why,
                                  and how much of each file the model never reads
  raglens probe PATH              run the four failure probes of naive RAG on PATH
  raglens eval PATH GOLDEN.jsonl  recall@k, MRR and a calibrated floor for a golden set
  raglens cache info|clear        where the vector cache is, what it holds; empty it

exit codes: 0 ok, 2 bad usage or input, 3 nothing indexable, 4 cache cannot be read or written
(cache info, cache clear), 5 stdout closed or not writable (a full disk), 130 interrupted,
141 closed pipe, 143 terminated
"""


def _whole_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    return value


def _text(argument: str) -> str:
    """A command-line text as valid Unicode: bytes that are not UTF-8 become U+FFFD.

    Python hands such bytes over as lone surrogates, which no tokenizer can encode (a TypeError).
    """
    return os.fsencode(argument).decode("utf-8", errors="replace")


def _model_name(text: str) -> str:
    """A model name or folder; an empty one would be resolved against the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a model name or folder, got an empty string")
    return text


def _expected_ref(text: str) -> ExpectedRef:
    """``path`` or ``path::symbol``, as in a golden file."""
    try:
        return ExpectedRef.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _count(text: str) -> int:
    """A whole number of zero or more."""
    value = _whole_number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected zero or more, got {value}")
    return value


def _add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a folder or a single text file")
    parser.add_argument(
        "--unit",
        choices=[u.value for u in Unit],
        default=Unit.CHARS.value,
        help="what windows count (default: chars)",
    )
    parser.add_argument(
        "--size",
        type=_whole_number,
        default=None,
        help="window size in units (default: 1000 chars, 200 words, 40 lines)",
    )
    parser.add_argument(
        "--overlap",
        type=_whole_number,
        default=None,
        help="overlap between neighbouring windows (default: 200 chars, 20 words, 8 lines)",
    )
    parser.add_argument(
        "--max-file-bytes",
        type=_whole_number,
        default=DEFAULT_MAX_FILE_BYTES,
        help=f"skip files larger than this (default: {DEFAULT_MAX_FILE_BYTES:,})",
    )


def _add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        type=_model_name,
        default=None,
        help="a sentence-transformers model name or folder (default: the bundled all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--device",
        default=None,
        type=_device,
        help=(
            "cpu, cuda, cuda:1, mps… (default: cuda if available); several, as cuda:0,cuda:1, embed "
            "windows in sentence-transformers' multi-process pool, a process per device"
        ),
    )
    parser.add_argument(
        "--precision",
        choices=["fp32", "bf16"],
        default=None,
        help="the model's weights: fp32 (the default) gives the model's exact ranking; bf16 is faster "
        "on CPUs with native bf16 and approximate (labelled so wherever a score is shown)",
    )
    parser.add_argument(
        "--allow-download",
        action="store_true",
        help="let a named --model be fetched from the Hugging Face hub (off: raglens runs offline)",
    )
    parser.add_argument(
        "-k", "--top-k", dest="k", type=_whole_number, default=5, help="hits to show (default: 5)"
    )
    parser.add_argument(
        "--lines",
        dest="max_lines",
        type=_count,
        default=6,
        help="lines of each hit's text to print (default: 6)",
    )
    parser.add_argument(
        "--max-seq-length",
        type=_whole_number,
        default=None,
        metavar="N",
        help="tokens of each window the model reads (default: the model's own; all-MiniLM-L6-v2 reads "
        "256 and accepts up to 512)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no narration on stderr")
    _add_cache_arguments(parser)
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the cache (vectors, and the files' texts as last read) this time",
    )
    # module:callable of another embedder, for tests that need a fake model on the real path.
    parser.add_argument("--embedder-factory", default=None, help=argparse.SUPPRESS)


def _add_cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-dir",
        default=None,
        help=f"the vector cache's folder (default: ${CACHE_DIR_ENV}, else the user cache folder)",
    )


def build_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser for ``command`` (None: the default ``raglens PATH [QUERY]``)."""
    formatter = argparse.RawDescriptionHelpFormatter
    if command is None:
        parser = argparse.ArgumentParser(prog="raglens", description=_DESCRIPTION, formatter_class=formatter)
        parser.add_argument("--version", action="version", version=f"raglens {__version__}")
        _add_corpus_arguments(parser)
        parser.add_argument("query", metavar="QUERY", nargs="?", type=_text, help="a question to search for")
        parser.add_argument(
            "--golden",
            default=None,
            metavar="FILE",
            help="the golden JSONL file the app's g key appends cases to (default: one per corpus "
            "in the user data folder)",
        )
        _add_model_arguments(parser)
        return parser
    parser = argparse.ArgumentParser(prog=f"raglens {command}", formatter_class=formatter)
    if command == "cache":
        parser.description = "Show where the vector cache is and what it holds, or empty it."
        parser.add_argument("action", choices=["info", "clear"], help="info: what is cached; clear: delete")
        parser.add_argument(
            "--model",
            type=_model_name,
            default=None,
            help="with clear: only this model's vectors (name or fingerprint)",
        )
        _add_cache_arguments(parser)
        parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        return parser
    _add_corpus_arguments(parser)
    if command == "search":
        parser.description = (
            "Print the top-k windows of PATH for QUERY, ranked by cosine similarity "
            "(or by BM25: --model bm25)."
        )
        parser.add_argument("query", metavar="QUERY", type=_text, help="the question to search for")
        parser.add_argument(
            "--prompt",
            action="store_true",
            help="also show the exact prompt an LLM would get: the top-k windows, cited, and the question",
        )
        parser.add_argument(
            "--explain",
            action="store_true",
            help="take each hit's score apart into the shares of its tokens and the question's words "
            "(exact, for mean-pooling models and BM25)",
        )
        parser.add_argument(
            "--expect",
            type=_expected_ref,
            action="append",
            default=[],
            metavar="PATH[::SYMBOL]",
            help="the answer you expect (repeatable): its rank is reported (in both rankings with --vs)",
        )
        parser.add_argument(
            "--vs",
            metavar="SPEC",
            default=None,
            help="also rank with configuration B, given as key=value pairs over this one's settings "
            "(keys: unit, size, overlap, model, max_seq_length, precision), e.g. size=800,overlap=100",
        )
        _add_model_arguments(parser)
    elif command == "probe":
        parser.description = (
            "Run the four failure probes of naive RAG on PATH: an exact symbol, an answer cut by the "
            "window grid, a question in other languages, questions the corpus cannot answer."
        )
        parser.add_argument(
            "--probe",
            type=_text,
            dest="probes",
            action="append",
            default=[],
            metavar="QUERY",
            help="a probe of your own (repeatable)",
        )
        _add_model_arguments(parser)
    elif command == "eval":
        parser.description = "Evaluate retrieval on PATH against a golden set (one JSON object per line)."
        parser.add_argument("golden", metavar="GOLDEN.jsonl", help='lines such as {"q": …, "expect": […]}')
        parser.add_argument(
            "--floor", type=float, default=None, help="a score floor: report what abstaining below it does"
        )
        parser.add_argument(
            "--save",
            nargs="?",
            const=".",
            default=None,
            metavar="FOLDER",
            help="write the report as a dated JSON file into FOLDER (default: the current folder); "
            "with --grid, one file per configuration",
        )
        parser.add_argument(
            "--grid",
            action="append",
            default=[],
            metavar="KEY=V1,V2",
            help="evaluate every combination of these values (repeatable; keys: unit, size, overlap, "
            "model, max_seq_length, precision), e.g. --grid size=600,800,1000 --grid overlap=0,100",
        )
        parser.add_argument(
            "--plot",
            default=None,
            metavar="FILE",
            help="with --grid, also draw recall@k and MRR against the varied parameter (FILE: .svg or .png)",
        )
        parser.add_argument(
            "--events",
            action="store_true",
            help="with --grid, for programs: JSON lines on stdout, one per configuration started and "
            "evaluated, then the report or the failure (see raglens/grid_events.py)",
        )
        _add_model_arguments(parser)
        parser.set_defaults(k=8)
    else:
        parser.description = (
            "List what raglens would index under PATH, in how many windows, what it skips, and how "
            "much of each file the model never reads."
        )
        parser.add_argument(
            "--model",
            type=_model_name,
            default=None,
            help="the model whose tokenizer measures coverage (default: the bundled all-MiniLM-L6-v2)",
        )
        parser.add_argument("-q", "--quiet", action="store_true", help=argparse.SUPPRESS)
        # Taken as every other command takes them, so one set of flags serves a script's every call;
        # files reads and writes no vectors, so they change nothing here.
        parser.add_argument(
            "--cache-dir", default=None, help="accepted as the other commands take it; files uses no cache"
        )
        parser.add_argument("--no-cache", action="store_true", help="accepted; files uses no cache")
    parser.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    return parser


def _device(text: str) -> str:
    """``--device`` as given, once a list of devices names each one (refused before any import)."""
    from raglens.devices import pool_devices

    try:
        pool_devices(text)
    except BadInputError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--device {text}: ")) from error
    return text


def _window_params(args: argparse.Namespace) -> WindowParams:
    return WindowParams.for_unit(args.unit, args.size, args.overlap)


def _scan(args: argparse.Namespace) -> Corpus:
    return scan_corpus(args.path, CorpusOptions(max_file_bytes=args.max_file_bytes))


STDOUT_CLOSED = (
    "raglens: stdout is closed (>&-); raglens writes its results there: "
    "send them to a file, or to /dev/null to drop them"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run raglens with ``argv`` (default: the process's arguments) and return the exit code."""
    if sys.stdout is None:
        # Python found descriptor 1 closed: the next file raglens opened (the SQLite cache) would get
        # it, and whatever is written to descriptor 1 would land in that file. Refused before anything opens.
        if sys.stderr is not None:
            with contextlib.suppress(OSError):
                print(STDOUT_CLOSED, file=sys.stderr)
        return ExitCode.OUTPUT_UNWRITABLE
    arguments = list(sys.argv[1:] if argv is None else argv)
    command = arguments[0] if arguments and arguments[0] in SUBCOMMANDS else None
    parser = build_parser(command)
    args = parser.parse_args(arguments[1:] if command else arguments)
    stderr = HeadlessConsole(stderr=True, highlight=False, soft_wrap=True)
    headless = command is not None and threading.current_thread() is threading.main_thread()
    if headless:
        from raglens.parent_death import die_with_parent_if_asked

        die_with_parent_if_asked()  # a command the explorer runs as its child ends with it
    previous = signal.signal(signal.SIGTERM, _terminate) if headless else None  # the app has its own
    # A full disk or an I/O error on stdout is one line and exit 5; the explorer draws on its own.
    guarded = GuardedStdout(sys.stdout) if headless else None
    if guarded is not None:
        sys.stdout = cast(TextIO, guarded)
    try:
        code = _dispatch(command, args, stderr)
        if guarded is not None:
            guarded.flush()  # here, so a failing last flush is caught like any other write
        return code
    except RaglensError as error:
        # An error may quote a path or a golden ref: shown inert, whatever its bytes.
        _report(stderr, f"raglens: {printable(str(error))}")
        return error.exit_code
    except Terminated:
        _report(stderr, "raglens: terminated")
        return ExitCode.TERMINATED
    except KeyboardInterrupt:
        _report(stderr, "raglens: interrupted")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`raglens files | head -1`): stop quietly, as a pipeline expects; what
        # is still buffered goes to /dev/null, so the interpreter's last flush cannot fail again.
        discard_output(sys.stdout)
        return ExitCode.PIPE_CLOSED
    finally:
        if guarded is not None:
            sys.stdout = guarded.stream
        if headless:
            signal.signal(signal.SIGTERM, previous)


def _report(stderr: Console, line: str) -> None:
    """Print the line that ends a failed run; a stderr that cannot take it leaves the exit code to say it."""
    with contextlib.suppress(OSError):
        stderr.print(line, markup=False)


def _dispatch(command: str | None, args: argparse.Namespace, stderr: Console) -> int:
    """Run ``command`` (None: the explorer)."""
    _refuse_careless_arguments(command, args)  # before the explorer's own check that it has a terminal
    if command == "files":
        return _run_files(args)
    if command == "cache":
        from raglens.cli.caching import run_cache

        return run_cache(args, cache_dir_named(args.cache_dir))
    if command == "search":
        from raglens.cli.searching import run_search

        return run_search(args, _window_params(args), stderr)
    if command == "probe":
        from raglens.cli.probing import run_probe

        return run_probe(args, _window_params(args), stderr)
    if command == "eval":
        from raglens.cli.evaluating import run_eval

        return run_eval(args, _window_params(args), stderr)
    return _run_app(args)


def _refuse_careless_arguments(command: str | None, args: argparse.Namespace) -> None:
    """Refuse the careless values argparse lets through, each with one line (BadInputError):
    an empty PATH (it would index the current folder), an empty cache folder (it would be the user's
    own cache), an empty or runaway question."""
    path = getattr(args, "path", None)
    if path is not None and not path.strip():
        raise BadInputError("PATH is empty; name a folder or a file (. for the current folder)")
    golden = getattr(args, "golden", None)
    if golden is not None and not golden.strip():
        what = "GOLDEN.jsonl" if command == "eval" else "--golden"
        raise BadInputError(f"{what} is empty; name a golden file")
    cache_dir_named(args.cache_dir)  # an empty --cache-dir or $RAGLENS_CACHE_DIR is refused here
    query: str | None = getattr(args, "query", None)
    if query is not None and (command == "search" or query):  # the explorer's may be left out, or ""
        check_question(query, "QUERY")
    for number, probe in enumerate(getattr(args, "probes", []), start=1):
        check_question(probe, f"--probe number {number}")


def _run_app(args: argparse.Namespace) -> int:
    """Open the explorer; the model loads in another process, so the first frame comes at once."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise BadInputError(
            "raglens PATH opens a terminal app and needs a terminal; "
            "for scripts use: raglens search PATH QUERY [--json]"
        )
    config = explorer_config(args)
    # Started before Textual is imported: the model's engine opens while the app loads and paints.
    process = config.engine.start(config.retrieval)
    try:
        from raglens.ui.app import RaglensApp

        app = RaglensApp(config, process)
        app.run()
    finally:
        process.close(timeout=2)
    return app.return_code or ExitCode.OK


def explorer_config_from(arguments: Sequence[str]) -> AppConfig:
    """What ``raglens ARGUMENTS…`` opens the explorer with; the tests build their apps through it too."""
    return explorer_config(build_parser(None).parse_args(list(arguments)))


def explorer_config(args: argparse.Namespace) -> AppConfig:
    """What the explorer starts with, from ``raglens PATH …``; bad values fail before the screen opens."""
    from raglens.cli.settings import engine_settings, retrieval_config, top_k
    from raglens.ui.app_config import AppConfig

    _refuse_careless_arguments(None, args)
    k = top_k(args)
    params = _window_params(args)
    CorpusOptions(max_file_bytes=args.max_file_bytes)  # reject a bad limit before the screen opens
    retrieval = retrieval_config(args, params)
    logs = log_folder()
    return AppConfig(
        path=args.path,
        retrieval=retrieval,
        engine=engine_settings(args, log_path=str(logs / "embedding-process.log")),
        k=k,
        query=args.query or "",
        max_file_bytes=args.max_file_bytes,
        golden_path=args.golden,
        error_log_path=str(logs / "raglens.log"),
    )


def _run_files(args: argparse.Namespace) -> int:
    from raglens.cli.consoles import console_for
    from raglens.cli.documents import dump, files_document
    from raglens.cli.render import print_files
    from raglens.configuration import is_bm25
    from raglens.diagnostics.coverage import measure_coverage, token_counter_for
    from raglens.windows import cut_corpus

    params = _window_params(args)
    corpus = _scan(args)
    windows = cut_corpus(corpus, params)
    counts = {source.path: 0 for source in corpus.files}
    for window in windows:
        counts[window.path] += 1
    from raglens.cli.settings import retrieval_config

    model = retrieval_config(args, params).model  # the bundled model by its name is the bundled one
    coverage = None
    counter = None if is_bm25(model) else token_counter_for(model)
    if counter is not None:
        from raglens.cli.narration import Narrator

        with Narrator(console_for(stderr=True), quiet=args.quiet) as narrator:
            coverage = measure_coverage(
                corpus.texts(),
                windows,
                counter,
                lambda done, total: narrator.counted("measuring what the model reads", done, total),
            )
    else:
        why = "bm25 reads every token of a window; no coverage to measure"
        if not is_bm25(model):
            why = f"no tokenizer of {model} here; coverage is not measured"
        console_for(stderr=True).print(f"raglens: note: {why}", markup=False)
    if args.json:
        print(dump(files_document(corpus, params, args.max_file_bytes, counts, coverage)))
    else:
        print_files(console_for(), corpus, params, counts, coverage)
    require_indexable(corpus, args.path)
    return ExitCode.OK


__all__ = ["ExitCode", "build_parser", "main"]
