"""A BERT sentence-transformer written as one ONNX graph straight from its weights: no torch.

The export through torch needs sentence-transformers' import (7-20 s here) before its ~6 s of
tracing; a plain script pays that import too, so a first run that waited for it could not beat the
script it teaches about. A BERT encoder is a short, fixed sequence of operators, so raglens writes it
itself from ``config.json`` and ``model.safetensors``, with onnxruntime's fused attention and GELU
kernels (the ones its optimizer puts into the traced export): 2.2 s here, 3 s with its check. The
graph has the traced export's inputs and outputs; whether it computes the model's vectors is decided
the same way, against the model's own reference vectors (see ``raglens.reference_vectors``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from raglens.errors import ModelLoadError

WEIGHTS_FILE = "model.safetensors"
OPSET = 17
"""The first opset with LayerNormalization, which the traced export uses too."""
MICROSOFT = "com.microsoft"
"""onnxruntime's operator domain: Attention and BiasGelu, as its BERT optimizer fuses them."""


class GraphUnsupported(ModelLoadError):
    """The model is not a BERT encoder this module can write (then the torch export is used)."""


@dataclass(frozen=True)
class BertShape:
    """The few numbers of ``config.json`` that shape the graph."""

    layers: int
    hidden: int
    heads: int
    layer_norm_eps: float


def bert_shape(folder: Path) -> BertShape:
    """The model's shape from ``config.json``, or GraphUnsupported when it is not a plain BERT."""
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise GraphUnsupported(f"no readable config.json in {folder}: {error}") from None
    if config.get("model_type") != "bert":
        raise GraphUnsupported(f"model type {config.get('model_type')!r}, not bert")
    if config.get("hidden_act", "gelu") != "gelu":
        raise GraphUnsupported(f"activation {config.get('hidden_act')!r}, not gelu")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise GraphUnsupported(f"position embeddings {config.get('position_embedding_type')!r}")
    if not (folder / WEIGHTS_FILE).is_file():
        raise GraphUnsupported(f"no {WEIGHTS_FILE} in {folder}")
    try:
        shape = BertShape(
            int(config["num_hidden_layers"]),
            int(config["hidden_size"]),
            int(config["num_attention_heads"]),
            float(config.get("layer_norm_eps", 1e-12)),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise GraphUnsupported(f"config.json lacks {error}") from None
    if shape.hidden % shape.heads:
        raise GraphUnsupported(f"hidden size {shape.hidden} is not a multiple of {shape.heads} heads")
    return shape


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every float tensor of a safetensors file, as float32 arrays.

    The format: an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
    shape and byte range, then the bytes.
    """
    types = {"F32": np.float32, "F16": np.float16, "BF16": None}
    data = path.read_bytes()
    length = int.from_bytes(data[:8], "little")
    try:
        header = json.loads(data[8 : 8 + length])
    except ValueError as error:
        raise GraphUnsupported(f"{path.name} has no readable header: {error}") from None
    body = memoryview(data)[8 + length :]
    tensors: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype, shape, (start, end) = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in types:
            continue  # integer buffers (position ids): the graph makes its own
        raw = body[start:end]
        if dtype == "BF16":
            halves = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            array = halves.view(np.float32)
        else:
            array = np.frombuffer(raw, dtype=np.dtype(types[dtype]).newbyteorder("<")).astype(np.float32)
        tensors[name] = array.reshape(shape)
    return tensors


class _Weights:
    """The model's tensors by their name inside BertModel, with or without a ``bert.`` prefix."""

    def __init__(self, tensors: dict[str, np.ndarray]) -> None:
        self._tensors = {name.removeprefix("bert."): array for name, array in tensors.items()}

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._tensors[name]
        except KeyError:
            raise GraphUnsupported(f"the weights have no tensor {name}") from None

    def linear(self, prefix: str) -> tuple[np.ndarray, np.ndarray]:
        """A torch Linear's weight, transposed for ``x @ w``, and its bias."""
        return np.ascontiguousarray(self[f"{prefix}.weight"].T), self[f"{prefix}.bias"]


class _GraphWriter:
    """Nodes and initializers of one graph, each named once."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []

    def constant(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], output: str, *, domain: str = "", **attributes: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attributes))
        return output

    def layer_norm(self, source: str, prefix: str, weights: _Weights, eps: float, output: str) -> str:
        gamma = self.constant(f"{prefix}.weight", weights[f"{prefix}.weight"])
        beta = self.constant(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.node("LayerNormalization", [source, gamma, beta], output, axis=-1, epsilon=eps)

    def dense(self, source: str, prefix: str, weights: _Weights, output: str) -> str:
        """``source @ W + b``, added in the order torch's Linear adds them."""
        weight, bias = weights.linear(prefix)
        product = self.node("MatMul", [source, self.constant(f"{prefix}.weight", weight)], f"{output}.matmul")
        return self.node("Add", [product, self.constant(f"{prefix}.bias", bias)], output)


def _embeddings(writer: _GraphWriter, weights: _Weights, shape: BertShape) -> str:
    """Word, position and token-type embeddings summed, then normalised, as BertEmbeddings does."""
    prefix = "embeddings"
    words = writer.node(
        "Gather",
        [writer.constant("word_embeddings", weights[f"{prefix}.word_embeddings.weight"]), "input_ids"],
        "embeddings.words",
    )
    ids_shape = writer.node("Shape", ["input_ids"], "embeddings.ids_shape")
    length = writer.node(
        "Gather",
        [ids_shape, writer.constant("one", np.array(1, dtype=np.int64))],
        "embeddings.length",
        axis=0,
    )
    zero = writer.constant("zero", np.array(0, dtype=np.int64))
    positions = writer.node("Range", [zero, length, "one"], "embeddings.position_ids")
    placed = writer.node(
        "Gather",
        [writer.constant("position_embeddings", weights[f"{prefix}.position_embeddings.weight"]), positions],
        "embeddings.positions",
    )
    typed = writer.node(
        "Gather",
        [
            writer.constant("token_type_embeddings", weights[f"{prefix}.token_type_embeddings.weight"]),
            "token_type_ids",
        ],
        "embeddings.types",
    )
    summed = writer.node("Add", [words, typed], "embeddings.words_types")
    summed = writer.node("Add", [summed, placed], "embeddings.sum")
    return writer.layer_norm(summed, f"{prefix}.LayerNorm", weights, shape.layer_norm_eps, "embeddings.out")


def _layer(
    writer: _GraphWriter, weights: _Weights, shape: BertShape, index: int, hidden: str, mask: str
) -> str:
    """One encoder layer: fused self-attention, then the feed-forward, each with its residual norm."""
    prefix = f"encoder.layer.{index}"
    attention = f"{prefix}.attention.self"
    parts = [weights.linear(f"{attention}.{name}") for name in ("query", "key", "value")]
    packed_weight = np.concatenate([weight for weight, _ in parts], axis=1)
    packed_bias = np.concatenate([bias for _, bias in parts])
    attended = writer.node(
        "Attention",
        [
            hidden,
            writer.constant(f"{attention}.qkv.weight", packed_weight),
            writer.constant(f"{attention}.qkv.bias", packed_bias),
            mask,
        ],
        f"{attention}.out",
        domain=MICROSOFT,
        num_heads=shape.heads,
    )
    projected = writer.dense(
        attended, f"{prefix}.attention.output.dense", weights, f"{prefix}.attention.dense"
    )
    residual = writer.node("Add", [projected, hidden], f"{prefix}.attention.residual")
    attended_norm = writer.layer_norm(
        residual,
        f"{prefix}.attention.output.LayerNorm",
        weights,
        shape.layer_norm_eps,
        f"{prefix}.attention.norm",
    )
    weight, bias = weights.linear(f"{prefix}.intermediate.dense")
    widened = writer.node(
        "MatMul",
        [attended_norm, writer.constant(f"{prefix}.intermediate.dense.weight", weight)],
        f"{prefix}.intermediate.matmul",
    )
    activated = writer.node(
        "BiasGelu",
        [widened, writer.constant(f"{prefix}.intermediate.dense.bias", bias)],
        f"{prefix}.intermediate.gelu",
        domain=MICROSOFT,
    )
    narrowed = writer.dense(activated, f"{prefix}.output.dense", weights, f"{prefix}.output.dense")
    residual = writer.node("Add", [narrowed, attended_norm], f"{prefix}.output.residual")
    return writer.layer_norm(
        residual, f"{prefix}.output.LayerNorm", weights, shape.layer_norm_eps, f"{prefix}.out"
    )


def _pool(writer: _GraphWriter, hidden: str, pooling: str, output: str) -> str:
    """Mean over the tokens the mask keeps (as sentence-transformers' Pooling), or the first token."""
    if pooling == "cls":
        first = writer.constant("first_token", np.array(0, dtype=np.int64))
        return writer.node("Gather", [hidden, first], output, axis=1)
    mask = writer.node("Cast", ["attention_mask"], "pool.mask", to=1)  # FLOAT
    mask = writer.node("Unsqueeze", [mask, writer.constant("last_axis", np.array([-1]))], "pool.mask3")
    masked = writer.node("Mul", [hidden, mask], "pool.masked")
    token_axis = writer.constant("token_axis", np.array([1]))
    total = writer.node("ReduceSum", [masked, token_axis], "pool.sum", keepdims=0)
    counted = writer.node("ReduceSum", [mask, token_axis], "pool.count", keepdims=0)
    floor = writer.constant("count_floor", np.array(1e-9, dtype=np.float32))
    counted = writer.node("Max", [counted, floor], "pool.count_floored")
    return writer.node("Div", [total, counted], output)


def write_bert_graph(folder: Path, target: Path, pooling: str, pooled: str, token_states: str) -> None:
    """Write the model at ``folder`` as one ONNX graph to ``target``, with the traced export's interface.

    Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, batch by sequence); outputs
    ``pooled`` (the pooled vector, not normalised) and ``token_states`` (the last layer's token vectors).
    """
    import onnx
    from onnx import TensorProto, helper

    shape = bert_shape(folder)
    weights = _Weights(read_safetensors(folder / WEIGHTS_FILE))
    writer = _GraphWriter()
    mask = writer.node("Cast", ["attention_mask"], "attention.mask", to=TensorProto.INT32)
    hidden = _embeddings(writer, weights, shape)
    for index in range(shape.layers):
        hidden = _layer(writer, weights, shape, index, hidden, mask)
    hidden = writer.node("Identity", [hidden], token_states)
    _pool(writer, hidden, pooling, pooled)
    names = ("input_ids", "attention_mask", "token_type_ids")
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in names]
    outputs = [
        helper.make_tensor_value_info(pooled, TensorProto.FLOAT, ["batch", shape.hidden]),
        helper.make_tensor_value_info(token_states, TensorProto.FLOAT, ["batch", "sequence", shape.hidden]),
    ]
    graph = helper.make_graph(writer.nodes, "raglens-bert", inputs, outputs, writer.initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid(MICROSOFT, 1)],
        producer_name="raglens",
    )
    model.ir_version = 8
    onnx.save(model, str(target))
