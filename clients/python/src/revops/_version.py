"""The package version, sent in User-Agent. Keep in step with pyproject.toml (a test checks)."""

VERSION = "0.1.0"
