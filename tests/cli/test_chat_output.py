"""What `chatpapers chat` prints for a turn: an answer written without streamed tokens (the agent's
abstention when the corpus has nothing close) must still reach the terminal."""

from __future__ import annotations

import pytest

from agent.events import Final, Token
from chatpapers.commands.chat import _show


def test_an_answer_written_without_tokens_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    final = Final(answer="I could not find this in the corpus.", level="BSc", citations=[], abstained=True)
    assert _show(iter([final]), quiet=False) is final
    assert "chatpapers> I could not find this in the corpus." in capsys.readouterr().out


def test_a_streamed_answer_is_printed_once(capsys: pytest.CaptureFixture[str]) -> None:
    final = Final(answer="The Transformer.", level="BSc", citations=["1706.03762"])
    _show(iter([Token(text="The "), Token(text="Transformer."), final]), quiet=False)
    out = capsys.readouterr().out
    assert out.count("The Transformer.") == 1 and "cited: https://arxiv.org/abs/1706.03762" in out


def test_the_checked_answer_is_printed_not_the_draft(capsys: pytest.CaptureFixture[str]) -> None:
    # the model's draft cites its numbered sentences ("[3]") and may hold a sentence the check cut
    final = Final(answer="DocLayNet has 80,863 pages [1].", level="BSc", citations=["2206.01062"])
    tokens = [Token(text="DocLayNet has 80,863 pages [3]. "), Token(text="It was made by hand [5].")]
    _show(iter([*tokens, final]), quiet=False)
    out = capsys.readouterr().out
    assert "chatpapers> DocLayNet has 80,863 pages [1]." in out
    assert "[3]" not in out and "made by hand" not in out
