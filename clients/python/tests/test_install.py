"""The package installs as its README says, offline: `pip install ./clients/python` in a
new venv (pip's isolated build included), and as a built wheel. Nothing comes from a
package index (--no-index): the build backend (tools/revops_build.py) needs nothing."""

import os
import shutil
import subprocess
import tempfile
import unittest
import venv
import zipfile
from pathlib import Path
from typing import Dict, List

from .support import PACKAGE

IMPORT = "import revops, os; print(revops.VERSION, os.path.isfile(os.path.join(os.path.dirname(revops.__file__), 'py.typed')), revops.__file__)"


def fresh_copy(dest: Path) -> Path:
    """The folder as a fresh clone has it: no node_modules/, no caches, no tests (they are
    not part of what gets installed)."""
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("node_modules", "__pycache__", "tests", "build", "dist", "*.egg-info"))
    return dest


class Install(unittest.TestCase):
    """One new venv (with pip, as `python -m venv` makes it) for the class: each test
    installs the package into it again (--force-reinstall)."""

    venv_dir: Path
    python: str
    env: Dict[str, str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.venv_dir = Path(tempfile.mkdtemp(prefix="revops-py-venv-"))
        venv.EnvBuilder(with_pip=True).create(cls.venv_dir)
        cls.python = str(cls.venv_dir / ("Scripts" if os.name == "nt" else "bin") / "python")
        # No index: what a machine without network does.
        cls.env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        cls.env.update({"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.venv_dir, ignore_errors=True)

    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="revops-py-install-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def run_ok(self, *args: str, cwd: Path) -> str:
        done = subprocess.run(list(args), cwd=cwd, env=self.env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, f"{' '.join(args)}:\n{done.stdout}{done.stderr}")
        return done.stdout

    def imported(self) -> List[str]:
        return self.run_ok(self.python, "-c", IMPORT, cwd=self.tmp).split()

    def test_a_fresh_copy_installs_into_a_new_venv_offline(self) -> None:
        folder = fresh_copy(self.tmp / "clients" / "python")
        before = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)
        self.run_ok(self.python, "-m", "pip", "install", "--force-reinstall", str(folder), cwd=self.tmp)
        _, typed, where = self.imported()
        self.assertEqual(typed, "True", "py.typed is installed")
        self.assertIn("site-packages", where)
        after = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts)
        self.assertEqual(before, after, "installing leaves nothing behind in the folder")

    def test_a_built_wheel_installs_and_holds_only_the_package(self) -> None:
        folder = fresh_copy(self.tmp / "src-copy")
        out = self.tmp / "wheels"
        self.run_ok(self.python, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(folder), cwd=self.tmp)
        (wheel,) = out.glob("revops-*-py3-none-any.whl")
        with zipfile.ZipFile(wheel) as z:
            names = z.namelist()
            metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        self.assertTrue(all(n.startswith(("revops/", "revops-")) for n in names), names)
        self.assertIn("revops/py.typed", names)
        self.assertIn("revops/_operations.py", names)
        self.assertNotIn("Requires-Dist", metadata, "no runtime dependency")
        self.assertIn("Requires-Python: >=3.9", metadata)
        self.run_ok(self.python, "-m", "pip", "install", "--force-reinstall", str(wheel), cwd=self.tmp)
        self.assertEqual(self.imported()[1], "True")

    def test_an_editable_install_reads_the_folder(self) -> None:
        folder = fresh_copy(self.tmp / "editable")
        self.run_ok(self.python, "-m", "pip", "install", "--force-reinstall", "-e", str(folder), cwd=self.tmp)
        self.assertEqual(Path(self.imported()[2]).resolve(), (folder / "src" / "revops" / "__init__.py").resolve())


if __name__ == "__main__":
    unittest.main()
