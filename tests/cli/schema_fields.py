"""Our proto/onnx.proto against the schema compiled into the `onnx` Python
package (Debian python3-onnx): every message, field and enum value that onnx
defines must exist in ours with the same number, type, label and packing, so
the two read and write the same wire format. Fields newer than the installed
onnx (ours follows the current IR) are listed, not failed.

usage: schema_fields.py PROTOC_C PROTO_DIR
"""
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2
import onnx.onnx_ml_pb2 as onnx_pb2


def ours(protoc, proto_dir):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "ours.pb")
        subprocess.run([protoc, "--descriptor_set_out=" + out, "-I" + proto_dir,
                        os.path.join(proto_dir, "onnx.proto")], check=True)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    return fds.file[0]


def theirs():
    fdp = descriptor_pb2.FileDescriptorProto()
    onnx_pb2.DESCRIPTOR.CopyToProto(fdp)
    return fdp


def index(fdp):
    """{'Msg.Sub': DescriptorProto}, {'Enum path': {name: number}}."""
    msgs, enums = {}, {}

    def walk(m, prefix):
        name = prefix + m.name
        msgs[name] = m
        for e in m.enum_type:
            enums[name + "." + e.name] = {v.name: v.number for v in e.value}
        for n in m.nested_type:
            walk(n, name + ".")

    for m in fdp.message_type:
        walk(m, "")
    for e in fdp.enum_type:
        enums[e.name] = {v.name: v.number for v in e.value}
    return msgs, enums


def main():
    protoc, proto_dir = sys.argv[1], sys.argv[2]
    our_msgs, our_enums = index(ours(protoc, proto_dir))
    their_msgs, their_enums = index(theirs())
    passed = failed = 0
    newer = []

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    for name, m in sorted(their_msgs.items()):
        mine = our_msgs.get(name)
        check(mine is not None, f"message {name} missing")
        if mine is None:
            continue
        our_fields = {f.name: f for f in mine.field}
        for f in m.field:
            g = our_fields.get(f.name)
            check(g is not None, f"{name}.{f.name} missing")
            if g is None:
                continue
            check(g.number == f.number, f"{name}.{f.name}: number {g.number} != onnx's {f.number}")
            check(g.type == f.type, f"{name}.{f.name}: type {g.type} != onnx's {f.type}")
            check(g.label == f.label, f"{name}.{f.name}: label {g.label} != onnx's {f.label}")
            check(g.options.packed == f.options.packed,
                  f"{name}.{f.name}: packed {g.options.packed} != onnx's {f.options.packed}")
            check(g.type_name.lstrip(".") == f.type_name.lstrip("."),
                  f"{name}.{f.name}: type name {g.type_name} != onnx's {f.type_name}")
            check(g.HasField("oneof_index") == f.HasField("oneof_index"),
                  f"{name}.{f.name}: oneof membership differs")
        theirs_names = {f.name for f in m.field}
        newer += [f"{name}.{f.name} = {f.number}" for f in mine.field if f.name not in theirs_names]
    for name, values in sorted(their_enums.items()):
        mine = our_enums.get(name)
        check(mine is not None, f"enum {name} missing")
        for v, n in values.items():
            if (name, v) == ("Version", "IR_VERSION"):
                # "the current IR version": it moves with every release by
                # definition; every dated IR_VERSION_* value is still compared.
                continue
            check(mine is not None and mine.get(v) == n, f"enum {name}.{v} = {n} missing or renumbered")
    newer += [m for m in sorted(our_msgs) if m not in their_msgs]
    print(f"schema_fields: onnx package {onnx_pb2.DESCRIPTOR.name}; "
          f"{len(newer)} fields/messages newer than it: {', '.join(newer) or 'none'}")
    print(f"schema_fields: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
