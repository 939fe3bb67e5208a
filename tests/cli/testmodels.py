#!/usr/bin/python3
"""testmodels — small ONNX models exercising every place a tensor can live and
awkward tensor names. Built with the onnx package at test time (nothing is
stored in the repository). Each builder returns a ModelProto; MODELS maps a
short name to its builder."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 13)]


def _arr(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def _rng(seed=1):
    return np.random.default_rng(seed)


def _model(graph, **kw):
    m = helper.make_model(graph, opset_imports=kw.pop("opset_imports", OPSET),
                          producer_name="onnxzip-tests", **kw)
    m.ir_version = 8
    return m


def _vi(name, dt=TensorProto.FLOAT, shape=None):
    return helper.make_tensor_value_info(name, dt, shape)


def _bf16(name, values):
    f = np.asarray(values, dtype=np.float32).view(np.uint32)
    raw = (f >> 16).astype("<u2").tobytes()
    t = TensorProto(name=name, data_type=TensorProto.BFLOAT16, dims=[len(values)])
    t.raw_data = raw
    return t


def dtypes_and_names():
    """Initializers of many dtypes, with names that need mapping or collide."""
    r = _rng(1)
    inits = [
        _arr("W", r.standard_normal((3, 4)).astype(np.float32)),
        _arr("w", r.standard_normal(5).astype(np.float16)),
        _arr("layer.0/weight:0", r.integers(-128, 127, 7, dtype=np.int8)),
        _arr("has space", r.integers(0, 255, 3, dtype=np.uint8)),
        _arr("ünïcödé", np.array([True, False, True, True])),
        _arr("__reserved", np.arange(4, dtype=np.int64).reshape(2, 2)),
        _arr("0starts_digit", r.standard_normal(3)),
        _arr("123", np.array([7, -9], dtype=np.int32)),
        _arr("a.b", np.arange(6, dtype=np.uint16)),
        _arr("a_b", np.arange(5, dtype=np.int16)),
        _arr("A_B", np.arange(3, dtype=np.uint32)),
        _arr("x/y", np.arange(2, dtype=np.uint64)),
        _arr("c:0", np.array([1 + 2j, 3 - 4j], dtype=np.complex64)),
        _arr("c128", np.array([1 + 2j], dtype=np.complex128)),
        _bf16("bf", [1.0, -2.5, 3.25]),
        _arr("zero_elems", np.zeros((0,), dtype=np.float32)),
        _arr("zero_2d", np.zeros((2, 0), dtype=np.int64)),
        _arr("scalar", np.array(3.5, dtype=np.float32)),
        helper.make_tensor("typed_f", TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
        helper.make_tensor("typed_i64", TensorProto.INT64, [2], [5, -6]),
        helper.make_tensor("strs", TensorProto.STRING, [2], [b"hello", b"w\xc3\xb6rld"]),
        _arr("x" * 300, np.arange(3, dtype=np.float32)),  # name longer than 255
    ]
    g = helper.make_graph([helper.make_node("Identity", ["W"], ["out"])], "dtypes", [],
                          [_vi("out", shape=[3, 4])], initializer=inits)
    return _model(g)


def structure():
    """Tensors in attributes, subgraphs (If, Loop, nested), sparse tensors,
    functions and training graphs."""
    r = _rng(2)
    const = helper.make_node("Constant", [], ["c"], name="const_node",
                             value=_arr("const_val", r.standard_normal((2, 3)).astype(np.float32)))
    noname = helper.make_node("Constant", [], ["c2"],
                              value=_arr("", np.arange(4, dtype=np.int64)))
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["t_out"],
                          value=_arr("then_c", r.standard_normal(4).astype(np.float32)))],
        "then", [], [_vi("t_out", shape=[4])])
    else_g = helper.make_graph(
        [helper.make_node("Constant", [], ["e_out"],
                          value=_arr("else_c", r.standard_normal(4).astype(np.float32)))],
        "else", [], [_vi("e_out", shape=[4])])
    cond = helper.make_node("Constant", [], ["cond"], value=_arr("cond_v", np.array(True)))
    if_n = helper.make_node("If", ["cond"], ["if_out"], then_branch=then_g, else_branch=else_g)
    inner_then = helper.make_graph(
        [helper.make_node("Constant", [], ["it"],
                          value=_arr("deep_c", np.arange(3, dtype=np.int32)))],
        "inner_then", [], [_vi("it", TensorProto.INT32, [3])])
    inner_else = helper.make_graph(
        [helper.make_node("Constant", [], ["ie"],
                          value=_arr("deep_c", np.arange(3, dtype=np.int32) + 10))],
        "inner_else", [], [_vi("ie", TensorProto.INT32, [3])])
    body = helper.make_graph(
        [helper.make_node("Add", ["x_in", "loop_init"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("If", ["cond_in"], ["nested"], then_branch=inner_then,
                          else_branch=inner_else)],
        "body", [_vi("i", TensorProto.INT64, []), _vi("cond_in", TensorProto.BOOL, []),
                 _vi("x_in", shape=[2])],
        [_vi("cond_out", TensorProto.BOOL, []), _vi("x_out", shape=[2])],
        initializer=[_arr("loop_init", np.array([0.5, 1.5], dtype=np.float32))])
    trip = helper.make_node("Constant", [], ["trip"], value=_arr("trip_v", np.array(3, np.int64)))
    x0 = helper.make_node("Constant", [], ["x0"], value=_arr("x0_v", np.zeros(2, np.float32)))
    loop = helper.make_node("Loop", ["trip", "cond", "x0"], ["loop_out"], body=body)
    sp_val = helper.make_sparse_tensor(_arr("sp_values", np.array([1, 2, 3], np.float32)),
                                       _arr("sp_indices", np.array([0, 4, 9], np.int64)), [10])
    sp_attr = helper.make_node("Constant", [], ["spc"], sparse_value=helper.make_sparse_tensor(
        _arr("spa_values", np.array([5, 6], np.int32)),
        _arr("spa_indices", np.array([[0, 1], [1, 0]], np.int64)), [2, 2]))
    custom = helper.make_node("CustomTensors", [], ["ct"], domain="test.domain",
                              tlist=[_arr("tl0", np.arange(2, dtype=np.float64)),
                                     _arr("tl1", np.arange(3, dtype=np.int8))])
    custom.attribute.append(helper.make_attribute("splist", [
        helper.make_sparse_tensor(_arr("spl_v", np.array([9], np.float32)),
                                  _arr("spl_i", np.array([1], np.int64)), [3])]))
    fcall = helper.make_node("MyFunc", ["c"], ["fout"], domain="local.fn")
    fn = helper.make_function(
        "local.fn", "MyFunc", ["X"], ["Y"],
        [helper.make_node("Constant", [], ["k"],
                          value=_arr("fn_const", np.array([2.0, 3.0], np.float32))),
         helper.make_node("Mul", ["X", "k"], ["Y"])],
        [helper.make_opsetid("", 13)])
    g = helper.make_graph(
        [const, noname, cond, if_n, trip, x0, loop, sp_attr, custom, fcall], "structure", [],
        [_vi("if_out", shape=[4]), _vi("loop_out", shape=[2])],
        initializer=[_arr("init_main", r.standard_normal(8).astype(np.float32))],
        sparse_initializer=[sp_val])
    m = _model(g, opset_imports=OPSET + [helper.make_opsetid("local.fn", 1),
                                         helper.make_opsetid("test.domain", 1)])
    m.functions.append(fn)
    ti = onnx.TrainingInfoProto()
    ti.initialization.CopyFrom(helper.make_graph(
        [], "ti_init", [], [], initializer=[_arr("ti_init_w", np.arange(3, dtype=np.float32))]))
    ti.algorithm.CopyFrom(helper.make_graph(
        [helper.make_node("Constant", [], ["lr"], value=_arr("ti_lr", np.array(0.01, np.float32)))],
        "ti_alg", [], [], initializer=[_arr("ti_alg_w", np.arange(2, dtype=np.int64))]))
    m.training_info.append(ti)
    return m


def empty_name_initializer():
    g = helper.make_graph([], "emptyname", [], [],
                          initializer=[_arr("", np.arange(3, dtype=np.float32)),
                                       _arr("", np.arange(2, dtype=np.int8))])
    return _model(g)


def same_name_scopes():
    """The same tensor name in the main graph and in a subgraph."""
    sub = helper.make_graph([helper.make_node("Identity", ["dup"], ["o"])], "sub", [],
                            [_vi("o", shape=[2])],
                            initializer=[_arr("dup", np.array([7, 8], np.float32))])
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["cond"], value=_arr("cond", np.array(False))),
         helper.make_node("If", ["cond"], ["r"], then_branch=sub, else_branch=sub)],
        "scopes", [], [_vi("r", shape=[2])],
        initializer=[_arr("dup", np.array([1, 2], np.float32)),
                     _arr("DUP", np.array([3, 4], np.float32))])
    return _model(g)


def odd_sizes():
    """Payload sizes around alignment boundaries, and a larger one."""
    r = _rng(3)
    inits = [_arr(f"s{n}", r.integers(0, 255, n, dtype=np.uint8)) for n in
             (1, 63, 64, 65, 4095, 4096, 4097)]
    inits.append(_arr("big", r.standard_normal(40000).astype(np.float32)))
    return _model(helper.make_graph([], "sizes", [], [], initializer=inits))


def filler_65536():
    """At --align 65536 the second entry needs 65535 padding bytes, more than
    an extra area holds (spec 4.3): the writer must emit a __PAD_0 filler.
    Entry a (name 1 byte) has its data at 65536; 65500 data bytes put w's
    header at H = 131036, B = H + 37 = 1 (mod 65536), N = 65535 > 65529."""
    r = _rng(4)
    inits = [_arr("a", r.integers(0, 255, 65500, dtype=np.uint8)),
             _arr("w", np.arange(4, dtype=np.float32))]
    return _model(helper.make_graph([], "filler", [], [], initializer=inits))


MODELS = {
    "dtypes_and_names": dtypes_and_names,
    "structure": structure,
    "empty_name_initializer": empty_name_initializer,
    "same_name_scopes": same_name_scopes,
    "odd_sizes": odd_sizes,
    "filler_65536": filler_65536,
}

# Alignments to pack each model with (default: 64 and 4096).
ALIGNS = {"filler_65536": (65536,)}
