"""The TensorProtos of an onnx.ModelProto, found where the C library finds
them (src/onnx/onnx_walk.c): initializers, sparse initializers, attribute tensors
and sparse tensors, in every subgraph, function and training graph."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Tuple

INITIALIZER, ATTRIBUTE, SPARSE_VALUES, SPARSE_INDICES = "initializer", "attribute", "sparse_values", "sparse_indices"

# message type name -> {field name: kind of the tensors directly below it, or
# None where the field leads to further messages}. Fields an older onnx
# lacks are simply never set.
CHILDREN: Dict[str, Dict[str, Any]] = {
    "ModelProto": {"graph": None, "training_info": None, "functions": None},
    "TrainingInfoProto": {"initialization": None, "algorithm": None},
    "GraphProto": {"node": None, "initializer": INITIALIZER, "sparse_initializer": INITIALIZER},
    "NodeProto": {"attribute": None},
    "FunctionProto": {"node": None, "attribute_proto": None},
    "AttributeProto": {"t": ATTRIBUTE, "tensors": ATTRIBUTE, "g": None, "graphs": None,
                       "sparse_tensor": ATTRIBUTE, "sparse_tensors": ATTRIBUTE},
    "SparseTensorProto": {"values": SPARSE_VALUES, "indices": SPARSE_INDICES},
}


def is_repeated(fd: Any) -> bool:
    """Whether field descriptor ``fd`` is repeated (protobuf >= 5.28 has
    ``is_repeated``; protobuf 7 dropped ``label``)."""
    flag = getattr(fd, "is_repeated", None)
    return bool(flag) if flag is not None else fd.label == fd.LABEL_REPEATED


def _children(msg: Any, kind: str) -> Iterator[Tuple[Any, Any, str]]:
    """(field, value, kind) for every set field of msg that leads to tensors."""
    table = CHILDREN.get(msg.DESCRIPTOR.name, {})
    for fd, value in msg.ListFields():
        if fd.name not in table:
            continue
        yield fd, value, table[fd.name] or kind


def iter_tensors(msg: Any, kind: str = INITIALIZER) -> Iterator[Tuple[Any, str]]:
    """Yields (TensorProto, kind) for every tensor below ``msg`` (a
    ModelProto or any message on the way to tensors), in field order."""
    if msg.DESCRIPTOR.name == "TensorProto":
        yield msg, kind
        return
    for fd, value, child_kind in _children(msg, kind):
        for item in (value if is_repeated(fd) else (value,)):
            yield from iter_tensors(item, child_kind)


def describe(tensor: Any) -> str:
    """How messages name a TensorProto of a model being saved or resolved:
    ``tensor 'NAME'``, or ``an unnamed tensor`` (a Constant's value), since
    its key (its path in the model) is the C library's to give once the
    model is open; messages add where its data is, which tells it apart."""
    return f"tensor '{tensor.name}'" if tensor.name else "an unnamed tensor"


def copy_field(out: Any, fd: Any, value: Any) -> None:
    """Copies one set field ``fd`` (holding ``value``) into message ``out``."""
    if is_repeated(fd):
        getattr(out, fd.name).extend(value)
    elif fd.type == fd.TYPE_MESSAGE:
        getattr(out, fd.name).CopyFrom(value)
    else:
        setattr(out, fd.name, value)


def rebuild(src: Any, dst: Any, on_tensor: Callable[[Any, Any, str], None], kind: str = INITIALIZER) -> None:
    """Copies ``src`` into the empty message ``dst`` of the same type, every
    TensorProto below it through ``on_tensor(src_tensor, dst_tensor, kind)``,
    so that payloads are never copied along with the graph. Fields unknown
    to the installed onnx are not carried over on the way to tensors."""
    if src.DESCRIPTOR.name == "TensorProto":
        on_tensor(src, dst, kind)
        return
    table = CHILDREN.get(src.DESCRIPTOR.name, {})
    leads = {fd.name: child_kind for fd, _, child_kind in _children(src, kind)}
    for fd, value in src.ListFields():
        if fd.name not in table:
            copy_field(dst, fd, value)
        elif is_repeated(fd):
            target = getattr(dst, fd.name)
            for item in value:
                rebuild(item, target.add(), on_tensor, leads[fd.name])
        else:
            child = getattr(dst, fd.name)
            child.SetInParent()  # present even when it turns out empty
            rebuild(value, child, on_tensor, leads[fd.name])
