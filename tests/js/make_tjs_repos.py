#!/usr/bin/env python3
"""Repository folders that transformers.js 4.3.1 loads, for tests/js/transformers.test.mjs and
tools/bench/bench_transformers_js.mjs: built with onnx.helper, weights random from a fixed seed,
tokenizer files from tests/packages/make_repos.py (the `tokenizers` package's byte-level BPE).

    python make_tjs_repos.py OUTDIR [--ffn N]

  OUTDIR/bert   config.json (model_type bert, transformers.js_config dtype fp32), tokenizer files;
                onnx/model.onnx with its weights inline (a classic model): input_ids,
                attention_mask, token_type_ids -> last_hidden_state (pipeline 'feature-extraction')
  OUTDIR/gpt2   config.json (model_type gpt2, use_external_data_format: true),
                generation_config.json, tokenizer files; onnx/model.onnx + onnx/model.onnx_data:
                one attention layer with past key values (past_key_values.0.key/value ->
                present.0.key/value), logits (pipeline 'text-generation', greedy)

--ffn sets the feed-forward width (default 128; the benchmark uses a larger one for tens of MB).
"""
import argparse
import pathlib
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "packages"))
import make_repos as mr  # noqa: E402

HIDDEN = 64
HEADS = 4
VOCAB = mr.VOCAB


def _w(rng, name, *shape):
    return name, (rng.standard_normal(shape) * 0.1).astype(np.float32)


def _fp32_config(**cfg):
    cfg["transformers.js_config"] = {"dtype": "fp32", **cfg.get("transformers.js_config", {})}
    return cfg


def bert(root: pathlib.Path, ffn: int):
    rng = np.random.default_rng(30_1)
    mr._tokenizer_files(root)
    mr._dump(root / "config.json", _fp32_config(
        architectures=["BertModel"], model_type="bert", hidden_size=HIDDEN, intermediate_size=ffn,
        num_attention_heads=HEADS, num_hidden_layers=1, vocab_size=VOCAB, max_position_embeddings=128,
        type_vocab_size=2, pad_token_id=1))
    w = dict([_w(rng, "embeddings.word_embeddings.weight", VOCAB, HIDDEN),
              _w(rng, "embeddings.token_type_embeddings.weight", 2, HIDDEN),
              _w(rng, "encoder.layer.0.intermediate.dense.weight", HIDDEN, ffn),
              _w(rng, "encoder.layer.0.intermediate.dense.bias", ffn),
              _w(rng, "encoder.layer.0.output.dense.weight", ffn, HIDDEN)])
    n = helper.make_node
    nodes = [
        n("Gather", ["embeddings.word_embeddings.weight", "input_ids"], ["we"]),
        n("Gather", ["embeddings.token_type_embeddings.weight", "token_type_ids"], ["te"]),
        n("Add", ["we", "te"], ["x"]),
        n("MatMul", ["x", "encoder.layer.0.intermediate.dense.weight"], ["h0"]),
        n("Add", ["h0", "encoder.layer.0.intermediate.dense.bias"], ["h1"]),
        n("Tanh", ["h1"], ["h2"]),
        n("MatMul", ["h2", "encoder.layer.0.output.dense.weight"], ["h3"]),
        n("Add", ["h3", "x"], ["h4"]),
        n("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        n("Unsqueeze", ["maskf", "axis_last"], ["mask3"]),
        n("Mul", ["h4", "mask3"], ["last_hidden_state"]),
    ]
    ids = ["batch_size", "sequence_length"]
    graph = helper.make_graph(
        nodes, "bert", [mr._vi(k, TensorProto.INT64, ids) for k in ("input_ids", "attention_mask", "token_type_ids")],
        [mr._vi("last_hidden_state", TensorProto.FLOAT, ids + [HIDDEN])],
        [mr._inline(k, v) for k, v in w.items()] + [mr._i64("axis_last", [-1])])
    mr._save(root / "onnx" / "model.onnx", graph)


def gpt2(root: pathlib.Path, ffn: int):
    rng = np.random.default_rng(30_2)
    mr._tokenizer_files(root)
    mr._dump(root / "config.json", _fp32_config(
        architectures=["GPT2LMHeadModel"], model_type="gpt2", n_embd=HIDDEN, n_head=HEADS, n_layer=1,
        n_positions=128, n_ctx=128, n_inner=ffn, vocab_size=VOCAB, bos_token_id=0, eos_token_id=0,
        **{"transformers.js_config": {"use_external_data_format": True}}))
    mr._dump(root / "generation_config.json", {"bos_token_id": 0, "eos_token_id": 0, "do_sample": False})
    hd = HIDDEN // HEADS
    data = mr.DataFiles(root / "onnx")
    big = dict([_w(rng, "wte", VOCAB, HIDDEN), _w(rng, "h.0.attn.q", HIDDEN, HIDDEN), _w(rng, "h.0.attn.k", HIDDEN, HIDDEN),
                _w(rng, "h.0.attn.v", HIDDEN, HIDDEN), _w(rng, "h.0.mlp.fc", HIDDEN, ffn),
                _w(rng, "h.0.mlp.proj", ffn, HIDDEN), _w(rng, "lm_head", HIDDEN, VOCAB)])
    inits = [data.put(k, v, "model.onnx_data") for k, v in big.items()]
    inits += [mr._inline("h.0.mlp.fc.bias", (rng.standard_normal(ffn) * 0.1).astype(np.float32)),
              mr._i64("heads_shape", [0, 0, HEADS, hd]), mr._i64("hidden_shape", [0, 0, HIDDEN]),
              mr._i64("mask_axes", [1, 2]), mr._inline("scale", np.array(hd ** -0.5, dtype=np.float32)),
              mr._inline("neg", np.array(-1e4, dtype=np.float32)), mr._inline("one", np.array(1, dtype=np.float32))]
    n = helper.make_node
    nodes = [n("Gather", ["wte", "input_ids"], ["x"])]
    for p in ("q", "k", "v"):
        nodes += [n("MatMul", ["x", f"h.0.attn.{p}"], [f"{p}0"]),
                  n("Reshape", [f"{p}0", "heads_shape"], [f"{p}1"]),
                  n("Transpose", [f"{p}1"], [f"{p}2"], perm=[0, 2, 1, 3])]
    nodes += [
        n("Concat", ["past_key_values.0.key", "k2"], ["present.0.key"], axis=2),
        n("Concat", ["past_key_values.0.value", "v2"], ["present.0.value"], axis=2),
        n("Transpose", ["present.0.key"], ["kt"], perm=[0, 1, 3, 2]),
        n("MatMul", ["q2", "kt"], ["s0"]),
        n("Mul", ["s0", "scale"], ["s1"]),
        # keys the attention mask hides get -1e4: (1 - mask) * -1e4, shaped [batch, 1, 1, total]
        n("Cast", ["attention_mask"], ["mf"], to=TensorProto.FLOAT),
        n("Sub", ["one", "mf"], ["mi"]),
        n("Mul", ["mi", "neg"], ["mb"]),
        n("Unsqueeze", ["mb", "mask_axes"], ["mb4"]),
        n("Add", ["s1", "mb4"], ["s2"]),
        n("Softmax", ["s2"], ["p"], axis=-1),
        n("MatMul", ["p", "present.0.value"], ["c0"]),
        n("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]),
        n("Reshape", ["c1", "hidden_shape"], ["c2"]),
        n("Add", ["c2", "x"], ["y0"]),
        n("MatMul", ["y0", "h.0.mlp.fc"], ["f0"]),
        n("Add", ["f0", "h.0.mlp.fc.bias"], ["f1"]),
        n("Relu", ["f1"], ["f2"]),
        n("MatMul", ["f2", "h.0.mlp.proj"], ["f3"]),
        n("Add", ["f3", "y0"], ["y1"]),
        n("MatMul", ["y1", "lm_head"], ["logits"]),
    ]
    kv = ["batch_size", HEADS, "past_sequence_length", hd]
    kv_out = ["batch_size", HEADS, "total_sequence_length", hd]
    graph = helper.make_graph(
        nodes, "gpt2",
        [mr._vi("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
         mr._vi("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"]),
         mr._vi("past_key_values.0.key", TensorProto.FLOAT, kv),
         mr._vi("past_key_values.0.value", TensorProto.FLOAT, kv)],
        [mr._vi("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", VOCAB]),
         mr._vi("present.0.key", TensorProto.FLOAT, kv_out), mr._vi("present.0.value", TensorProto.FLOAT, kv_out)],
        inits)
    mr._save(root / "onnx" / "model.onnx", graph, data=data)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--ffn", type=int, default=128)
    a = ap.parse_args(argv)
    out = pathlib.Path(a.outdir)
    for name, build in (("bert", bert), ("gpt2", gpt2)):
        (out / name).mkdir(parents=True, exist_ok=True)
        build(out / name, a.ffn)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
