"""The inbox in the terminal, over two nights of real ingest runs: the second night's run ends by
refreshing the user's inbox, and `chatpapers inbox` prints the new papers with their reasons."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from ground.settings import Settings
from tests.conftest import cli_env, run_cli, subset_folder

NIGHT_ONE = ["1706.03762v5.pdf", "1608.03417v1.pdf"]  # attention; bird sounds
NIGHT_TWO = ["1512.03385v1.pdf", "2010.11929v2.pdf", "1212.5701v1.pdf"]  # ResNet; ViT; ADADELTA


def _ok(done) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def test_two_nights_and_the_terminal_inbox(settings: Settings, tmp_path: Path) -> None:
    env = cli_env(settings)
    one, meta_one = subset_folder(tmp_path / "one", NIGHT_ONE)
    two, meta_two = subset_folder(tmp_path / "two", NIGHT_TWO)
    _ok(run_cli(env, "ingest", "--pdf-dir", str(one), "--metadata", str(meta_one), "--no-progress"))
    _ok(run_cli(env, "users", "add", "reader", "--password-stdin", input="correct horse battery\n"))
    _ok(run_cli(env, "inbox", "follow", "image classification", "--user", "reader"))
    rated = _ok(run_cli(env, "inbox", "rate", "arXiv:1608.03417v1", "down", "--user", "reader"))
    assert "1608.03417: 👎" in rated

    second = _ok(run_cli(env, "ingest", "--pdf-dir", str(two), "--metadata", str(meta_two), "--no-progress"))
    assert "inboxes: 1 user(s) refreshed" in second and "3 new paper(s) scored" in second, second

    shown = _ok(run_cli(env, "inbox", "--user", "reader", "--since", "2000-01-01"))
    assert "5 new paper(s)" in shown and "ranked by your topics" in shown, shown
    assert "near your topic “image classification”" in shown
    first_two = json.loads(_ok(run_cli(env, "inbox", "--user", "reader", "--since", "2000-01-01", "--json")))
    ids = [p["paper_id"] for p in first_two["papers"]]
    assert set(ids[:2]) == {"1512.03385", "2010.11929"} and ids[-1] in ("1608.03417", "1212.5701"), ids
    assert [p["rating"] for p in first_two["papers"] if p["paper_id"] == "1608.03417"] == [-1]

    # a 👍 makes a trained ranker; the terminal says so
    _ok(run_cli(env, "inbox", "rate", "2010.11929", "up", "--user", "reader"))
    trained = json.loads(_ok(run_cli(env, "inbox", "--user", "reader", "--since", "2000-01-01", "--json")))
    assert trained["ranked_by"] == "model" and trained["papers"][0]["paper_id"] == "2010.11929"

    # mistakes are one line, no traceback, and change nothing
    for args, says in (
        (("inbox", "--user", "nobody"), "no account named 'nobody'"),
        (("inbox", "rate", "2401.99999", "up", "--user", "reader"), "not in the corpus"),
        (("inbox", "rate", "2010.11929", "sideways", "--user", "reader"), "up, down or clear"),
        (("inbox", "follow", "  ", "--user", "reader"), "a topic is empty"),
    ):
        done = run_cli(env, *args)
        assert done.returncode != 0 and says in done.stderr and "Traceback" not in done.stderr, done.stderr

    # deleting the account forgets its interests
    _ok(run_cli(env, "users", "delete", "reader", "--yes"))
    with psycopg.connect(settings.database_url) as conn:
        left = conn.execute(
            "SELECT (SELECT count(*) FROM interest_topics) + (SELECT count(*) FROM paper_ratings)"
        )
        assert left.fetchone() == (0,)
