"""A PEP 517 build backend for tollgate_guard, standard library only.

The client has no dependencies, and neither does its build: with
``requires = []`` pip installs it on a host without network access (an
agent host, CI), where a setuptools build would first need ``wheel``. It
builds one pure-Python wheel of ``src/tollgate_guard`` and an sdist.
"""

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "tollgate_guard"
DIST = "tollgate-guard"
VERSION = "0.1.0"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src", NAME)

METADATA = """Metadata-Version: 2.1
Name: {dist}
Version: {version}
Summary: Python client for tollgate: idempotent, human-approved agent actions (runs the tollgate binary)
Requires-Python: >=3.9
Description-Content-Type: text/markdown

""".format(dist=DIST, version=VERSION)

WHEEL = """Wheel-Version: 1.0
Generator: tollgate_build
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _package_files():
    for name in sorted(os.listdir(SRC)):
        if name.endswith(".py") or name == "py.typed":
            yield os.path.join(SRC, name), NAME + "/" + name


def _readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        return f.read()


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    filename = "{}-{}-py3-none-any.whl".format(NAME, VERSION)
    info = "{}-{}.dist-info".format(NAME, VERSION)
    files = []
    for path, arc in _package_files():
        with open(path, "rb") as f:
            files.append((arc, f.read()))
    files.append((info + "/METADATA", (METADATA + _readme()).encode("utf-8")))
    files.append((info + "/WHEEL", WHEEL.encode("utf-8")))
    record = "".join("{},{},{}\n".format(arc, _digest(data), len(data)) for arc, data in files)
    record += info + "/RECORD,,\n"
    files.append((info + "/RECORD", record.encode("utf-8")))
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as whl:
        for arc, data in files:
            whl.writestr(zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0)), data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    base = "{}-{}".format(NAME, VERSION)
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", os.path.join("_build", "tollgate_build.py")]:
            tar.add(os.path.join(ROOT, rel), arcname=base + "/" + rel.replace(os.sep, "/"))
        for path, arc in _package_files():
            tar.add(path, arcname=base + "/src/" + arc)
        pkg_info = (METADATA + _readme()).encode("utf-8")
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg_info)
        tar.addfile(ti, io.BytesIO(pkg_info))
    return filename
