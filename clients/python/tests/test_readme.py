"""The README's first example runs unchanged against a running Revops, as a user would run
it: a program of its own, importing the installed package."""

import os
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from .support import PACKAGE, skip_unless_live


def first_block(lang: str) -> str:
    text = (PACKAGE / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"```{lang}\n(.*?)\n```", text, re.S)
    if match is None:
        raise AssertionError(f"README.md has no ```{lang} block")
    return match.group(1) + "\n"


class Readme(unittest.TestCase):
    def test_the_first_block_is_the_example_and_compiles(self) -> None:
        source = first_block("python")
        compile(source, "README.md", "exec")
        self.assertTrue((PACKAGE / "README.md").read_text(encoding="utf-8").startswith("# revops (Python)\n\n```python\n"))

    @skip_unless_live
    def test_the_first_example_runs_against_the_server(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            program = Path(tmp) / "example.py"
            program.write_text(first_block("python"), encoding="utf-8")
            done = subprocess.run([sys.executable, "-W", "error", str(program)], cwd=tmp, env=os.environ.copy(),
                                  capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertEqual(done.stderr, "")
        self.assertRegex(done.stdout, r"\(sandbox, secret key\)")
        self.assertIn("refused: 409 invalid_state_transition", done.stdout)
        self.assertIn("now signed", done.stdout)
        self.assertRegex(done.stdout, r"\n[0-9a-f-]{36} signed 19999.00 USD\n")


if __name__ == "__main__":
    unittest.main()
