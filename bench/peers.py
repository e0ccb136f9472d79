"""Build and describe the peers' virtualenv (LitData 0.2.76, Mosaic streaming, WebDataset).

The peers share import names with our package (``litdata``) and need a torch build that
pip would otherwise replace with a multi-GB CUDA one, so they live in their own venv outside
the repository. Run ``python bench/peers.py`` to build it (idempotent) and print versions.

Environment:
    LITDATA_BENCH_PEERS_VENV  where the venv lives (default ``~/.cache/litdata-bench/peers-venv``)
    LITDATA_BENCH_SCRATCH     scratch root used as TMPDIR for peer children
                              (default ``~/.cache/litdata-bench/tmp``)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CACHE_ROOT = Path(os.environ.get("LITDATA_BENCH_CACHE", Path.home() / ".cache" / "litdata-bench"))

# The exact requirement set; changing it rebuilds the venv (see ``_marker_text``).
TORCH_PIN = "torch==2.13.0"
REQUIREMENTS: tuple[str, ...] = (
    TORCH_PIN,
    "litdata==0.2.76",
    "mosaicml-streaming",
    "webdataset",
    "numpy",
    "pillow",
    "zstandard",
    "psutil",
    "polars>1.0.0",  # LitData's key_fn and keyed lookups
    "cryptography",  # LitData's encryption
    # LitData's media serializers (Tiff, Nifti, Mesh, Pdf, Graph), for the media peer tests
    "tifffile",
    "nibabel",
    "trimesh",
    "pypdf",
    "pdfplumber",
    "torch-geometric",
)
MARKER_NAME = "litdata-bench-peers.json"
STUB_DIR_NAME = "litdata-bench-stubs"

# A stand-in for torchvision: PyPI's torchvision is a CUDA build that cannot load next to the
# CPU torch wheel, but Mosaic's ``streaming`` package imports a few names from it at import time.
# Anything that actually tries to *use* these raises, so a silent wrong answer is impossible.
_STUB_INIT = '''"""Stand-in torchvision for the litdata-bench peers' venv (not the real package).

Every ``torchvision.<anything>`` submodule is synthesised on import; every attribute is a
placeholder class that raises when instantiated or called.
"""

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0+litdata-bench-stub"
IS_STUB = True


class _Unavailable:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("torchvision is a stub in the litdata-bench peers venv")


def _placeholder(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return type(name, (_Unavailable,), {})


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        return _placeholder(name)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.startswith(__name__ + "."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.append(_Finder())


def __getattr__(name):
    return _placeholder(name)
'''

# ``torchvision.io`` image decoding backed by Pillow, so LitData can stream back ``jpeg``/``image``
# leaves in this venv (it decodes them with ``torchvision.io.decode_jpeg``). Output matches
# torchvision's contract: a uint8 CHW tensor.
_STUB_IO = '''"""Pillow-backed torchvision.io image decoding (litdata-bench peers venv)."""

import enum
import io as _io

import numpy as np
import torch


class ImageReadMode(enum.Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = 4


_PIL_MODES = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
              ImageReadMode.RGB_ALPHA: "RGBA"}


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    from PIL import Image

    data = input.numpy().tobytes() if isinstance(input, torch.Tensor) else bytes(input)
    image = Image.open(_io.BytesIO(data))
    image.load()
    if mode in _PIL_MODES:
        image = image.convert(_PIL_MODES[mode])
    array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, None]
    return torch.from_numpy(np.ascontiguousarray(array.transpose(2, 0, 1)))


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu", apply_exif_orientation=False):
    if isinstance(input, (list, tuple)):
        return [decode_jpeg(item, mode) for item in input]
    return decode_image(input, mode)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)

    class _Unavailable:
        def __init__(self, *args, **kwargs):
            raise RuntimeError(f"torchvision.io.{name} is not available in the litdata-bench stub")

    _Unavailable.__name__ = name
    return _Unavailable
'''


def venv_dir() -> Path:
    """Return the peers' venv directory (``$LITDATA_BENCH_PEERS_VENV`` or the default)."""
    env = os.environ.get("LITDATA_BENCH_PEERS_VENV")
    return Path(env).expanduser() if env else CACHE_ROOT / "peers-venv"


def venv_python(venv: Path | None = None) -> Path:
    """Return the interpreter of the peers' venv."""
    return (venv or venv_dir()) / "bin" / "python"


def scratch_dir() -> Path:
    """Return (and create) the scratch directory used as ``TMPDIR`` for peer processes.

    LitData's ``optimize`` deletes ``$TMPDIR/chunks`` and ``$TMPDIR/data``; pointing TMPDIR
    here keeps it away from anything shared.
    """
    env = os.environ.get("LITDATA_BENCH_SCRATCH")
    path = Path(env).expanduser() if env else CACHE_ROOT / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def peer_env(base: dict[str, str] | None = None, tmpdir: Path | None = None) -> dict[str, str]:
    """Environment for a child running under the peers' python.

    Removes any ``PYTHONPATH`` (so our package can never shadow LitData), sets ``TMPDIR`` to a
    private scratch directory and silences LitData's telemetry/upsell where it has switches.
    """
    env = dict(os.environ if base is None else base)
    env.pop("PYTHONPATH", None)
    tmp = tmpdir or Path(tempfile.mkdtemp(prefix="peer-", dir=scratch_dir()))
    tmp.mkdir(parents=True, exist_ok=True)
    env["TMPDIR"] = str(tmp)
    env.setdefault("DATA_OPTIMIZER_CACHE_FOLDER", str(tmp / "optimizer-cache"))
    env.setdefault("DATA_OPTIMIZER_DATA_CACHE_FOLDER", str(tmp / "optimizer-data"))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")
    return env


def _marker_text() -> str:
    return json.dumps(
        {"requirements": list(REQUIREMENTS), "stub": _STUB_INIT + _STUB_IO, "obstore": "removed"},
        sort_keys=True,
    )


def _run(cmd: list[str], **kwargs: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kwargs)


def _site_packages(py: Path) -> Path:
    out = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    )
    return Path(out.stdout.strip())


def _install_stub(venv: Path, py: Path) -> None:
    """Write the torchvision stand-in into a separate dir and put it on the venv's path via .pth."""
    stub_root = venv / STUB_DIR_NAME
    if stub_root.exists():
        shutil.rmtree(stub_root)
    pkg = stub_root / "torchvision"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(_STUB_INIT)
    (pkg / "io.py").write_text(_STUB_IO)
    # Appended *after* site-packages, so a real torchvision (if ever installed) wins.
    (_site_packages(py) / "zz-litdata-bench-stubs.pth").write_text(str(stub_root) + "\n")


def _pip_show_version(py: Path, name: str) -> str | None:
    out = subprocess.run(
        [str(py), "-m", "pip", "show", name], capture_output=True, text=True, check=False
    )
    for line in out.stdout.splitlines():
        if line.startswith("Version:"):
            return line.split(":", 1)[1].strip()
    return None


def build(force: bool = False) -> Path:
    """Create or update the peers' venv; return its python. Skips work when the marker matches."""
    venv = venv_dir()
    py = venv_python(venv)
    marker = venv / MARKER_NAME
    if not force and py.exists() and marker.exists() and marker.read_text() == _marker_text():
        return py
    venv.parent.mkdir(parents=True, exist_ok=True)
    if not py.exists():
        _run([sys.executable, "-m", "venv", str(venv)])
    constraints = venv / "constraints.txt"
    # Pin torch; numpy is deliberately left free (mosaicml-streaming caps it and pip will
    # downgrade it; that is the peers' honest environment).
    constraints.write_text(TORCH_PIN + "\n")
    env = dict(os.environ)
    pip = [str(py), "-m", "pip"]
    _run([*pip, "install", "-q", "--upgrade", "pip"], env=env)
    _run([*pip, "install", "-q", "-c", str(constraints), TORCH_PIN], env=env)
    _run([*pip, "install", "-q", "-c", str(constraints), *REQUIREMENTS], env=env)
    # Snag: a CUDA torchvision is pulled in as a dependency and cannot load beside CPU torch.
    if _pip_show_version(py, "torchvision") is not None:
        _run([*pip, "uninstall", "-y", "-q", "torchvision"], env=env)
    # Snag: LitData's obstore client cannot reach a plain-http S3 endpoint (the moto server of
    # the remote rows and the interop tests); without obstore LitData uses boto3.
    if _pip_show_version(py, "obstore") is not None:
        _run([*pip, "uninstall", "-y", "-q", "obstore"], env=env)
    _install_stub(venv, py)
    torch_version = _pip_show_version(py, "torch") or ""
    if not torch_version.startswith("2.13.0"):
        raise RuntimeError(f"peers venv has torch {torch_version!r}, expected 2.13.0")
    verify(py)
    marker.write_text(_marker_text())
    return py


_VERIFY = r"""
import json, importlib.metadata as md
import litdata, streaming, webdataset, torch, numpy, PIL, zstandard, torchvision
names = ["litdata", "mosaicml-streaming", "webdataset", "torch", "numpy", "pillow", "zstandard"]
out = {name: md.version(name) for name in names}
out["litdata_file"] = litdata.__file__
out["torchvision"] = getattr(torchvision, "__version__", "?")
print(json.dumps(out))
"""


def verify(py: Path | None = None) -> dict[str, str]:
    """Import the peers in the venv (with a scratch TMPDIR) and return their versions."""
    py = py or venv_python()
    env = peer_env()
    # cwd = scratch: ``python -c`` puts the cwd on sys.path, and the repo's cwd holds our litdata.
    out = subprocess.run(
        [str(py), "-c", _VERIFY],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["TMPDIR"],
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"peers venv import check failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """CLI: build (if needed) and print the peers' python and versions."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="reinstall even if the marker matches")
    args = parser.parse_args(argv)
    py = build(force=args.force)
    print(f"peers python: {py}")
    for name, version in verify(py).items():
        print(f"  {name:20s} {version}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
