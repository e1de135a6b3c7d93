"""The house rules that no linter checks for us: SQL lives in corpus/ only, and only
`ground.settings.load_settings` builds a Settings (the import layers are `lint-imports`' job)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ["ground", "corpus", "ingest", "agent", "inbox", "api", "eval", "chatpapers", "bench"]
# Statements as this project writes them: keywords in capitals (so prose such as "Select a paper"
# or "set of papers" is not SQL).
SQL = re.compile(
    r"^\s*(SELECT\s|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|COPY\s+\w+|CREATE\s+[A-Z]|"
    r"ALTER\s+[A-Z]|DROP\s+[A-Z]|TRUNCATE\s|WITH\s+\w+\s+AS|SET\s+(LOCAL\s+)?\w+\s*(=|TO))"
)


def _python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _strings(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):  # f-strings: their literal parts
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
            found.append((node.lineno, text))
    return found


def test_sql_lives_only_in_corpus() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line}: {text.strip()[:60]}"
        for package in PRODUCT
        if package != "corpus"
        for path in _python_files(package)
        for line, text in _strings(path)
        if SQL.match(text)
    ]
    assert not outside, "SQL outside corpus/:\n" + "\n".join(outside)


def test_the_check_finds_sql_in_a_string() -> None:
    assert SQL.match("SELECT count(*) FROM papers") and SQL.match(" INSERT INTO users (x) VALUES (%s)")
    assert not SQL.match("Select the papers you want") and not SQL.match("set of papers")


def test_only_load_settings_builds_settings() -> None:
    builders = []
    for package in PRODUCT:
        for path in _python_files(package):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id == "Settings"
                    and path != ROOT / "ground" / "settings.py"
                ):
                    builders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not builders, "Settings built outside ground.settings.load_settings: " + ", ".join(builders)
