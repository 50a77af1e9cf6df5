"""A PEP 517 build backend for the revops package, standard library only.

Why not setuptools: pip builds a package in an isolated environment into which it first
installs the backend the project names, from a package index. On a machine without one
(CI here, an air-gapped host) that fails for setuptools, and `--no-build-isolation` works
only where setuptools *and* wheel are already installed (a fresh venv of Python 3.11 has
setuptools without wheel; 3.12's has neither). This backend needs nothing (requires = []),
so `pip install ./clients/python` and `pip wheel ./clients/python` work offline, isolated
or not. The package is pure Python: a wheel is a zip of src/revops and three metadata
files (PEP 427, core metadata 2.1).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "revops"
# Entries get this time (or $SOURCE_DATE_EPOCH), so that two builds of one tree are equal.
_EPOCH = (1980, 1, 1, 0, 0, 0)

ConfigSettings = Optional[Mapping[str, object]]


def _project() -> Dict[str, str]:
    """The [project] table's simple string keys (name, version, description, …). tomllib
    is Python 3.11+; the package supports 3.9, so the few lines are read directly."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.S | re.M)
    if section is None:
        raise RuntimeError("pyproject.toml has no [project] table")
    fields = dict(re.findall(r'^([a-z-]+)\s*=\s*"([^"]*)"\s*$', section.group(1), re.M))
    for key in ("name", "version", "description", "requires-python"):
        if key not in fields:
            raise RuntimeError(f"pyproject.toml: [project] lacks {key}")
    return fields


def _metadata() -> str:
    p = _project()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {p['name']}\n"
        f"Version: {p['version']}\n"
        f"Summary: {p['description']}\n"
        f"Requires-Python: {p['requires-python']}\n"
        "License: UNLICENSED\n"
        "Classifier: Typing :: Typed\n"
        "Description-Content-Type: text/markdown\n"
        "\n" + readme
    )


def _sources() -> List[Tuple[str, Path]]:
    """The package's files (src/revops), as (archive name, path), sorted."""
    out: List[Tuple[str, Path]] = []
    base = ROOT / "src"
    for path in sorted((base / PACKAGE).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
            out.append((path.relative_to(base).as_posix(), path))
    return out


def _dist_info() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}.dist-info"


def _wheel_name() -> str:
    p = _project()
    return f"{p['name']}-{p['version']}-py3-none-any.whl"


def _zip_info(name: str) -> zipfile.ZipInfo:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = _EPOCH
    if epoch and epoch.isdigit() and int(epoch) >= 315532800:  # 1980, zip's first year
        import time

        when = time.gmtime(int(epoch))[:6]
    info = zipfile.ZipInfo(name, date_time=when)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _write_wheel(wheel_directory: str, files: List[Tuple[str, bytes]]) -> str:
    """Writes files plus METADATA, WHEEL and RECORD into a wheel; returns its name."""
    info = _dist_info()
    files = files + [
        (f"{info}/METADATA", _metadata().encode("utf-8")),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: revops_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = io.StringIO()
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        record.write(f"{name},sha256={digest},{len(data)}\n")
    record.write(f"{info}/RECORD,,\n")
    files.append((f"{info}/RECORD", record.getvalue().encode("utf-8")))
    name = _wheel_name()
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as whl:
        for entry, data in files:
            whl.writestr(_zip_info(entry), data)
    return name


# PEP 517 hooks. Nothing to install first: the build uses the standard library only.


def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: ConfigSettings = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: ConfigSettings = None) -> List[str]:
    return []


def build_wheel(wheel_directory: str, config_settings: ConfigSettings = None, metadata_directory: Optional[str] = None) -> str:
    return _write_wheel(wheel_directory, [(name, path.read_bytes()) for name, path in _sources()])


def build_editable(wheel_directory: str, config_settings: ConfigSettings = None, metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel whose .pth file puts src/ on sys.path, so edits show at once."""
    return _write_wheel(wheel_directory, [(f"_{PACKAGE}_editable.pth", (str(ROOT / "src") + "\n").encode("utf-8"))])


def build_sdist(sdist_directory: str, config_settings: ConfigSettings = None) -> str:
    """A tar.gz of what building needs: pyproject.toml, README.md, src/revops and this
    backend, with PKG-INFO."""
    p = _project()
    base = f"{p['name']}-{p['version']}"
    members = [("pyproject.toml", ROOT / "pyproject.toml"), ("README.md", ROOT / "README.md"),
               ("tools/revops_build.py", Path(__file__).resolve())]
    members += [("src/" + name, path) for name, path in _sources()]
    name = base + ".tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for arcname, data in [("PKG-INFO", _metadata().encode("utf-8"))] + [(a, path.read_bytes()) for a, path in members]:
            entry = tarfile.TarInfo(f"{base}/{arcname}")
            entry.size, entry.mode, entry.mtime = len(data), 0o644, 315532800
            tar.addfile(entry, io.BytesIO(data))
    return name
