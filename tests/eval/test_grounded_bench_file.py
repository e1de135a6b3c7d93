"""The grounded benchmark's answers file: a run over some cases keeps every other case's answers."""

from __future__ import annotations

from pathlib import Path

from bench.grounded import answer_resumably, answered_before
from eval.grounded.cases import load_cases
from eval.grounded.run import TurnScore


def _row(case_id: str, turn: int) -> str:
    return TurnScore(case_id=case_id, kind="single", turn=turn, question="q", gold=["x"]).model_dump_json()


def test_a_run_over_some_cases_keeps_the_answers_of_the_others(tmp_path: Path) -> None:
    cases = load_cases()
    conversation = next(c for c in cases if len(c.turns) > 1)
    single = next(c for c in cases if len(c.turns) == 1)
    turns_of = {c.id: len(c.turns) for c in cases}
    path = tmp_path / "answers.jsonl"
    whole = [_row(conversation.id, n) for n in range(1, len(conversation.turns) + 1)]
    path.write_text("\n".join([*whole, _row(single.id, 1), _row("cut-off", 1)]) + "\n")

    # every chosen case is in the file: nothing is answered, so no service is needed
    got = answer_resumably(None, [single], path, fresh=False, turns_of=turns_of)  # type: ignore[arg-type]

    assert [s.case_id for s in got] == [single.id]
    kept = answered_before(path, turns_of)
    assert set(kept) == {conversation.id, single.id}  # the case it did not choose is still there
    assert len(kept[conversation.id]) == len(conversation.turns)
    assert "cut-off" not in path.read_text()  # a case with none of its turns known is dropped
