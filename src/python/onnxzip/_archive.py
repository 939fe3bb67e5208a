"""onnxzip.open() and Archive: a model's tensors as numpy arrays over the
mapped file."""
from __future__ import annotations

import collections
import mmap
import os
import re
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Deque, Dict, Iterator, List, Mapping, Optional, Tuple, Union, cast

import numpy as np

from . import _args, _dtypes, _native, _package, _torch, _trust, _walk
from ._errors import Error, make
from ._package import Member
from ._tensor_info import TYPED, TensorInfo, tensor_infos

if TYPE_CHECKING:  # pragma: no cover
    import onnx

# What open() maps in place: bytes-like objects (the buffer protocol), e.g. a
# numpy uint8 array; a str or os.PathLike is a path.
Buffer = Union[bytes, bytearray, memoryview, mmap.mmap, "np.ndarray[Any, np.dtype[np.uint8]]"]
Source = Union[str, "os.PathLike[str]", "os.PathLike[bytes]", Buffer]

_LAYOUT = ("archive", "classic", "external")

# Opens a model of the same file as a new handle: the package's model of
# that path, or its default for None (see Archive._open_model).
Opener = Callable[[Optional[str]], "_native.Handle"]

# onnxzip_open() flags (include/onnxzip/onnxzip.h)
_OPEN_VERIFY, _OPEN_SEQUENTIAL, _OPEN_WILLNEED, _OPEN_POPULATE, _OPEN_HUGEPAGE = 1, 2, 4, 8, 16


@dataclass(frozen=True)
class Entry:
    """One zip entry: its name, the offsets of its local header and of its
    data, its size, the CRC-32 the central directory records and the XXH3-64
    digest when the archive records one."""

    name: str
    header_offset: int
    data_offset: int
    size: int
    crc32: int
    xxh3: Optional[int]


class _Tensors(Mapping[str, np.ndarray]):
    """Archive.tensors: key -> read-only array, the first tensor of each
    key in model order (names may repeat across subgraphs). A key is the
    tensor's name, or an unnamed tensor's path (TensorInfo.key)."""

    def __init__(self, archive: "Archive") -> None:
        self._archive = archive

    def __getitem__(self, name: str) -> np.ndarray:
        self._archive._handle()
        index = self._archive._by_name().get(name)
        if index is None:
            raise KeyError(name)
        return self._archive.array(index)

    def __iter__(self) -> Iterator[str]:
        self._archive._handle()
        return iter(self._archive._by_name())

    def __len__(self) -> int:
        self._archive._handle()
        return len(self._archive._by_name())

    def __contains__(self, name: object) -> bool:
        self._archive._handle()
        return name in self._archive._by_name()

    def __repr__(self) -> str:
        return f"<onnxzip tensors: {len(self)} names>"


def _import_onnx() -> Any:
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("this onnxzip function returns onnx.ModelProto: install the onnx package") from e
    return onnx


def set_loaded_location(tensor: Any, storage: str) -> None:
    """data_location of a tensor whose referenced bytes were just put in its
    raw_data. An archive entry's reference is the archive's, not the model's:
    the field is cleared, as the model had it before save() or pack() moved
    the tensor. A classic model's side file: DEFAULT, as onnx.load sets it."""
    if storage == "entry":
        tensor.ClearField("data_location")
    else:
        tensor.data_location = tensor.DEFAULT


# Open archives whose model() returned models with references (weakly: an
# Archive is not kept alive by this), and how many models each remembers.
_HANDING: "weakref.WeakSet[Archive]" = weakref.WeakSet()
_HANDED_MODELS = 16


def model_source(model: Any) -> Optional["Archive"]:
    """The open Archive whose model() returned this very object (edited in
    place or not; a copy is another object), among the last 16 models each
    returned; None when there is none. protobuf messages take no attributes
    and upb's no weak references, so the Archive keeps the models."""
    for archive in list(_HANDING):
        if archive._h is not None and any(m is model for m in archive._handed):
            return archive
    return None


class Archive:
    """An open model: an onnxzip archive, or a classic .onnx (single file or
    with external data), mapped read-only. Use :func:`onnxzip.open`.

    Arrays and buffers obtained from it point into the mapping; each keeps it
    alive, so they stay valid after :meth:`close` and after the Archive is
    garbage-collected: the file is unmapped when the last of them goes.

    Opened on a package (format 1.2), it holds one of the package's models
    (the default, or the one ``model=`` named) and lists them all:
    :attr:`models`, :attr:`files`, :attr:`members`, :attr:`model_path`.
    """

    def __init__(self, handle: Any, path: Optional[str], opener: Optional[Opener] = None,
                 verifier: Optional[_trust.Verifier] = None) -> None:
        self._h: Optional[_native.Handle] = handle
        # trust=: the package's verified signature, which every model and
        # file handed out is checked against first (_trust.py)
        self._verifier = verifier
        # The last models model() returned with their references, so that
        # save() knows where their bytes are (see model_source()).
        self._handed: Deque[Any] = collections.deque(maxlen=_HANDED_MODELS)
        self._path = path
        self._raw = handle.tensors()  # tuples; TensorInfo objects are made when asked for
        self._info_list: Optional[List[TensorInfo]] = None
        self._first: Optional[Dict[str, int]] = None
        self._copies: Dict[int, np.ndarray] = {}  # typed tensors, decoded once (read-only: over bytes)
        self._strings: Dict[int, List[bytes]] = {}  # STRING tensors' elements
        self.tensors: Mapping[str, np.ndarray] = _Tensors(self)
        # the package's members (none: no package), and its models opened by .models
        self._opener = opener
        self._member_list = _package.members(handle.members())
        self._model_path: Optional[str] = handle.model_path()
        self._members_by_path = {m.path: i for i, m in enumerate(self._member_list)}
        self._model_archives: Dict[str, Archive] = {}
        self._directory: Optional[List[Any]] = None
        #: The package's models by path, in manifest order (empty when this is
        #: no package): each an Archive of that model, opened when first asked
        #: for and closed with this one (see :class:`onnxzip._package.Models`).
        self.models: Mapping[str, Archive] = _package.Models(self)
        #: The package's plain files by path, in manifest order (empty when
        #: this is no package): each a read-only memoryview of its bytes, in
        #: place (see :class:`onnxzip._package.Files`).
        self.files: Mapping[str, memoryview] = _package.Files(self)

    # -- state -------------------------------------------------------------

    def _handle(self) -> "_native.Handle":
        if self._h is None:
            raise ValueError("I/O operation on a closed onnxzip archive")
        return self._h

    def close(self) -> None:
        """Releases the archive. The mapping stays while arrays or buffers
        made from it live; further calls on the Archive raise ValueError.
        The package's models opened through :attr:`models` are closed too.
        Closing twice is harmless."""
        children, self._model_archives = self._model_archives, {}
        for child in children.values():
            child.close()
        self._opener = None  # it may hold a caller's buffer
        self._h = None
        self._copies = {}
        self._strings = {}
        _HANDING.discard(self)

    @property
    def closed(self) -> bool:
        """True after :meth:`close` (or the end of a ``with`` block)."""
        return self._h is None

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        shown = (self._path or "(buffer)") + (f" [{self._model_path}]" if self._member_list else "")
        if self._h is None:
            return f"<onnxzip.{type(self).__name__} {shown} closed>"
        return f"<onnxzip.{type(self).__name__} {shown} {self.layout}, {len(self._raw)} tensors>"

    # -- metadata ----------------------------------------------------------

    @property
    def path(self) -> Optional[str]:
        """The path it was opened from; None for a buffer; a
        :class:`RemoteArchive`'s URL (without its query string)."""
        return self._path

    @property
    def _file(self) -> Optional[str]:
        """The local file it maps, or None (a buffer, a remote archive)."""
        return self._path

    @property
    def layout(self) -> str:
        """"archive", "classic" (every tensor inline) or "external" (a
        classic model with external data files), found by content."""
        return _LAYOUT[self._handle().layout()]

    # -- packages (format 1.2; _package.py) ------------------------------------

    @property
    def model_path(self) -> Optional[str]:
        """The path in the package of the model this Archive holds
        (``"onnx/model.onnx"``); None when it is no package."""
        self._handle()
        return self._model_path

    @property
    def is_package(self) -> bool:
        """Whether the file is a package (format 1.2: models and files
        under their paths)."""
        self._handle()
        return bool(self._member_list)

    @property
    def members(self) -> List[Member]:
        """The package's models and files (:class:`Member`: path, kind,
        size, is_default) in manifest order; empty when it is no package."""
        self._handle()
        return list(self._member_list)

    def _member_index(self, path: str, kind: str) -> Optional[int]:
        self._handle()
        index = self._members_by_path.get(path)
        return index if index is not None and self._member_list[index].kind == kind else None

    def _file_bytes(self, index: int) -> memoryview:
        """Member ``index``'s bytes: in place when mapped, else fetched;
        with trust=, checked against the signature first."""
        h = self._handle()
        path = self._member_list[index].path
        region = h.member_region(index)
        if region is None:  # fetched: those very bytes are hashed
            data = h.member_read(index)
            if self._verifier is not None:
                self._verifier.check_bytes(path, data)
            return memoryview(data)
        if self._verifier is not None:  # mapped: hashed in place by the library, once
            self._verifier.check(h, path)
        return memoryview(region)

    def _covered(self, path: str) -> bool:
        """Whether the package file ``path`` may be handed out: always
        without trust=, else when the signature covers it (not model.sig,
        .git files: the statement's ignore_paths)."""
        return self._verifier is None or self._verifier.covers(path)

    def _open_model(self, path: str) -> "Archive":
        """The Archive of the package's model ``path``, kept until this one
        closes (opened again when closed). The file must still be the one
        this Archive opened (its zip directory unchanged): ECHANGED if not."""
        self._handle()
        child = self._model_archives.get(path)
        if child is not None and not child.closed:
            return child
        if self._opener is None:  # pragma: no cover - every open() passes one
            raise make("EUNSUPPORTED", f"{self._path or '(buffer)'}: cannot open another model of this archive")
        child = type(self)(self._opener(path), self._path, self._opener, self._verifier)
        if self._entries_raw() != child._entries_raw():  # the path names another file now
            child.close()
            raise make("ECHANGED", f"{self._path or '(buffer)'}: the file changed since it was opened (its zip "
                       f"directory differs): open it again to read model '{path}'", path=self._file)
        if self._verifier is not None:
            try:
                self._verifier.check(child._handle(), path)
            except BaseException:
                child.close()
                raise
        self._model_archives[path] = child
        return child

    def _entries_raw(self) -> List[Any]:
        if self._directory is None:
            self._directory = self._handle().entries()
        return self._directory

    @property
    def _infos(self) -> List[TensorInfo]:
        if self._info_list is None:
            self._info_list = tensor_infos(self._raw)
        return self._info_list

    @property
    def tensor_infos(self) -> List[TensorInfo]:
        """Every tensor of the model in model order (names may repeat)."""
        self._handle()
        return list(self._infos)

    def info(self, name: str) -> TensorInfo:
        """The first tensor whose key (a name, or an unnamed tensor's path:
        TensorInfo.key) is ``name``; KeyError when there is none."""
        self._handle()
        index = self._by_name().get(name)
        if index is None:
            raise KeyError(name)
        return self._infos[index]

    @property
    def entries(self) -> List[Entry]:
        """The zip entries in central-directory order (empty for a classic model)."""
        return [Entry(*e) for e in self._handle().entries()]

    @property
    def model_bytes(self) -> memoryview:
        """The serialized onnx.ModelProto, read-only and not copied: for an
        archive, the handle's copy of __MODEL_PROTO (large tensors are
        references to entries); for a classic model, the mapped file."""
        return memoryview(self._handle().model())

    def _by_name(self) -> Dict[str, int]:
        """key -> index of its first tensor."""
        if self._first is None:
            first: Dict[str, int] = {}
            for i, t in enumerate(self._raw):
                first.setdefault(t[10], i)
            self._first = first
        return self._first

    # -- tensors -----------------------------------------------------------

    def array(self, tensor: Union[str, _args.IntArg, TensorInfo]) -> np.ndarray:
        """The tensor (a key of :attr:`tensors`, an index into tensor_infos,
        negative from the end as in a list, or a TensorInfo) as a read-only
        numpy array of its shape. KeyError for an unknown name, IndexError for
        an index out of range, TypeError for anything else.

        Entry, inline and external-file tensors are views of the mapping (no
        copy). Typed-field tensors are decoded once into an array the Archive
        caches. bfloat16 and float8 use ml_dtypes when it is installed, else
        the unsigned integers of their bit patterns (uint16, uint8). Packed
        4-bit and 2-bit types (INT4, UINT4, FLOAT4E2M1, INT2, UINT2) are their
        raw bytes as a 1-D uint8 array; ``info(name).shape`` is the logical
        shape. STRING tensors are object arrays of their bytes (onnx's to_array
        decodes them to str).
        """
        h = self._h
        if h is None:
            raise ValueError("I/O operation on a closed onnxzip archive")
        if isinstance(tensor, str):
            index = self._by_name().get(tensor)
            if index is None:
                raise KeyError(tensor)
        elif isinstance(tensor, TensorInfo):
            index = tensor.index
        else:
            index = _args.integer(tensor, "tensor")
            count = len(self._raw)
            if not -count <= index < count:
                raise IndexError(f"tensor index {index} out of range ({count} tensors)")
            index %= count  # -1: the last, as in a list
        cached = self._copies.get(index)
        if cached is not None:
            return cached
        raw = self._raw[index]
        if raw[1] == _dtypes.STRING:  # a new array each time: an object array owns its memory, so a
            strings = self._strings.get(index)  # caller could make a cached one writable again
            if strings is None:
                strings = self._strings[index] = h.strings(index)
            array = np.empty(len(strings), dtype=object)
            array[:] = strings
            array = self._reshape(index, array)
            array.flags.writeable = False
            return array
        else:  # read-only: the Region refuses writable buffers, bytes are immutable
            region = h.region(index)
            array = self._shaped(index, h.read(index) if region is None else region)
        if raw[7] == TYPED:
            self._copies[index] = array
        return array

    def _shaped(self, index: int, data: Any) -> np.ndarray:
        data_type = self._raw[index][1]
        if data_type in _dtypes.PACKED_BITS:
            return np.frombuffer(data, dtype=np.uint8)
        dtype = _dtypes.numpy_dtype(data_type)
        if dtype is None:
            info = self._infos[index]
            raise Error(f"{self._path or '(buffer)'}: tensor '{info.key}': no numpy dtype for data type "
                        f"{info.dtype_name} ({data_type})", status="EDTYPE", code=-28)
        if len(data) % dtype.itemsize:
            return self._reshape(index, np.frombuffer(data, dtype=np.uint8))  # fails: the byte count is off
        return self._reshape(index, np.frombuffer(data, dtype=dtype))

    def _reshape(self, index: int, flat: np.ndarray) -> np.ndarray:
        shape = self._raw[index][2]
        try:
            return flat.reshape(shape)
        except ValueError:
            info = self._infos[index]
            raise Error(f"{self._path or '(buffer)'}: tensor '{info.key}': {flat.size} elements of data for "
                        f"shape {list(shape)} of {info.dtype_name}", status="ESIZE", code=-23) from None

    # -- the model ---------------------------------------------------------

    def model(self, load_data: bool = False) -> "onnx.ModelProto":
        """The model as an onnx.ModelProto (needs the onnx package).

        With ``load_data=False``, large tensors stay references
        (data_location EXTERNAL): an archive's name entries of the archive, a
        classic model's name its files. With ``load_data=True`` every
        external tensor gets its bytes in raw_data and loses its references,
        as ``onnx.load`` does with external data (a copy of the weights).
        ``onnx.load`` then sets data_location to DEFAULT explicitly, and so
        does this for a classic model's side files; a tensor read from an
        archive entry has data_location unset instead, as the model had it
        before :func:`onnxzip.save` or :func:`onnxzip.pack` moved the tensor.
        So ``onnxzip.load(path) == model`` after ``onnxzip.save(model, path)``
        when no tensor save() moves into an entry has data_location set in
        ``model`` (models built in memory, or read by ``onnx.load`` from a
        single .onnx file) or holds typed fields (float_data, ...: the
        default of ``onnx.helper.make_tensor``), which save() stores as
        raw_data, equal in value. The archive does not record an explicit DEFAULT
        (its references are plain ONNX): for a model that ``onnx.load`` read
        with external data, those tensors come back with the field unset,
        equal in every other field (DEFAULT is the field's default value)."""
        model: "onnx.ModelProto" = _import_onnx().ModelProto()
        model.ParseFromString(self.model_bytes)
        if load_data:
            self._load_data(model)
        else:
            self._handed.append(model)
            _HANDING.add(self)
        return model

    def _external_regions(self) -> Dict[Tuple[str, int], List[TensorInfo]]:
        """(location, offset) -> tensors there, as external_data keys name
        them: an entry and an offset in it, or a side file and an offset."""
        data_offset = {e.name: e.data_offset for e in self.entries}
        found: Dict[Tuple[str, int], List[TensorInfo]] = {}
        for t in self._infos:
            if t.storage == "entry" and t.entry is not None:
                found.setdefault((self._entry_location(t.entry), t.offset - data_offset[t.entry]), []).append(t)
            elif t.storage == "file" and t.entry is not None:
                found.setdefault((t.entry, t.offset), []).append(t)
        return found

    def _entry_location(self, entry: str) -> str:
        """The ``location`` by which this model references tensor entry
        ``entry``: its name, in a package relative to the model's directory
        (spec 19.2: ``onnx/w`` is ``w`` for ``onnx/model.onnx``)."""
        directory = (self._model_path or "").rpartition("/")[0]
        return entry[len(directory) + 1:] if directory and entry.startswith(directory + "/") else entry

    def _resolve(self, tensor: Any, regions: Dict[Tuple[str, int], List[TensorInfo]]) -> TensorInfo:
        """The tensor of this model holding the bytes an EXTERNAL TensorProto
        references (its keys naming an entry of this archive, or a side file
        of a classic model), as open() resolved it; ``regions`` is
        :meth:`_external_regions`. onnxzip.Error (EREF) naming the tensor when
        none does."""
        keys = {kv.key: kv.value for kv in tensor.external_data}  # the last of a key wins, as in onnx
        location = keys.get("location", "")
        try:
            key = (location, int(keys.get("offset") or 0))
            length = int(keys["length"]) if keys.get("length") else None
        except ValueError:
            key, length = (location, -1), None
        # tensors may share an offset with other lengths (overlapping views of one file)
        info = next((t for t in regions.get(key, ()) if length is None or t.nbytes == length), None)
        if info is None:
            where = f"offset {keys.get('offset') or 0}" + (f" length {length}" if length is not None else "")
            raise Error(f"{self._path or '(buffer)'}: {_walk.describe(tensor)}: no data at location "
                        f"'{location}' {where}", status="EREF", code=-21)
        return info

    def _region(self, info: TensorInfo) -> Any:
        """The bytes of ``info`` (not TYPED): a read-only buffer over the
        mapping, not copied; a remote archive's entry, fetched (bytes)."""
        h = self._handle()
        region = h.region(info.index)
        return h.read(info.index) if region is None else region

    def _load_data(self, model: Any) -> None:
        regions: Optional[Dict[Tuple[str, int], List[TensorInfo]]] = None
        for tensor, _ in _walk.iter_tensors(model):
            if tensor.data_location != tensor.EXTERNAL:
                continue
            if regions is None:
                regions = self._external_regions()
            info = self._resolve(tensor, regions)
            tensor.raw_data = bytes(self._region(info))
            del tensor.external_data[:]
            set_loaded_location(tensor, info.storage)


    # -- writable arrays and torch (_torch.py) ----------------------------------

    def _info_of(self, tensor: Union[str, _args.IntArg, TensorInfo]) -> TensorInfo:
        if isinstance(tensor, TensorInfo):
            return self._infos[tensor.index]
        if isinstance(tensor, str):
            return self.info(tensor)
        self.array(tensor)  # its index checks (IndexError, TypeError)
        return self._infos[_args.integer(tensor, "tensor") % len(self._raw)]

    def writable_array(self, tensor: Union[str, _args.IntArg, TensorInfo]) -> np.ndarray:
        """The tensor (as :meth:`array` takes it) as a WRITABLE numpy array
        of its own: an archive entry over copy-on-write pages of the file (a
        private mapping: reads share the page cache, each page written is
        copied into the process, the file is never changed), any other
        tensor as a copy. onnxzip.Error ENOMEM when the system refuses the
        mapping (Linux: one larger than about RAM + swap)."""
        self._handle()
        return _torch.writable_arrays(self, [self._info_of(tensor)])[0]

    def torch(self, tensor: Union[str, _args.IntArg, TensorInfo], writable: bool = False) -> Any:  # a torch.Tensor
        """The tensor as a torch.Tensor of its torch dtype (bfloat16 and
        float8 included, where the installed torch has them; packed 4-bit
        and 2-bit types as their uint8 bytes) and logical shape; needs torch.

        ``writable=False``: over the read-only mapping, no copy. torch has no
        read-only tensors: the caller promises not to write to it; a write
        (``t.add_(1)``) is undefined and in practice kills the process
        (SIGSEGV). ``writable=True``: over copy-on-write pages, as
        :meth:`writable_array`; writes stay in the process."""
        self._handle()
        info = self._info_of(tensor)
        array = _torch.writable_arrays(self, [info])[0] if writable else self.array(info)
        return _torch.to_torch(self, info, array)

    def state_dict(self, writable: bool = False) -> Dict[str, Any]:
        """{name: torch.Tensor} of the model's dense initializers (outside
        subgraphs), each as :meth:`torch` gives it, for
        ``module.load_state_dict()``. ``writable=False``: read-only use only
        (see :meth:`torch`); ``writable=True``: copy-on-write, one private
        mapping per tensor."""
        self._handle()
        return _torch.state_dict(self, writable)

    def view(self, location: Optional[str] = None, size_threshold: _args.IntArg = 1024) -> bytes:
        """The model as a classic ONNX model whose large tensors reference
        this archive file by offset (``onnxzip_view_model``): load it with any
        ONNX loader that reads external data relative to the archive's
        directory. ``location`` (a plain file name) defaults to the archive's
        file name; tensors under ``size_threshold`` bytes (an integer >= 0)
        are made inline."""
        threshold = _args.byte_count(size_threshold, "size_threshold")
        name = None if location is None else _args.path(location, "location")
        return self._handle().view(name, threshold)

    def write_view(self, path: _args.PathArg, size_threshold: _args.IntArg = 1024) -> None:
        """Writes the view (see :meth:`view`) to ``path`` (str, bytes or
        os.PathLike), a file in the archive's directory, atomically
        (``onnxzip_view_write``)."""
        threshold = _args.byte_count(size_threshold, "size_threshold")
        self._handle().view_write(_args.path(path, "path"), threshold)

    # -- checks and outputs --------------------------------------------------

    def listing(self, json: bool = False) -> str:
        """What ``onnxzip ls`` prints of the archive (``json=True``: what
        ``onnxzip ls --json`` prints), from the C library
        (``onnxzip_listing``): the same text, the archive's name aside,
        whether it was opened from a path, a buffer or a URL. Its alignments
        are the file offsets' (:attr:`TensorInfo.alignment` is the
        address's)."""
        if not isinstance(json, bool):
            raise TypeError(f"json must be a bool, not {type(json).__name__}")
        return self._handle().listing(json)

    def verify(self) -> None:
        """Reads every byte and checks CRC-32s, digests and the model's
        required fields (``onnxzip_verify``); raises Error naming the first
        fault."""
        self._handle().verify()

    def check(self) -> None:
        """Raises Error (status ETRUNC) when the file changed since open
        (``onnxzip_check``): then close and open again."""
        self._handle().check()

    def extract(self, name: str, path: _args.PathArg) -> None:
        """Writes the payload of the first tensor of key ``name`` (a key of
        :attr:`tensors`: a name, or an unnamed tensor's path) to ``path``
        (str, bytes or os.PathLike)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        self._handle().extract(name, _args.path(path, "path"))


_URL = re.compile(r"(?i)(https?|s3)://")


def _refuse_url(path: str) -> None:
    """A URL given to open() (no such file): the hint to open_url()."""
    if _URL.match(path) and not os.path.lexists(path):
        shown = re.sub(r"[?#].*", "", re.sub(r"//[^/?#]*@", "//...@", path))  # as the C library shows URLs
        raise make("EINVAL", f"{shown}: a URL, not a file: open it with onnxzip.open_url(url)")


def open(source: Source, *, model: Optional[str] = None, verify: bool = False, populate: bool = False,
         sequential: bool = False, willneed: bool = False, hugepage: bool = False,
         trust: Optional[_trust.Trust] = None) -> Archive:
    """Opens a model: an onnxzip archive, a classic .onnx, or a classic .onnx
    with external data files (found by content), and maps it read-only.

    ``source`` is a path (``str`` or ``os.PathLike``, e.g. ``pathlib.Path``)
    or the archive's CONTENTS: a bytes-like object (bytes, bytearray,
    memoryview, ``mmap.mmap``, a contiguous numpy uint8 array), BORROWED, not
    copied: it is held, unchanged and unresizable, until the Archive and
    every array from it are gone. ``bytes`` are contents, never a path: give
    a bytes path as ``os.fsdecode(p)`` (or a PathLike). Anything else is a
    TypeError.

    A package (format 1.2: a repository folder in one archive) opens as its
    default model, or as the model whose path ``model`` names
    (``"onnx/model_fp16.onnx"``): NameNotFoundError (a LookupError) naming
    the package when it has none of that path; InvalidArgumentError (a
    ValueError) when ``model`` is given for a file that is no package. Its
    other models and its files are :attr:`Archive.models` and
    :attr:`Archive.files`. A buffer's package opens its default model only
    (UnsupportedError for ``model``: open it by path).

    ``trust`` (an :class:`onnxzip.Trust`): the package must carry a
    signature that it accepts (its ``model.sig``, or the Trust's detached
    one), its files must be the signed ones by name, and the model opened
    must be byte for byte what was signed (its model file and data files;
    a single-model archive: the whole file) before open() returns;
    :attr:`Archive.files` and :attr:`Archive.models` check each file and
    model before returning it. Raises :class:`onnxzip.SignatureError` (a
    ValueError) naming the file otherwise.

    ``verify=True`` also checks every entry's CRC-32 and digest (reads every
    byte). ``populate``, ``sequential``, ``willneed``, ``hugepage`` are access
    hints for the mapping (``ONNXZIP_OPEN_*``). Raises onnxzip.Error naming
    the file, entry or tensor at fault. Use as a context manager::

        with onnxzip.open("model.onnxzip") as a:
            w = a.tensors["weight"]
    """
    wanted = _args.model(model)
    trusted = _trust.argument(trust)
    flags = ((_OPEN_VERIFY if verify else 0) | (_OPEN_POPULATE if populate else 0)
             | (_OPEN_SEQUENTIAL if sequential else 0) | (_OPEN_WILLNEED if willneed else 0)
             | (_OPEN_HUGEPAGE if hugepage else 0))
    if isinstance(source, (str, os.PathLike)):
        path = _args.path(source, "source")
        _refuse_url(path)

        def by_path(member: Optional[str]) -> _native.Handle:
            return _native.open(path, flags, member)
        handle = by_path(wanted)
        return Archive(handle, path, by_path, _trust.verify(trusted, handle))
    try:
        memoryview(cast(Any, source)).release()  # the buffer protocol, checked before the C call
    except TypeError:
        raise TypeError(f"source must be a path (str or os.PathLike) or a bytes-like object, "
                        f"not {type(source).__name__}") from None
    if wanted is not None:
        raise make("EUNSUPPORTED", f"(buffer): model '{wanted}' asked for: a package in a buffer opens its "
                   "default model only; open the file by path to choose another")
    handle = _native.open_buffer(source, flags)
    default = handle.model_path()

    def by_buffer(member: Optional[str]) -> _native.Handle:
        if member != default:
            raise make("EUNSUPPORTED", f"(buffer): model '{member}': a package in a buffer opens its default "
                       f"model ('{default}') only; open the file by path to read its other models")
        return _native.open_buffer(source, flags)
    return Archive(handle, None, by_buffer, _trust.verify(trusted, handle))
