"""Splitting onnxruntime's fused skip layer norms: the plain ops compute what the fused one did."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from raglens.onnx_graph import split_skip_layer_norms


def skip_layer_norm_model(
    hidden: int, seed: int, *, with_bias: bool = True, opset: int = 17, mean_output: bool = False
) -> onnx.ModelProto:
    """``x`` and ``skip`` of shape (batch, sequence, hidden) through one fused SkipLayerNormalization."""
    rng = np.random.default_rng(seed)
    weights = {
        "gamma": rng.standard_normal(hidden).astype(np.float32),
        "beta": rng.standard_normal(hidden).astype(np.float32),
        "bias": rng.standard_normal(hidden).astype(np.float32),
    }
    inputs = ["x", "skip", "gamma", "beta", *(["bias"] if with_bias else [])]
    outputs = ["y", *(["mean"] if mean_output else [])]
    node = helper.make_node(
        "SkipLayerNormalization", inputs, outputs, domain="com.microsoft", epsilon=1e-12, name="sln"
    )
    shape = ["batch", "sequence", hidden]
    graph = helper.make_graph(
        [node],
        "sln",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name in ("x", "skip")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)]
        + ([helper.make_tensor_value_info("mean", TensorProto.FLOAT, None)] if mean_output else []),
        [onnx.numpy_helper.from_array(value, name) for name, value in weights.items() if name in inputs],
    )
    imports = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def run(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> np.ndarray:
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    providers = ["CPUExecutionProvider"]
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=providers)
    output: np.ndarray = session.run(["y"], feed)[0]
    return output


@settings(max_examples=25, deadline=None)
@given(
    hidden=st.sampled_from([4, 32, 384]),
    batch=st.integers(1, 3),
    sequence=st.integers(1, 9),
    with_bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_the_split_graph_computes_what_the_fused_one_did(
    hidden: int, batch: int, sequence: int, with_bias: bool, seed: int
) -> None:
    fused = skip_layer_norm_model(hidden, seed, with_bias=with_bias)
    rng = np.random.default_rng(seed + 1)
    feed = {name: rng.standard_normal((batch, sequence, hidden)).astype(np.float32) for name in ("x", "skip")}
    expected = run(fused, feed)
    split = onnx.ModelProto()
    split.CopyFrom(fused)
    assert split_skip_layer_norms(split) == 1
    operators = [node.op_type for node in split.graph.node]
    assert operators == (["Add"] if with_bias else []) + ["Add", "LayerNormalization"]
    onnx.checker.check_model(split)
    np.testing.assert_allclose(run(split, feed), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "model",
    [skip_layer_norm_model(8, 0, mean_output=True), skip_layer_norm_model(8, 0, opset=16)],
    ids=["its-mean-is-used", "opset-without-layer-norm"],
)
def test_a_node_the_plain_ops_cannot_replace_is_left_alone(model: onnx.ModelProto) -> None:
    before = model.SerializeToString()
    assert split_skip_layer_norms(model) == 0
    assert model.SerializeToString() == before
