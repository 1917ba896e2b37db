# ruff: noqa: RUF001  (Turkish questions are written with the dotless i)
"""Telling a question's language: no English question of the golden sets or of a developer's kind is
flagged, and questions in eight other languages are."""

from __future__ import annotations

from pathlib import Path

import pytest

from raglens.diagnostics.question_language import question_language
from raglens.model_languages import ModelLanguages, card_languages, model_languages

ENGLISH_ONLY = ModelLanguages(frozenset({"en"}), "model card")

ENGLISH = (
    "how long does a worker wait before retrying a failed job?",
    "how do I schedule a job every night?",
    "where are finished jobs deleted?",
    "what happens when a worker loses its lease?",
    "have you ever been to a five-star resort?",
    "what is a good recipe for banana bread?",
    "how often should I water an orchid?",
    "why do I need a different salt for each context?",
    "how do I rotate secret keys without invalidating every token?",
    "is SHA-1 safe to use as the digest method?",
    "how do I make a signature expire after some seconds?",
    "how does a serializer upgrade old tokens to a new digest?",
    "where is the payload base64 decoded?",
    "how do I add a middleware to my app?",
    "how do I serve static files?",
    "What is the best pizza in Naples?",
    "how to configure CORS",
    "jwt token expiry",
    "pytest fixtures scope",
    "async await deadlock",
    "the queue",
    "Kubernetes deployment yaml",
    "configure logging level",
    "database connection pool size",
    "list comprehension vs map",
    "why is my test flaky",
    "where is the config file read",
    "how are failed jobs retried?",
    "retry with exponential backoff",
    "what does the scheduler do at midnight",
    "is the cache thread safe",
    "how to run the app in docker",
    "explain the lease mechanism",
    "how does loads_unsafe work",
    "drain_pending_jobs",
    "Store.heartbeat",
    "Signer.derive_key salt",
    "where are workers started.",
    *"""message queue dead letter
retry backoff jitter
oauth token refresh
connection pool exhausted
graceful shutdown signal
memory leak profiling
database migration rollback
unit test fixtures
cache invalidation strategy
json schema validation
secret key rotation
static files serving
api versioning header
command line arguments
router url params
csrf token form
timestamp signer max age
digest method sha256
webhook signature verify
cron schedule nightly""".splitlines(),
)

OTHER = (
    ("wie starte ich einen Worker?", "de"),
    ("wie lasse ich eine Signatur nach einigen Sekunden ablaufen?", "de"),
    ("Uygulamama nasıl ara katman eklerim?", "tr"),
    ("statik dosyaları nasıl sunarım?", "tr"),
    ("¿cómo se manejan los errores?", "es"),
    ("comment les erreurs sont-elles gérées ?", "fr"),
    ("o que é um worker?", "pt"),
    ("как добавить middleware?", "ru"),
    ("如何添加中间件?", "zh"),
    ("ワーカーを起動する方法は?", "ja"),
    ("Wie kann ich das Token erneuern", "de"),
    ("Ich brauche Hilfe", "de"),
    ("hoe werkt de wachtrij?", "nl"),
    ("jak obsługiwać błędy?", "pl"),
)


@pytest.mark.parametrize("question", ENGLISH)
def test_an_english_question_is_never_flagged(question: str) -> None:
    found = question_language(question, ENGLISH_ONLY)
    assert found is None or found.model_reads_it, found


@pytest.mark.parametrize(("question", "code"), OTHER)
def test_a_question_in_another_language_is_told(question: str, code: str) -> None:
    found = question_language(question, ENGLISH_ONLY)
    assert found is not None and found.code == code and not found.model_reads_it
    assert "the model reads English only" in found.describe()


def test_a_multilingual_or_unknown_model_gets_no_verdict() -> None:
    assert question_language("wie starte ich einen Worker?", ModelLanguages(None, "its name")) is None
    assert question_language("wie starte ich einen Worker?", None) is None


def test_the_bundled_model_reads_english_by_its_card() -> None:
    assert model_languages(None) == ModelLanguages(frozenset({"en"}), "model card")


@pytest.mark.parametrize(
    ("name", "codes"),
    [
        ("multi-qa-MiniLM-L6-cos-v1", frozenset({"en"})),
        ("paraphrase-multilingual-MiniLM-L12-v2", None),
        ("sentence-transformers/LaBSE", None),
        ("BAAI/bge-small-en-v1.5", frozenset({"en"})),
    ],
)
def test_known_names_say_their_languages(name: str, codes: frozenset[str] | None) -> None:
    found = model_languages(name)
    assert found is not None and found.codes == codes


def test_an_unknown_model_is_not_guessed() -> None:
    assert model_languages("acme/house-embedder") is None


@pytest.mark.parametrize(
    ("card", "codes"),
    [
        ("---\nlanguage: en\nlicense: mit\n---\n# m", frozenset({"en"})),
        ("---\nlanguage:\n- de\n- 'fr'\ntags:\n- x\n---\n", frozenset({"de", "fr"})),
        ("---\nlanguage: [en, zh]\n---\n", frozenset({"en", "zh"})),
        ("---\nlicense: mit\n---\nlanguage: en", None),
        ("# no front matter\nlanguage: en", None),
    ],
)
def test_a_card_front_matter_gives_the_languages(card: str, codes: frozenset[str] | None) -> None:
    assert card_languages(card) == codes


def test_a_folder_model_is_read_from_its_card(tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "README.md").write_text("---\nlanguage:\n  - nl\n---\n", encoding="utf-8")
    model_languages.cache_clear()
    found = model_languages(str(folder))
    assert found == ModelLanguages(frozenset({"nl"}), "model card")
