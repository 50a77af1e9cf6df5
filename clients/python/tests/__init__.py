"""The Python client's tests: `python -m unittest` in clients/python, with the package
installed (pip install .) or src/ on PYTHONPATH. See README.md, "Tests"."""
