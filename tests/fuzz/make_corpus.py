#!/usr/bin/python3
"""Regenerates the seed corpora of tests/fuzz/corpus/ (small files only).

    /usr/bin/python3 tests/fuzz/make_corpus.py BUILDDIR/tools/onnxzip

Builds a few tiny ONNX models with the onnx package (subgraphs, attributes,
sparse tensors, typed fields, external data references, functions), packs
them with the CLI into archives, and adds truncated and bit-flipped
variants. External data references name "w.bin", the 4 KiB file that
fuzz_pack provides in its data directory; fuzz_model_diff's seeds are model
bytes referencing its entries "a" and "b", some with repeated singular
messages (which protobuf merges). Deterministic (fixed seed).
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'cli'))
from hostile_models import f_len as ld, varint as pb_varint  # noqa: E402
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')
MAX_FILE = 64 * 1024


def arr(shape, dtype=np.float32, seed=0):
    r = np.random.RandomState(seed)
    return (r.rand(*shape) * 10).astype(dtype)


def m_simple():
    w = numpy_helper.from_array(arr((4, 4)), 'encoder.0.weight')
    b = numpy_helper.from_array(arr((4,), seed=1), 'encoder.0.bias')
    n1 = helper.make_node('MatMul', ['x', 'encoder.0.weight'], ['y'])
    n2 = helper.make_node('Add', ['y', 'encoder.0.bias'], ['z'])
    g = helper.make_graph([n1, n2], 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info('z', TensorProto.FLOAT, [1, 4])], [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)])


def m_typed():
    inits = [
        helper.make_tensor('f_typed', TensorProto.FLOAT, [3], [1.0, 2.0, 3.0]),
        helper.make_tensor('i64_typed', TensorProto.INT64, [2, 2], [1, -2, 3, -4]),
        helper.make_tensor('i32_typed', TensorProto.INT32, [3], [7, 8, 9]),
        helper.make_tensor('d_typed', TensorProto.DOUBLE, [2], [0.5, 0.25]),
        helper.make_tensor('u64_typed', TensorProto.UINT64, [2], [1, 2]),
        helper.make_tensor('f16_typed', TensorProto.FLOAT16, [2], np.array([1, 2], np.float16)),
        helper.make_tensor('bf16', TensorProto.BFLOAT16, [2], [1.0, 2.0]),
        helper.make_tensor('bool_t', TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor('u8_t', TensorProto.UINT8, [4], [1, 2, 3, 4]),
        helper.make_tensor('c64', TensorProto.COMPLEX64, [1], [complex(1, 2)]),
        helper.make_tensor('s_t', TensorProto.STRING, [2], [b'ab', b'c']),
        helper.make_tensor('empty', TensorProto.FLOAT, [0], []),
        helper.make_tensor('scalar', TensorProto.FLOAT, [], [4.0]),
    ]
    int4 = TensorProto(name='int4_t', data_type=22, dims=[3], raw_data=bytes([0xe1, 0x03]))  # INT4 (onnx >= 1.16)
    inits.append(int4)
    g = helper.make_graph([], 'typed', [], [helper.make_tensor_value_info('f_typed', TensorProto.FLOAT, [3])], inits)
    return helper.make_model(g)


def m_subgraph():
    c_then = helper.make_node('Constant', [], ['t'], value=numpy_helper.from_array(arr((8,), seed=2), 'c_then'))
    c_else = helper.make_node('Constant', [], ['t'], value=numpy_helper.from_array(arr((8,), seed=3), 'c_else'))
    inner = helper.make_graph([c_then], 'then', [], [helper.make_tensor_value_info('t', TensorProto.FLOAT, [8])],
                              [numpy_helper.from_array(arr((2, 3), seed=4), 'sub.init')])
    # a second level: Loop body inside the else branch
    body_c = helper.make_node('Constant', [], ['k'], value=numpy_helper.from_array(arr((5,), seed=5), 'deep'))
    body = helper.make_graph([body_c], 'body', [], [helper.make_tensor_value_info('k', TensorProto.FLOAT, [5])])
    loop = helper.make_node('Loop', ['', ''], ['k'], body=body)
    other = helper.make_graph([c_else, loop], 'else', [], [helper.make_tensor_value_info('t', TensorProto.FLOAT, [8])])
    node = helper.make_node('If', ['cond'], ['out'], then_branch=inner, else_branch=other)
    g = helper.make_graph([node], 'main', [helper.make_tensor_value_info('cond', TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info('out', TensorProto.FLOAT, [8])])
    return helper.make_model(g)


def m_sparse():
    vals = numpy_helper.from_array(arr((3,), seed=6), 'sp.values')
    idx = numpy_helper.from_array(np.array([0, 5, 9], np.int64), 'sp.indices')
    sp = helper.make_sparse_tensor(vals, idx, [10])
    vals2 = numpy_helper.from_array(arr((2,), seed=7), 'attr.values')
    idx2 = numpy_helper.from_array(np.array([[0, 1], [2, 3]], np.int64), 'attr.indices')
    sp2 = helper.make_sparse_tensor(vals2, idx2, [4, 4])
    node = helper.make_node('Constant', [], ['c'], sparse_value=sp2)
    g = helper.make_graph([node], 'sparse', [], [helper.make_tensor_value_info('c', TensorProto.FLOAT, [4, 4])],
                          sparse_initializer=[sp])
    return helper.make_model(g)


def m_attrs():
    ts = [numpy_helper.from_array(arr((2,), seed=i), 'list%d' % i) for i in range(3)]
    node = helper.make_node('Custom', ['x'], ['y'], domain='x.y', tensors_attr=ts, f=1.5, i=3, s=b'str',
                            ints=[1, 2, 3], floats=[1.0, 2.0], strings=[b'a', b'b'],
                            t_attr=numpy_helper.from_array(arr((3, 3), seed=9), 'W'))
    w2 = numpy_helper.from_array(arr((3, 3), seed=10), 'w')  # collides with 'W' down-cased
    w3 = numpy_helper.from_array(arr((3, 3), seed=10), 'w_2')
    g = helper.make_graph([node], 'attrs', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1])], [w2, w3])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('x.y', 1)])


def m_names():
    names = ['a/b:0', '0bias', '__x', '', '权重', 'x' * 300, 'dup', 'dup']
    inits = [numpy_helper.from_array(arr((2,), seed=i), n) for i, n in enumerate(names)]
    inits.append(numpy_helper.from_array(arr((2,), seed=0), 'same_as_first'))  # dedup candidate
    g = helper.make_graph([], 'names', [], [], inits)
    return helper.make_model(g)


def m_function():
    c = helper.make_node('Constant', [], ['k'], value=numpy_helper.from_array(arr((6,), seed=11), 'fconst'))
    add = helper.make_node('Add', ['x', 'k'], ['y'])
    f = helper.make_function('local', 'F', ['x'], ['y'], [c, add], [helper.make_opsetid('', 17)])
    node = helper.make_node('F', ['a'], ['b'], domain='local')
    g = helper.make_graph([node], 'fn', [helper.make_tensor_value_info('a', TensorProto.FLOAT, [6])],
                          [helper.make_tensor_value_info('b', TensorProto.FLOAT, [6])])
    m = helper.make_model(g, functions=[f], opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('local', 1)])
    # training info with an initialization graph holding a tensor
    ti = m.training_info.add()
    ti.initialization.CopyFrom(helper.make_graph([], 'init', [], [],
                               [numpy_helper.from_array(arr((2,), seed=12), 'train.w')]))
    return m


def ext(t, location, offset, length):
    t.ClearField('raw_data')
    t.data_location = TensorProto.EXTERNAL
    for k, v in (('location', location), ('offset', str(offset)), ('length', str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def m_external():
    w1 = ext(numpy_helper.from_array(arr((16,), seed=13), 'ext.a'), 'w.bin', 0, 64)
    w2 = ext(numpy_helper.from_array(arr((4, 4), seed=14), 'ext.b'), 'w.bin', 128, 64)
    w3 = ext(numpy_helper.from_array(arr((8,), np.float64, seed=15), 'ext.c'), 'w.bin', 4032, 64)
    g = helper.make_graph([], 'ext', [], [], [w1, w2, w3])
    return helper.make_model(g)


MODELS = {
    'simple': m_simple, 'typed': m_typed, 'subgraph': m_subgraph, 'sparse': m_sparse, 'attrs': m_attrs,
    'names': m_names, 'function': m_function, 'external': m_external,
}


# --- fuzz_model_diff: model bytes whose EXTERNAL tensors name the entries
# "a" (256 bytes) and "b" (4096 bytes) of the archive the target builds.

def tag(num, wt):
    return pb_varint(num << 3 | wt)


def ext_entry(name, loc, dims, dtype=TensorProto.FLOAT, offset=None, length=None):
    t = TensorProto(name=name, data_type=dtype, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (('location', loc), ('offset', None if offset is None else str(offset)),
                 ('length', None if length is None else str(length))):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    return t.SerializeToString()


def model_with(graph_fields):
    """A ModelProto (ir_version 8, opset 17) around raw GraphProto fields."""
    return (tag(1, 0) + pb_varint(8) + ld(8, ld(1, b'') + tag(2, 0) + pb_varint(17))
            + ld(7, ld(2, b'g') + graph_fields))


def constant_node(attr_fields):
    return ld(1, ld(2, b'c') + ld(4, b'Constant') + ld(5, ld(1, b'value') + attr_fields + tag(20, 0) + pb_varint(4)))


def diff_seeds():
    """Well-formed models and ones whose singular messages repeat: protobuf
    merges them (the differential target checks the library agrees)."""
    t64 = ext_entry('w', 'a', [64])
    seeds = {
        # issue 9: {FLOAT [64] in 'a'} then {dims [64]} = one [64, 64] tensor of 16 KiB: refused
        'const_twice_dims': model_with(constant_node(ld(5, t64) + ld(5, TensorProto(dims=[64]).SerializeToString()))),
        # the same split, valid: dims and type first, raw_data in the second copy
        'const_twice_raw': model_with(constant_node(
            ld(5, TensorProto(name='k', data_type=TensorProto.FLOAT, dims=[4]).SerializeToString())
            + ld(5, TensorProto(raw_data=bytes(range(16))).SerializeToString()))),
        # data_type given again: DOUBLE [64] needs 512 bytes of a 256-byte entry
        'const_twice_dtype': model_with(constant_node(ld(5, t64) + ld(5, TensorProto(data_type=11).SerializeToString()))),
        # a second location key: the merged tensor has two
        'const_twice_location': model_with(constant_node(ld(5, t64) + ld(5, ext_entry('', 'b', [])))),
        # valid: first copy says where (b at 1024), second copy gives dims
        'const_twice_split': model_with(constant_node(
            ld(5, ext_entry('s', 'b', [], offset=1024, length=256)) + ld(5, TensorProto(data_type=1, dims=[8, 8]).SerializeToString()))),
        'plain_ext': model_with(ld(5, ext_entry('w0', 'a', [64])) + ld(5, ext_entry('w1', 'b', [16, 16], offset=0))),
        'plain_inline': model_with(ld(5, numpy_helper.from_array(arr((2, 3)), 'r').SerializeToString())),
    }
    vals = ext_entry('v', 'a', [4])
    idx = TensorProto(name='i', data_type=TensorProto.INT64, dims=[4], int64_data=[0, 1, 2, 3]).SerializeToString()
    sp = ld(1, vals) + ld(2, idx) + tag(3, 0) + pb_varint(10)
    # sparse initializer whose values repeat, and an attribute sparse_tensor given twice
    seeds['sparse_values_twice'] = model_with(ld(15, sp + ld(1, TensorProto(dims=[2]).SerializeToString())))
    vals32 = ext_entry('v', 'a', [4], length=32)
    seeds['sparse_values_twice_ok'] = model_with(ld(15, ld(1, vals32) + ld(2, idx) + tag(3, 0) + pb_varint(10)
                                                     + ld(1, TensorProto(dims=[2]).SerializeToString())))
    seeds['sparse_attr_twice'] = model_with(ld(1, ld(4, b'Constant') + ld(5, ld(1, b'sparse_value') + ld(22, sp)
                                                                         + ld(22, ld(1, vals)) + tag(20, 0) + pb_varint(11))))
    # a subgraph attribute given twice, and the model's graph given twice
    sub = ld(5, ext_entry('sub0', 'a', [16]))
    seeds['subgraph_twice'] = model_with(ld(1, ld(4, b'If') + ld(5, ld(1, b'then_branch') + ld(6, sub)
                                                             + ld(6, ld(5, ext_entry('sub1', 'b', [8]))) + tag(20, 0) + pb_varint(5))))
    seeds['graph_twice'] = model_with(ld(5, t64)) + ld(7, ld(5, ext_entry('w2', 'b', [2, 2])))
    for name, fn in MODELS.items():
        if name != 'external':
            seeds['onnx_' + name] = fn().SerializeToString()
    return seeds


def write(target, name, data):
    if len(data) > MAX_FILE:
        return
    with open(os.path.join(CORPUS, target, name), 'wb') as f:
        f.write(data)


def variants(rng, data, n_trunc, n_flip):
    out = []
    for k in range(n_trunc):
        cut = rng.randrange(1, len(data)) if len(data) > 1 else 0
        out.append(('trunc%d' % k, data[:cut]))
    for k in range(n_flip):
        b = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        out.append(('flip%d' % k, bytes(b)))
    return out


def main():
    cli = sys.argv[1]
    rng = random.Random(1234)
    for t in ('fuzz_open', 'fuzz_pack', 'fuzz_unpack', 'fuzz_names', 'fuzz_model_diff'):
        d = os.path.join(CORPUS, t)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    tmp = tempfile.mkdtemp(prefix='onnxzip-corpus-')
    try:
        with open(os.path.join(tmp, 'w.bin'), 'wb') as f:
            f.write(bytes((i * 31 + 7) & 0xff for i in range(4096)))
        for name, fn in MODELS.items():
            m = fn()
            raw = m.SerializeToString()
            path = os.path.join(tmp, name + '.onnx')
            with open(path, 'wb') as f:
                f.write(raw)
            write('fuzz_pack', name + '.onnx', raw)
            if name != 'external':
                write('fuzz_open', 'classic_' + name + '.onnx', raw)
            for vname, v in variants(rng, raw, 1, 1):
                write('fuzz_pack', name + '_' + vname + '.onnx', v)
            for thr, extra in (('0', []), ('16', ['--dedup']), ('0', ['--keep-typed', '--no-convert-attributes'])):
                out = os.path.join(tmp, '%s_t%s%s.onnxzip' % (name, thr, extra[0][2:6] if extra else ''))
                subprocess.run([cli, 'pack', path, '-o', out, '--size-threshold', thr, '-q', '--data-dir', tmp]
                               + extra, check=True)
                with open(out, 'rb') as f:
                    z = f.read()
                base = os.path.basename(out)
                write('fuzz_open', base, z)
                if thr == '0' and not extra:
                    write('fuzz_unpack', base, z)
                    for vname, v in variants(rng, z, 1, 2):
                        write('fuzz_open', base + '.' + vname, v)
                        write('fuzz_unpack', base + '.' + vname, v)
        # one archive with a larger alignment
        out = os.path.join(tmp, 'simple_a4096.onnxzip')
        subprocess.run([cli, 'pack', os.path.join(tmp, 'simple.onnx'), '-o', out, '--align', '4096',
                        '--size-threshold', '0', '-q'], check=True)
        with open(out, 'rb') as f:
            write('fuzz_unpack', 'simple_a4096.onnxzip', f.read())
        # a package (spec 19): two models of one directory sharing a payload, a model
        # at the top, a plain file; seeds the manifest and package-path parsers
        repo = os.path.join(tmp, 'repo')
        os.makedirs(os.path.join(repo, 'onnx'))
        for model in ('onnx/a.onnx', 'onnx/b.onnx', 'top.onnx'):
            with open(os.path.join(repo, model), 'wb') as f:
                f.write(m_simple().SerializeToString())
        with open(os.path.join(repo, 'config.json'), 'w') as f:
            f.write('{"a": 1}\n')
        out = os.path.join(tmp, 'package.onnxzip')
        subprocess.run([cli, 'pack', repo, '-o', out, '--size-threshold', '0', '-q'], check=True)
        with open(out, 'rb') as f:
            z = f.read()
        write('fuzz_open', 'package.onnxzip', z)
        write('fuzz_unpack', 'package.onnxzip', z)
        for vname, v in variants(random.Random(29), z, 1, 2):
            write('fuzz_open', 'package.onnxzip.' + vname, v)
    finally:
        shutil.rmtree(tmp)

    for name, raw in diff_seeds().items():
        write('fuzz_model_diff', name, raw)

    names = ['', 'W', 'w', 'w_2', 'encoder.0.weight', 'conv.weight', 'conv_weight', '0bias', '__x', '_', '__',
             '___', 'a/b:0', 'a b', '权重', 'émbed.ding', '\xff\xfe', 'x' * 240, 'x' * 241, 'x' * 300,
             '_' * 300, '9' * 250, '__MODEL_PROTO', '__PAD_1', 'model.layers.31.self_attn.q_proj.weight',
             'onnx::MatMul_1234', '/model/Constant_output_0', 'a' * 239 + '.', '.', '..', '\t\n', 'A_1_2',
             'ß', '\U0001F600', 'Z' * 255]
    for i, n in enumerate(names):
        write('fuzz_names', 'name%02d' % i, n.encode('utf-8', 'surrogateescape') if isinstance(n, str) else n)
    with open(os.path.join(CORPUS, 'fuzz_names', 'name_raw_high'), 'wb') as f:
        f.write(bytes(range(1, 256)))


if __name__ == '__main__':
    main()
