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
