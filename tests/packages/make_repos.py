#!/usr/bin/env python3
"""Small model repository folders laid out as the tools that publish ONNX
models lay them out (issue 29; spec section 19), for the package tests.

    python make_repos.py KIND OUTDIR      KIND: transformers_js, encoder_decoder,
                                          genai, diffusers, genai_pipeline, genai_vision,
                                          or all (OUTDIR/KIND each of the first four)

Importable: make(kind, outdir) writes one folder, shared_bytes(kind) is how
many bytes of its weights are duplicated (what a package that stores equal
payloads once saves), model_paths(root) lists its models and
sample_inputs(model_path) gives fixed inputs for ONNX Runtime.

Every model is built with onnx.helper (MatMul, Add, Gather, Relu, Transpose,
Reshape, ReduceMean, DequantizeLinear), its weights random from a fixed seed,
every weight at least 1 KiB and most of them 4 KiB or more, so that a packer
moves them to entries; the tokenizer files are made by the `tokenizers`
package. External data is written here, not by onnx.save: the tests need
exact layouts (two chunks, data shared by name, a small tensor in a data
file) and their bytes to be known. The whole set is under 2 MB.

  transformers_js  config.json (transformers.js_config: model.onnx in 2 chunks),
                   generation_config.json, tokenizer.json, tokenizer_config.json,
                   special_tokens_map.json, README.md, .gitattributes;
                   onnx/model.onnx + model.onnx_data + model.onnx_data_1 (fp32),
                   onnx/model_fp16.onnx + model_fp16.onnx_data, onnx/model_q4.onnx
                   (int4 weights, everything inline; its token embedding is the
                   fp32 model's, in fp32, as MatMul-only quantizers leave it)
                   shared: the embedding (fp32 and q4 models, same directory)
  encoder_decoder  config.json, generation_config.json, tokenizer files;
                   onnx/encoder_model.onnx + .onnx_data, onnx/decoder_model_merged.onnx
                   + .onnx_data: the token embedding tied across both, and in the
                   decoder two layers' weights equal (two initializers)
                   shared: the embedding once, the layer weight once
  genai            genai_config.json (model.decoder.filename = model.onnx), model.onnx
                   + model.onnx.data (lm_head tied to the embedding: equal bytes,
                   two initializers), tokenizer.json, tokenizer_config.json,
                   special_tokens_map.json, added_tokens.json
                   shared: the embedding once
  diffusers        model_index.json, text_encoder/model.onnx, unet/model.onnx +
                   unet/model.onnx_data (a 256-byte bias in it too), vae_decoder/model.onnx,
                   vae_encoder/model.onnx (one weight equal to one of vae_decoder's:
                   different directories, never shared, spec 19.3),
                   tokenizer/{vocab.json,merges.txt,special_tokens_map.json,
                   tokenizer_config.json}, scheduler/scheduler_config.json,
                   feature_extractor/preprocessor_config.json
                   shared: nothing
  genai_pipeline   (not in "all": the onnxruntime-genai tests' second layout)
                   genai_config.json of type decoder-pipeline naming three models,
                   embeddings.onnx, transformer.onnx, lm_head.onnx (each + .onnx.data;
                   lm_head tied to the embedding), the tokenizer files of genai
                   shared: the embedding once
  genai_vision     (not in "all") genai_config.json of type phi3v: vision.onnx,
                   embedding.onnx, decoder.onnx (each + .onnx.data), the tokenizer
                   files of genai; shared: nothing
"""
import json
import pathlib
import sys
from typing import Dict, List

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KINDS = ("transformers_js", "encoder_decoder", "genai", "diffusers")
IR_VERSION = 10          # onnx 1.16; what ONNX Runtime 1.17 and later load
OPSET = 17
OPSET_Q4 = 21            # DequantizeLinear of INT4
HIDDEN = 64
FFN = 128
VOCAB = 320              # the tokenizers' size: 256 bytes + 2 special tokens + merges
ENC_FC_BYTES = HIDDEN * HIDDEN * 4

CORPUS = [
    "ONNX models are shipped as repository folders with several graphs.",
    "The tokenizer and the configuration files travel beside the weights.",
    "A package keeps the whole folder in one archive, weights aligned.",
    "Tied embeddings are stored once; chunks of external data come back as they were.",
    "the quick brown fox jumps over the lazy dog " * 3,
]
SPECIALS = ["<|endoftext|>", "<pad>"]


# ---- tensors and data files -------------------------------------------------

def _rand(rng, *shape, dtype=np.float32):
    return (rng.standard_normal(shape) * 0.1).astype(dtype)


def _int4(rng, *shape):
    """(packed INT4 TensorProto payload, shape): values in -8..7, two per byte,
    the first element in the low nibble (ONNX's and spec 9's packing)."""
    vals = rng.integers(-8, 8, size=int(np.prod(shape)), dtype=np.int8)
    nib = (vals & 0x0F).astype(np.uint8)
    if nib.size % 2:
        nib = np.append(nib, np.uint8(0))
    return (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).tobytes()


class DataFiles:
    """External data files of one model directory, filled in order: each
    tensor put() goes at the end of the named file, no gaps (what onnx.save
    writes for tensors under its alignment threshold)."""

    def __init__(self, directory: pathlib.Path):
        self.directory = directory
        self.files: Dict[str, bytearray] = {}

    def put(self, name: str, arr: np.ndarray, location: str) -> TensorProto:
        t = numpy_helper.from_array(arr, name)
        raw = t.raw_data
        buf = self.files.setdefault(location, bytearray())
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(len(buf))), ("length", str(len(raw)))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        buf += raw
        return t

    def write(self):
        for location, buf in self.files.items():
            (self.directory / location).write_bytes(bytes(buf))


def _inline(name: str, arr: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(arr, name)


def _i64(name: str, values) -> TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _save(path: pathlib.Path, graph, opset=OPSET, data: DataFiles = None):
    """Writes the model (and its data files) and checks it as the tests will."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              ir_version=IR_VERSION, producer_name="make_repos.py")
    path.parent.mkdir(parents=True, exist_ok=True)
    if data is not None:
        data.write()
    path.write_bytes(model.SerializeToString())
    onnx.checker.check_model(str(path), full_check=True)


def _vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


# ---- the decoder of transformers_js and genai --------------------------------

def _lm_graph(name, w, fp16=False):
    """ids -> Gather(embed) -> MatMul(fc1) + b1 -> Relu -> MatMul(fc2) -> MatMul(head).
    `w` maps embed, fc1, fc1_bias, fc2, head to TensorProtos; head is [H, V],
    or [V, H] used through a Transpose when w has 'head_t'."""
    elem = TensorProto.FLOAT16 if fp16 else TensorProto.FLOAT
    nodes = [
        helper.make_node("Gather", ["model.embed_tokens.weight", "input_ids"], ["x"]),
        helper.make_node("MatMul", ["x", "model.layers.0.mlp.fc1.weight"], ["h0"]),
        helper.make_node("Add", ["h0", "model.layers.0.mlp.fc1.bias"], ["h1"]),
        helper.make_node("Relu", ["h1"], ["h2"]),
        helper.make_node("MatMul", ["h2", "model.layers.0.mlp.fc2.weight"], ["y"]),
    ]
    if "head_t" in w:
        nodes.append(helper.make_node("Transpose", ["lm_head.weight"], ["head"], perm=[1, 0]))
        nodes.append(helper.make_node("MatMul", ["y", "head"], ["logits"]))
    else:
        nodes.append(helper.make_node("MatMul", ["y", "lm_head.weight"], ["logits"]))
    inits = [w["embed"], w["fc1"], w["fc1_bias"], w["fc2"], w.get("head_t", w.get("head"))]
    return helper.make_graph(nodes, name, [_vi("input_ids", TensorProto.INT64, [1, "sequence_length"])],
                             [_vi("logits", elem, [1, "sequence_length", VOCAB])], inits)


def _lm_weights(rng, dtype=np.float32):
    return {
        "embed": _rand(rng, VOCAB, HIDDEN, dtype=dtype),
        "fc1": _rand(rng, HIDDEN, FFN, dtype=dtype),
        "fc1_bias": _rand(rng, FFN, dtype=dtype),       # 512 bytes: inline
        "fc2": _rand(rng, FFN, HIDDEN, dtype=dtype),
        "head": _rand(rng, HIDDEN, VOCAB, dtype=dtype),
    }


TENSOR_NAMES = {"embed": "model.embed_tokens.weight", "fc1": "model.layers.0.mlp.fc1.weight",
                "fc1_bias": "model.layers.0.mlp.fc1.bias", "fc2": "model.layers.0.mlp.fc2.weight",
                "head": "lm_head.weight", "head_t": "lm_head.weight"}


def _q4_graph(embed_f32: np.ndarray, rng):
    """The fp32 decoder with int4 MatMul weights (DequantizeLinear), data inline."""
    nodes = [helper.make_node("Gather", ["model.embed_tokens.weight", "input_ids"], ["x"])]
    inits = [_inline("model.embed_tokens.weight", embed_f32)]
    prev = "x"
    shapes = (("model.layers.0.mlp.fc1", HIDDEN, FFN), ("model.layers.0.mlp.fc2", FFN, HIDDEN),
              ("lm_head", HIDDEN, VOCAB))
    for i, (base, k, n) in enumerate(shapes):
        q, s, z, w = base + ".weight_q4", base + ".scale", base + ".zero_point", base + ".weight"
        inits += [helper.make_tensor(q, TensorProto.INT4, [k, n], _int4(rng, k, n), raw=True),
                  _inline(s, np.array(0.02, dtype=np.float32)),
                  helper.make_tensor(z, TensorProto.INT4, [], b"\x00", raw=True)]
        nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [w]))
        out = "logits" if i == 2 else f"q{i}"
        nodes.append(helper.make_node("MatMul", [prev, w], [out]))
        if i == 0:
            nodes.append(helper.make_node("Relu", [out], ["q0r"]))
            out = "q0r"
        prev = out
    return helper.make_graph(nodes, "model_q4", [_vi("input_ids", TensorProto.INT64, [1, "sequence_length"])],
                             [_vi("logits", TensorProto.FLOAT, [1, "sequence_length", VOCAB])], inits)


# ---- tokenizer files -----------------------------------------------------------

def _bpe():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=SPECIALS, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def _dump(path: pathlib.Path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _special_tokens_map():
    return {"bos_token": SPECIALS[0], "eos_token": SPECIALS[0], "pad_token": SPECIALS[1],
            "unk_token": SPECIALS[0]}


def _tokenizer_config(tok, cls="GPT2Tokenizer"):
    added = {str(tok.token_to_id(t)): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                        "single_word": False, "special": True} for t in SPECIALS}
    return {"add_prefix_space": False, "added_tokens_decoder": added, "bos_token": SPECIALS[0],
            "clean_up_tokenization_spaces": False, "eos_token": SPECIALS[0], "model_max_length": 128,
            "pad_token": SPECIALS[1], "tokenizer_class": cls, "unk_token": SPECIALS[0]}


def _tokenizer_files(root: pathlib.Path):
    tok = _bpe()
    assert tok.get_vocab_size() == VOCAB, tok.get_vocab_size()
    tok.save(str(root / "tokenizer.json"))
    _dump(root / "tokenizer_config.json", _tokenizer_config(tok))
    _dump(root / "special_tokens_map.json", _special_tokens_map())
    return tok


def _config(**extra):
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
           "intermediate_size": FFN, "num_hidden_layers": 1, "vocab_size": VOCAB, "bos_token_id": 0,
           "eos_token_id": 0, "pad_token_id": 1, "torch_dtype": "float32", "transformers_version": "4.57.0"}
    cfg.update(extra)
    return cfg


# ---- the four kinds ------------------------------------------------------------

def _transformers_js(root: pathlib.Path):
    rng = np.random.default_rng(29_1)
    _tokenizer_files(root)
    _dump(root / "config.json", _config(**{"transformers.js_config": {
        "dtype": "fp32", "use_external_data_format": {"model.onnx": 2, "model_fp16.onnx": 1}}}))
    _dump(root / "generation_config.json", {"bos_token_id": 0, "eos_token_id": 0, "max_length": 64,
                                            "do_sample": False, "transformers_version": "4.57.0"})
    (root / "README.md").write_text("---\nlibrary_name: transformers.js\nbase_model: tiny/generated\n---\n\n"
                                    "A tiny generated model (tests/packages/make_repos.py).\n", encoding="utf-8")
    (root / ".gitattributes").write_text("*.onnx filter=lfs diff=lfs merge=lfs -text\n"
                                         "*.onnx_data* filter=lfs diff=lfs merge=lfs -text\n", encoding="utf-8")
    onnx_dir = root / "onnx"
    arrays = _lm_weights(rng)
    data = DataFiles(onnx_dir)
    chunk = {"embed": "model.onnx_data", "fc1": "model.onnx_data",
             "fc2": "model.onnx_data_1", "head": "model.onnx_data_1"}
    w = {k: (data.put(TENSOR_NAMES[k], a, chunk[k]) if k in chunk else _inline(TENSOR_NAMES[k], a))
         for k, a in arrays.items()}
    _save(onnx_dir / "model.onnx", _lm_graph("model", w), data=data)

    data16 = DataFiles(onnx_dir)
    w16 = {k: (data16.put(TENSOR_NAMES[k], a, "model_fp16.onnx_data") if k != "fc1_bias"
               else _inline(TENSOR_NAMES[k], a))
           for k, a in _lm_weights(rng, np.float16).items()}
    _save(onnx_dir / "model_fp16.onnx", _lm_graph("model_fp16", w16, fp16=True), data=data16)

    _save(onnx_dir / "model_q4.onnx", _q4_graph(arrays["embed"], rng), opset=OPSET_Q4)


def _encoder_decoder(root: pathlib.Path):
    rng = np.random.default_rng(29_2)
    _tokenizer_files(root)
    _dump(root / "config.json", _config(architectures=["T5ForConditionalGeneration"], model_type="t5",
                                        is_encoder_decoder=True, tie_word_embeddings=True,
                                        decoder_start_token_id=1))
    _dump(root / "generation_config.json", {"decoder_start_token_id": 1, "eos_token_id": 0, "pad_token_id": 1,
                                            "transformers_version": "4.57.0"})
    onnx_dir = root / "onnx"
    embed = _rand(rng, VOCAB, HIDDEN)
    ids = _vi("input_ids", TensorProto.INT64, [1, "encoder_sequence_length"])
    hidden = _vi("last_hidden_state", TensorProto.FLOAT, [1, "encoder_sequence_length", HIDDEN])

    enc = DataFiles(onnx_dir)
    loc = "encoder_model.onnx_data"
    inits = [enc.put("shared.weight", embed, loc), enc.put("encoder.fc.weight", _rand(rng, HIDDEN, HIDDEN), loc),
             _inline("encoder.fc.bias", _rand(rng, HIDDEN))]
    nodes = [helper.make_node("Gather", ["shared.weight", "input_ids"], ["x"]),
             helper.make_node("MatMul", ["x", "encoder.fc.weight"], ["h"]),
             helper.make_node("Add", ["h", "encoder.fc.bias"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["last_hidden_state"])]
    _save(onnx_dir / "encoder_model.onnx", helper.make_graph(nodes, "encoder", [ids], [hidden], inits), data=enc)

    dec = DataFiles(onnx_dir)
    loc = "decoder_model_merged.onnx_data"
    layer = _rand(rng, HIDDEN, HIDDEN)       # two layers' weights, equal bytes: tied within the decoder
    inits = [dec.put("shared.weight", embed, loc),
             dec.put("decoder.layers.0.fc.weight", layer, loc),
             dec.put("decoder.layers.1.fc.weight", layer.copy(), loc),
             dec.put("lm_head.weight", _rand(rng, HIDDEN, VOCAB), loc)]
    nodes = [helper.make_node("Gather", ["shared.weight", "input_ids"], ["e"]),
             helper.make_node("ReduceMean", ["encoder_hidden_states"], ["ctx"], axes=[1], keepdims=1),
             helper.make_node("Add", ["e", "ctx"], ["x"]),
             helper.make_node("MatMul", ["x", "decoder.layers.0.fc.weight"], ["a0"]),
             helper.make_node("Relu", ["a0"], ["h0"]),
             helper.make_node("MatMul", ["h0", "decoder.layers.1.fc.weight"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["h1"]),
             helper.make_node("MatMul", ["h1", "lm_head.weight"], ["logits"])]
    inputs = [_vi("input_ids", TensorProto.INT64, [1, "decoder_sequence_length"]),
              _vi("encoder_hidden_states", TensorProto.FLOAT, [1, "encoder_sequence_length", HIDDEN])]
    outputs = [_vi("logits", TensorProto.FLOAT, [1, "decoder_sequence_length", VOCAB])]
    _save(onnx_dir / "decoder_model_merged.onnx", helper.make_graph(nodes, "decoder", inputs, outputs, inits),
          data=dec)


def _genai(root: pathlib.Path):
    rng = np.random.default_rng(29_3)
    tok = _tokenizer_files(root)
    _dump(root / "added_tokens.json", {t: tok.token_to_id(t) for t in SPECIALS})
    _dump(root / "genai_config.json", {
        "model": {"bos_token_id": 0, "context_length": 128, "eos_token_id": 0, "pad_token_id": 1,
                  "type": "llama", "vocab_size": VOCAB,
                  "decoder": {"filename": "model.onnx", "head_size": HIDDEN, "hidden_size": HIDDEN,
                              "num_attention_heads": 1, "num_hidden_layers": 1, "num_key_value_heads": 1,
                              "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                              "inputs": {"input_ids": "input_ids"}, "outputs": {"logits": "logits"}}},
        "search": {"do_sample": False, "max_length": 64, "num_beams": 1, "top_k": 1}})
    arrays = _lm_weights(rng)
    data = DataFiles(root)
    w = {k: (data.put(TENSOR_NAMES[k], a, "model.onnx.data") if k not in ("fc1_bias", "head")
             else _inline(TENSOR_NAMES[k], a)) for k, a in arrays.items()}
    del w["head"]                            # tied: lm_head is the embedding's bytes, [V, H]
    w["head_t"] = data.put("lm_head.weight", arrays["embed"].copy(), "model.onnx.data")
    _save(root / "model.onnx", _lm_graph("model", w), data=data)


def _genai_pipeline(root: pathlib.Path):
    """The genai decoder cut into three models that genai runs in turn
    ("decoder-pipeline"): embeddings.onnx (ids -> embeddings), transformer.onnx
    (the MLP) and lm_head.onnx (tied: the embedding's bytes, transposed)."""
    rng = np.random.default_rng(29_5)
    tok = _tokenizer_files(root)
    _dump(root / "added_tokens.json", {t: tok.token_to_id(t) for t in SPECIALS})
    stages = [("embeddings", ["input_ids"], ["inputs_embeds"]), ("transformer", ["inputs_embeds"], ["hidden_states"]),
              ("lm_head", ["hidden_states"], ["logits"])]
    pipeline = [{name: {"filename": f"{name}.onnx", "inputs": ins, "outputs": outs,
                        **({"is_lm_head": True} if name == "lm_head" else {})}} for name, ins, outs in stages]
    _dump(root / "genai_config.json", _genai_config(
        "decoder-pipeline", {"inputs": {"input_ids": "input_ids"}, "outputs": {"logits": "logits"},
                             "pipeline": pipeline}))
    a = _lm_weights(rng)
    data = DataFiles(root)
    embed = data.put(TENSOR_NAMES["embed"], a["embed"], "embeddings.onnx.data")
    _save(root / "embeddings.onnx", helper.make_graph(
        [helper.make_node("Gather", [TENSOR_NAMES["embed"], "input_ids"], ["inputs_embeds"])], "embeddings",
        [_vi("input_ids", TensorProto.INT64, [1, "sequence_length"])],
        [_vi("inputs_embeds", TensorProto.FLOAT, [1, "sequence_length", HIDDEN])], [embed]), data=data)
    data = DataFiles(root)
    inits = [data.put(TENSOR_NAMES["fc1"], a["fc1"], "transformer.onnx.data"), _inline(TENSOR_NAMES["fc1_bias"],
             a["fc1_bias"]), data.put(TENSOR_NAMES["fc2"], a["fc2"], "transformer.onnx.data")]
    nodes = [helper.make_node("MatMul", ["inputs_embeds", TENSOR_NAMES["fc1"]], ["h0"]),
             helper.make_node("Add", ["h0", TENSOR_NAMES["fc1_bias"]], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("MatMul", ["h2", TENSOR_NAMES["fc2"]], ["hidden_states"])]
    hidden = [_vi(n, TensorProto.FLOAT, [1, "sequence_length", HIDDEN]) for n in ("inputs_embeds", "hidden_states")]
    _save(root / "transformer.onnx", helper.make_graph(nodes, "transformer", hidden[:1], hidden[1:], inits),
          data=data)
    data = DataFiles(root)
    head = data.put("lm_head.weight", a["embed"].copy(), "lm_head.onnx.data")
    nodes = [helper.make_node("Transpose", ["lm_head.weight"], ["head"], perm=[1, 0]),
             helper.make_node("MatMul", ["hidden_states", "head"], ["logits"])]
    _save(root / "lm_head.onnx", helper.make_graph(
        nodes, "lm_head", hidden[1:], [_vi("logits", TensorProto.FLOAT, [1, "sequence_length", VOCAB])], [head]),
        data=data)


def _genai_config(model_type, decoder, **sections):
    """genai_config.json's content: the genai kinds' shared fields, the
    decoder's and other model sections."""
    dec = {"head_size": HIDDEN, "hidden_size": HIDDEN, "num_attention_heads": 1, "num_hidden_layers": 1,
           "num_key_value_heads": 1, "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
           **decoder}
    return {"model": {"bos_token_id": 0, "context_length": 128, "eos_token_id": 0, "pad_token_id": 1,
                      "type": model_type, "vocab_size": VOCAB, **sections, "decoder": dec},
            "search": {"do_sample": False, "max_length": 64, "num_beams": 1, "top_k": 1}}


def _genai_vision(root: pathlib.Path):
    """A vision-language layout genai loads as three sessions ("phi3v"):
    vision.onnx (pixel_values, image_sizes -> image_features), embedding.onnx
    (input_ids, image_features -> inputs_embeds) and decoder.onnx
    (inputs_embeds -> logits), each + .onnx.data. Text prompts run the
    embedding and the decoder; genai creates the vision session too."""
    rng = np.random.default_rng(29_6)
    tok = _tokenizer_files(root)
    _dump(root / "added_tokens.json", {t: tok.token_to_id(t) for t in SPECIALS})
    _dump(root / "genai_config.json", _genai_config(
        "phi3v", {"filename": "decoder.onnx", "inputs": {"inputs_embeds": "inputs_embeds"},
                  "outputs": {"logits": "logits"}},
        vision={"filename": "vision.onnx", "inputs": {"pixel_values": "pixel_values", "image_sizes": "image_sizes"},
                "outputs": {"image_features": "image_features"}},
        embedding={"filename": "embedding.onnx", "inputs": {"input_ids": "input_ids",
                                                            "image_features": "image_features"},
                   "outputs": {"inputs_embeds": "inputs_embeds"}}))
    a = _lm_weights(rng)
    pixels = 3 * 16 * 16
    data = DataFiles(root)
    inits = [data.put("vision.proj.weight", _rand(rng, pixels, HIDDEN), "vision.onnx.data"),
             _i64("shape", [-1, pixels])]
    nodes = [helper.make_node("Reshape", ["pixel_values", "shape"], ["flat"]),
             helper.make_node("MatMul", ["flat", "vision.proj.weight"], ["image_features"])]
    _save(root / "vision.onnx", helper.make_graph(
        nodes, "vision", [_vi("pixel_values", TensorProto.FLOAT, ["num_images", 3, 16, 16]),
                          _vi("image_sizes", TensorProto.INT64, ["num_images", 2])],
        [_vi("image_features", TensorProto.FLOAT, ["num_images", HIDDEN])], inits), data=data)
    data = DataFiles(root)
    embeds = _vi("inputs_embeds", TensorProto.FLOAT, [1, "sequence_length", HIDDEN])
    _save(root / "embedding.onnx", helper.make_graph(
        [helper.make_node("Gather", [TENSOR_NAMES["embed"], "input_ids"], ["inputs_embeds"])], "embedding",
        [_vi("input_ids", TensorProto.INT64, [1, "sequence_length"]),
         _vi("image_features", TensorProto.FLOAT, ["num_image_tokens", HIDDEN])], [embeds],
        [data.put(TENSOR_NAMES["embed"], a["embed"], "embedding.onnx.data")]), data=data)
    data = DataFiles(root)
    inits = [data.put(TENSOR_NAMES[k], a[k], "decoder.onnx.data") if k != "fc1_bias" else _inline(TENSOR_NAMES[k], a[k])
             for k in ("fc1", "fc1_bias", "fc2", "head")]
    nodes = [helper.make_node("MatMul", ["inputs_embeds", TENSOR_NAMES["fc1"]], ["h0"]),
             helper.make_node("Add", ["h0", TENSOR_NAMES["fc1_bias"]], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]),
             helper.make_node("MatMul", ["h2", TENSOR_NAMES["fc2"]], ["y"]),
             helper.make_node("MatMul", ["y", TENSOR_NAMES["head"]], ["logits"])]
    _save(root / "decoder.onnx", helper.make_graph(
        nodes, "decoder", [embeds], [_vi("logits", TensorProto.FLOAT, [1, "sequence_length", VOCAB])], inits),
        data=data)


def _image_mlp(name, inp, out, in_shape, out_shape, w1, w2, data=None, location=None):
    """[1,C,H,W] -> [1,C,HW] -> [1,HW,C] -> MatMul w1 -> Relu -> MatMul w2 -> back to out_shape."""
    def t(tname, arr):
        return data.put(tname, arr, location) if data is not None else _inline(tname, arr)
    c_in = w1.shape[0]                       # the input regrouped as [1, c_in, hw]
    hw = int(np.prod(in_shape)) // c_in
    c_out = w2.shape[1]
    inits = [t(f"{name}.proj_in.weight", w1), t(f"{name}.proj_out.weight", w2),
             _i64("shape_in", [1, c_in, hw]), _i64("shape_out", out_shape)]
    nodes = [helper.make_node("Reshape", [inp, "shape_in"], ["r"]),
             helper.make_node("Transpose", ["r"], ["rt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["rt", f"{name}.proj_in.weight"], ["a"]),
             helper.make_node("Relu", ["a"], ["b"]),
             helper.make_node("MatMul", ["b", f"{name}.proj_out.weight"], ["c"]),
             helper.make_node("Transpose", ["c"], ["ct"], perm=[0, 2, 1]),
             helper.make_node("Reshape", ["ct", "shape_out"], [out])]
    assert c_out * hw == int(np.prod(out_shape))
    return helper.make_graph(nodes, name, [_vi(inp, TensorProto.FLOAT, in_shape)],
                             [_vi(out, TensorProto.FLOAT, out_shape)], inits)


def _diffusers(root: pathlib.Path):
    from tokenizers import ByteLevelBPETokenizer
    rng = np.random.default_rng(29_4)
    _dump(root / "model_index.json", {
        "_class_name": "OnnxStableDiffusionPipeline", "_diffusers_version": "0.35.0",
        "feature_extractor": ["transformers", "CLIPImageProcessor"], "requires_safety_checker": False,
        "safety_checker": [None, None], "scheduler": ["diffusers", "PNDMScheduler"],
        "text_encoder": ["optimum", "ORTModelTextEncoder"], "tokenizer": ["transformers", "CLIPTokenizer"],
        "unet": ["optimum", "ORTModelUnet"], "vae_decoder": ["optimum", "ORTModelVaeDecoder"],
        "vae_encoder": ["optimum", "ORTModelVaeEncoder"]})
    tok = ByteLevelBPETokenizer()
    tok.train_from_iterator(CORPUS, vocab_size=VOCAB, special_tokens=SPECIALS, show_progress=False)
    (root / "tokenizer").mkdir(parents=True)
    tok.save_model(str(root / "tokenizer"))
    _dump(root / "tokenizer" / "special_tokens_map.json", _special_tokens_map())
    _dump(root / "tokenizer" / "tokenizer_config.json", _tokenizer_config(tok, "CLIPTokenizer"))
    _dump(root / "scheduler" / "scheduler_config.json", {
        "_class_name": "PNDMScheduler", "_diffusers_version": "0.35.0", "beta_end": 0.012,
        "beta_schedule": "scaled_linear", "beta_start": 0.00085, "num_train_timesteps": 1000,
        "set_alpha_to_one": False, "skip_prk_steps": True, "steps_offset": 1})
    _dump(root / "feature_extractor" / "preprocessor_config.json", {
        "crop_size": {"height": 16, "width": 16}, "do_center_crop": True, "do_normalize": True,
        "do_resize": True, "image_mean": [0.4815, 0.4578, 0.4082], "image_std": [0.2686, 0.2613, 0.2758],
        "image_processor_type": "CLIPImageProcessor", "resample": 3, "size": {"shortest_edge": 16}})

    # text_encoder: single file, weights inline
    inits = [_inline("text_model.embeddings.token_embedding.weight", _rand(rng, VOCAB, HIDDEN)),
             _inline("text_model.final_proj.weight", _rand(rng, HIDDEN, HIDDEN))]
    nodes = [helper.make_node("Gather", ["text_model.embeddings.token_embedding.weight", "input_ids"], ["e"]),
             helper.make_node("MatMul", ["e", "text_model.final_proj.weight"], ["p"]),
             helper.make_node("Relu", ["p"], ["last_hidden_state"])]
    _save(root / "text_encoder" / "model.onnx", helper.make_graph(
        nodes, "text_encoder", [_vi("input_ids", TensorProto.INT64, [1, "sequence_length"])],
        [_vi("last_hidden_state", TensorProto.FLOAT, [1, "sequence_length", HIDDEN])], inits))

    # unet: external data, a 256-byte bias in the data file too (below a packer's threshold)
    unet = root / "unet"
    data = DataFiles(unet)
    loc = "model.onnx_data"
    inits = [data.put("conv_in.weight", _rand(rng, 4, 4 * HIDDEN), loc),
             data.put("time_embedding.linear.bias", _rand(rng, HIDDEN), loc),
             data.put("mid_block.proj.weight", _rand(rng, HIDDEN, HIDDEN), loc),
             data.put("conv_out.weight", _rand(rng, HIDDEN, 4), loc),
             _i64("shape_in", [1, 4, 64]), _i64("shape_out", [1, 4, 8, 8])]
    # conv_in maps each pixel's 4 channels to 4 x HIDDEN values, averaged back to HIDDEN
    inits.append(_i64("shape_hidden", [1, 64, 4, HIDDEN]))
    nodes = [helper.make_node("Reshape", ["sample", "shape_in"], ["r"]),
             helper.make_node("Transpose", ["r"], ["rt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["rt", "conv_in.weight"], ["a4"]),
             helper.make_node("Reshape", ["a4", "shape_hidden"], ["a4r"]),
             helper.make_node("ReduceMean", ["a4r"], ["a"], axes=[2], keepdims=0),
             helper.make_node("ReduceMean", ["encoder_hidden_states"], ["ctx"], axes=[1], keepdims=1),
             helper.make_node("Add", ["a", "ctx"], ["b"]),
             helper.make_node("Add", ["b", "time_embedding.linear.bias"], ["bt"]),
             helper.make_node("Mul", ["bt", "timestep"], ["c"]),
             helper.make_node("Relu", ["c"], ["d"]),
             helper.make_node("MatMul", ["d", "mid_block.proj.weight"], ["e"]),
             helper.make_node("MatMul", ["e", "conv_out.weight"], ["f"]),
             helper.make_node("Transpose", ["f"], ["ft"], perm=[0, 2, 1]),
             helper.make_node("Reshape", ["ft", "shape_out"], ["out_sample"])]
    inputs = [_vi("sample", TensorProto.FLOAT, [1, 4, 8, 8]), _vi("timestep", TensorProto.FLOAT, [1]),
              _vi("encoder_hidden_states", TensorProto.FLOAT, [1, "sequence_length", HIDDEN])]
    _save(unet / "model.onnx", helper.make_graph(nodes, "unet", inputs,
                                                 [_vi("out_sample", TensorProto.FLOAT, [1, 4, 8, 8])], inits),
          data=data)

    # the VAE: single files; the decoder's proj_in equals the encoder's proj_out in bytes
    tied = _rand(rng, 4, 256)
    _save(root / "vae_decoder" / "model.onnx", _image_mlp(
        "decoder", "latent_sample", "sample", [1, 4, 8, 8], [1, 3, 16, 16], tied, _rand(rng, 256, 12)))
    _save(root / "vae_encoder" / "model.onnx", _image_mlp(
        "encoder", "sample", "latent_sample", [1, 3, 16, 16], [1, 4, 8, 8], _rand(rng, 12, 256),
        tied.reshape(256, 4).copy()))


BUILDERS = {"transformers_js": _transformers_js, "encoder_decoder": _encoder_decoder,
            "genai": _genai, "diffusers": _diffusers, "genai_pipeline": _genai_pipeline,
            "genai_vision": _genai_vision}

# Bytes stored twice or more in each folder that a package stores once (spec
# 19.3: equal payloads of models in one directory, or of one model, share an
# entry; never across directories).
SHARED = {
    "transformers_js": VOCAB * HIDDEN * 4,                  # the fp32 embedding in model.onnx and model_q4.onnx
    "encoder_decoder": VOCAB * HIDDEN * 4 + ENC_FC_BYTES,   # embedding (encoder, decoder); layer 0 = layer 1
    "genai": VOCAB * HIDDEN * 4,                            # lm_head = embedding
    "diffusers": 0,                                         # vae_decoder/ and vae_encoder/ do not share
    "genai_pipeline": VOCAB * HIDDEN * 4,                   # lm_head.onnx's weight = embeddings.onnx's
    "genai_vision": 0,
}


def shared_bytes(kind: str) -> int:
    """How many bytes of kind's weights are duplicates (the dedupe saving)."""
    return SHARED[kind]


def make(kind: str, outdir) -> pathlib.Path:
    """Writes a repository folder of `kind` into outdir (created; must not
    exist or be empty). Returns its path."""
    root = pathlib.Path(outdir)
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    BUILDERS[kind](root)
    return root


def model_paths(root) -> List[str]:
    """The repository paths of every .onnx under root, sorted."""
    root = pathlib.Path(root)
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.onnx"))


def sample_inputs(model_path, seed: int = 7) -> Dict[str, np.ndarray]:
    """Fixed inputs for every graph input of the model: int64 ids below 256
    (every vocabulary here is larger), floats of its type; symbolic dims 5."""
    model = onnx.load(str(model_path), load_external_data=False)
    rng = np.random.default_rng(seed)
    init_names = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in init_names:
            continue
        tt = vi.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 5 for d in tt.shape.dim]
        if tt.elem_type == TensorProto.INT64:
            feeds[vi.name] = rng.integers(0, 256, size=shape, dtype=np.int64)
        else:
            dtype = helper.tensor_dtype_to_np_dtype(tt.elem_type)
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


def main(argv):
    if len(argv) != 3 or argv[1] not in tuple(BUILDERS) + ("all",):
        print(f"usage: {argv[0]} {{{','.join(BUILDERS)},all}} OUTDIR", file=sys.stderr)
        return 2
    kinds = KINDS if argv[1] == "all" else (argv[1],)
    for kind in kinds:
        out = pathlib.Path(argv[2]) / kind if argv[1] == "all" else pathlib.Path(argv[2])
        make(kind, out)
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        print(f"{kind}: {out} ({size} bytes, {len(model_paths(out))} models, "
              f"{shared_bytes(kind)} bytes shared)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
