"""Reading a model's weights and shape for the graph raglens writes itself, and the shipped references."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from raglens.bert_graph import GraphUnsupported, bert_shape, read_safetensors
from raglens.fingerprint import ModelFingerprint
from raglens.reference_vectors import shipped_reference, write_reference

BERT_CONFIG = {
    "model_type": "bert",
    "hidden_act": "gelu",
    "hidden_size": 8,
    "num_attention_heads": 2,
    "num_hidden_layers": 1,
    "layer_norm_eps": 1e-12,
}


def _safetensors(path: Path, tensors: dict[str, tuple[str, np.ndarray]]) -> None:
    """Write ``tensors`` (name: (safetensors dtype, array)) in the safetensors layout."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    body = b""
    for name, (dtype, array) in tensors.items():
        raw = array.tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [len(body), len(body) + len(raw)],
        }
        body += raw
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + body)


def test_safetensors_are_read_as_float32_whatever_their_float_type(tmp_path: Path) -> None:
    values = np.array([[1.5, -2.0, 0.15625], [3.0, 1e-3, -7.25]], dtype=np.float32)
    bf16 = (values.view(np.uint32) >> 16).astype("<u2")  # these values are exact in bf16's 8 bits
    _safetensors(
        tmp_path / "model.safetensors",
        {
            "a": ("F32", values.astype("<f4")),
            "b": ("F16", values.astype("<f2")),
            "c": ("BF16", bf16),
            "position_ids": ("I64", np.arange(4, dtype="<i8")),
        },
    )
    tensors = read_safetensors(tmp_path / "model.safetensors")
    assert set(tensors) == {"a", "b", "c"}, "integer buffers are not weights"
    np.testing.assert_array_equal(tensors["a"], values)
    np.testing.assert_allclose(tensors["b"], values, rtol=1e-3)
    np.testing.assert_array_equal(tensors["c"], (bf16.astype(np.uint32) << 16).view(np.float32))
    assert all(tensor.dtype == np.float32 for tensor in tensors.values())


def test_a_damaged_safetensors_header_is_refused(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", 5) + b"{nope")
    with pytest.raises(GraphUnsupported, match="no readable header"):
        read_safetensors(tmp_path / "model.safetensors")


def _model(tmp_path: Path, **changes: object) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(BERT_CONFIG | changes))
    (tmp_path / "model.safetensors").write_bytes(b"")
    return tmp_path


def test_the_shape_of_a_plain_bert_is_read(tmp_path: Path) -> None:
    shape = bert_shape(_model(tmp_path))
    assert (shape.layers, shape.hidden, shape.heads, shape.layer_norm_eps) == (1, 8, 2, 1e-12)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"model_type": "mpnet"}, "model type 'mpnet'"),
        ({"hidden_act": "gelu_new"}, "activation 'gelu_new'"),
        ({"position_embedding_type": "relative_key"}, "position embeddings"),
        ({"num_attention_heads": 3}, "not a multiple of 3 heads"),
    ],
)
def test_models_the_graph_cannot_be_written_for_are_refused(
    tmp_path: Path, changes: dict[str, object], reason: str
) -> None:
    with pytest.raises(GraphUnsupported, match=reason):
        bert_shape(_model(tmp_path, **changes))


def test_a_bert_without_safetensors_weights_is_refused(tmp_path: Path) -> None:
    (_model(tmp_path) / "model.safetensors").unlink()
    with pytest.raises(GraphUnsupported, match=r"no model\.safetensors"):
        bert_shape(tmp_path)


def _fingerprint(tmp_path: Path, files_digest: str) -> ModelFingerprint:
    return ModelFingerprint("d", "m", tmp_path, 256, "fp32", files_digest)


def test_shipped_references_serve_only_their_own_files_and_texts(tmp_path: Path) -> None:
    texts = ("one", "two")
    vectors = np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32)
    write_reference(_fingerprint(tmp_path, "abc"), texts, vectors, tmp_path)
    served = shipped_reference(_fingerprint(tmp_path, "abc"), texts, tmp_path)
    assert served is not None and np.array_equal(served, vectors), "float32 survives JSON bit for bit"
    assert shipped_reference(_fingerprint(tmp_path, "abd"), texts, tmp_path) is None, "other model files"
    assert shipped_reference(_fingerprint(tmp_path, "abc"), ("one", "three"), tmp_path) is None, "other texts"
