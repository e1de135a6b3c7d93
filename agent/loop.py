"""The conversational, structured-input ReAct loop.

Each step is one JSON object (thought, then an action with arguments validated against that
tool's schema, or final_answer). Invalid output gets one repair attempt; tool errors become
observations; after `max_steps` the answer is forced from the evidence gathered so far. The final
answer is a separate, streamed generation that continues the same conversation (so a local model
reuses its cached prompt)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from functools import lru_cache, partial
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent import listing, prompts, reading, tracing
from agent.citations import number_citations, renumber, sources_line
from agent.coverage import declines, names, uncovered, undescribed, unnamed
from agent.events import (
    AgentEvent,
    ErrorEvent,
    Final,
    Grounding,
    LevelDecided,
    Source,
    StepFinished,
    StepStarted,
    Token,
)
from agent.grounding import Claim, attribute, beside_the_point, unsupported
from agent.grounding import check as grounding_check
from agent.level import decide_level
from agent.llm.base import ChatMessage, ChatModel, Completion, LLMError, Stopped
from agent.llm.bounds import bounded
from agent.llm.json_text import json_object
from agent.llm.stoppable import set_stop_switch
from agent.named import about_another, marked_by_name, named_papers, papers_called, titled
from agent.references import (
    ChatPaper,
    Resolved,
    asked_of_each,
    asked_of_one,
    asks_if_held,
    refers_back,
    resolve,
    restates,
    system_names,
    without_description,
)
from agent.revision import QUOTE_MIN_SIMILARITY, Revision, revise
from agent.streaming import streamed
from agent.tools import ALL_TOOLS, Tool, ToolContext, ToolError
from agent.tools.base import ToolResult, shorten
from agent.tools.paper import Passages
from agent.tools.search import PaperList
from agent.turn import TurnState
from corpus import papers
from corpus.ids import abs_url

CITABLE = 5  # papers listed for the answer to cite
SOURCES = 3  # papers named when an answer cites nothing itself
OBSERVATION_CHARS = 2400  # per step, what the model reads (each character costs prompt time)
ANSWER_TOKENS = 200  # about 20 s of generation on 2 cores
DIGEST_CHARS = 400  # per step, what events and the chat history keep
NARROW_TOKENS = 160  # 1-3 sentences, or a bullet per paper
MANY_PAPERS = 4  # papers a follow-up names that are read together
CANDIDATES = 3  # papers read for a question about one paper; the answer is written from one
# how much better another paper's sentences must score for it to be chosen over the search's first:
# the gold paper chosen for 80 of 82 single-paper first questions (the search's first alone: 77)
SWITCH_MARGIN = 0.05
# the paper just discussed, when only "it" points at it, gives way to a search's paper only when
# that one's sentences answer clearly better (a follow-up's own paper must not be lost)
WEAK_SWITCH_MARGIN = 0.2
_COMPARES = re.compile(r"\b(?:compare[sd]?|comparison|differ\w*|contrast|versus|vs\.?)\b", re.I)
# "compare" inside a question about one paper ("how did that compare with Schaul et al.?") is not a
# question over several: it takes a plural too
_SEVERAL = re.compile(r"\b(?:the\s+(?:two|three|four)|several|papers|studies|works|approaches)\b", re.I)
# "X and Y both ...", "both X and Y", "how does each one ...", "how well did it do in each?" ("each"
# alone is in many questions about one paper: "the loss assigned to each kind of column")
_EACH_ONE = r"\beach\s+(?:one|of\s+them)\b|\bin\s+each\s*\?"
# The pair is what its sentence is about, no comma before it: not "PaLM uses a 'parallel' block,
# with attention and MLP both applied to the same input" (read as a question over PaLM and Primer)
_EACH = re.compile(
    rf"(?:^|[.?!]\s+)(?:[^,;.?!]|\.(?=\S))*?(?:\band\b(?:[^,;.?!]|\.(?=\S)){{0,80}}\bboth\b|\bboth\b(?:[^?.]|\.(?=\S)){{0,80}}\band\b)|{_EACH_ONE}",
    re.I,
)


def compares(question: str) -> bool:
    return bool(_COMPARES.search(question))


def wants_many(question: str) -> bool:
    """A question over several papers: which papers do X, or how do papers compare."""
    if prompts.asks_for_papers(question) or _EACH.search(question):
        return True
    return bool(compares(question) and _SEVERAL.search(question))


# "which papers apply the Transformer, and to what kind of data?": more than which papers fit
_AND_ASKS = re.compile(r"\band\s+(?:(?:to|in|for|on)\s+)?(?:what|how|which|why|where|when|whom?)\b", re.I)


def lists_papers(question: str) -> bool:
    """A question that asks only which papers fit ("which papers here cover X?"), not how they
    compare or what each does: answered by agent.listing, without a model."""
    # "both" in a question that asks for papers describes what they cover ("What does the corpus
    # have on deep architectures for image classification, both convolutional and
    # transformer-based?" had been read as a question over several papers, and each paper's
    # bullet opened "The corpus has shown that ..." with a reason none of its sentences gave)
    more = compares(question) or re.search(_EACH_ONE, question, re.I) or _AND_ASKS.search(question)
    return prompts.asks_for_papers(question) and not more


def best_read(read: list[Passages], question: str = "", margin: float = SWITCH_MARGIN) -> Passages:
    """Of the search's first papers, read for a question about one paper, the one whose own
    sentences answer it: the paper the question names by its title, else the search's first
    unless another's are clearly better (the reader re-ranks by what it found inside; a listing
    ranks by title, abstract and best chunk)."""
    written = {p.paper_id for p in titled(question, [r.paper for r in read])}
    named = [r for r in read if r.paper.paper_id in written]
    if len(named) == 1:
        return named[0]
    best = read[0]
    for other in read[1:]:
        if reading.relevance(other.sentences) > reading.relevance(best.sentences) + margin:
            best = other
    return best


class Turn(BaseModel):
    user: str
    assistant: str


STEP_TEXT_CHARS = 300  # a thought, a query, a question: a step stays well inside its 256 tokens
STEP_ITEMS = 10


class Step(BaseModel):
    thought: str
    action: str
    action_input: dict[str, Any] = {}
    # the tool's own input model, validated once while parsing (None for final_answer)
    arguments: BaseModel | None = Field(default=None, exclude=True)


def step_schema(tools: list[Tool], allow_final: bool = True) -> dict:
    """One JSON schema for a step: any tool with its own argument schema, or (if allowed)
    final_answer. Shared between agents (cached): treat it as read-only."""
    return _step_schema(tuple((t.name, t.input_model) for t in tools), allow_final)


@lru_cache(maxsize=16)
def _step_schema(tools: tuple[tuple[str, type[BaseModel]], ...], allow_final: bool) -> dict:
    variants = []
    for name, input_model in tools:
        args = input_model.model_json_schema()
        args.pop("title", None)
        variants.append(_variant(name, args))
    if allow_final:
        variants.append(_variant(prompts.FINAL, {"type": "object", "properties": {}}))
    # Keys sorted, so a grammar-constrained model writes "action", then its arguments, then
    # "thought": the measured order. With the thought first the local 1.5B model reasoned itself
    # into whole-paper summaries far more often (one eval answer: 18 min instead of ~80 s).
    schema = json.loads(json.dumps({"anyOf": variants}, sort_keys=True))
    return bounded(schema, STEP_TEXT_CHARS, STEP_ITEMS)


def _variant(action: str, args: dict) -> dict:
    return {
        "type": "object",
        "properties": {"thought": {"type": "string"}, "action": {"const": action}, "action_input": args},
        "required": ["thought", "action", "action_input"],
    }


HISTORY_ANSWER_CHARS = 300
_LINKED_NUMBER = re.compile(r"\[\[(\d+)\]\]\(https?://[^)\s]+\)")


_SENTENCE_END = re.compile(r"[.!?](?:\s*\[\d+\])*(?=\s|$)")


class _RememberedQueries:
    """The embedder, with each text's query vector kept for the turn: a one-paper draft is checked
    against the passages read before the answer is, and each passage is encoded once, not twice."""

    def __init__(self, embedder: Any, state: TurnState) -> None:
        self._embedder = embedder
        self._vectors = state.query_vectors

    def embed_query(self, text: str) -> Any:
        if text not in self._vectors:
            self._vectors[text] = self._embedder.embed_query(text)
        return self._vectors[text]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)


def _whole_sentences(text: str) -> str:
    """An answer cut off by the token limit, without its unfinished last sentence."""
    ends = list(_SENTENCE_END.finditer(text))
    if not ends or ends[-1].end() < len(text) // 2:
        return text + "…"
    return text[: ends[-1].end()]


def _recalled(answer: str) -> str:
    """An earlier answer as the model rereads it: numbered links as bare [n], the sources list
    dropped, the length bounded. Every history token is read again on each later turn (on 2 cores,
    about 25 ms a token), who the numbers mean is told in the turn's context note, and the follow-up
    is about the passages the turn reads, not about the earlier wording."""
    text = _LINKED_NUMBER.sub(r"[\1]", answer).split("\n\nSources: ")[0]
    return shorten(text, HISTORY_ANSWER_CHARS)


class ResearchAgent:
    def __init__(
        self,
        model: ChatModel,
        ctx: ToolContext,
        tools: list[Tool] | None = None,
        max_steps: int = 6,
        level_instructions: bool = True,
        history_turns: int = 4,
        reader: str = "narrow",
    ) -> None:
        self.model = model
        # "narrow": code finds the paper(s) and the few sentences that answer, the model writes
        # 1-3 sentences from them; "agent": the model chooses tools step by step (ReAct).
        self.reader = reader
        self.ctx = ctx
        self.tools = tools or ALL_TOOLS
        self.by_name = {t.name: t for t in self.tools}
        self.max_steps = max_steps
        self.level_instructions = level_instructions
        self.history_turns = history_turns
        self.schema = step_schema(self.tools)

    # -- model calls ---------------------------------------------------------------------------
    def _call(self, state: TurnState, messages: list[ChatMessage], **kwargs: Any) -> Completion:
        completion = self.model.chat(messages, role="agent", **kwargs)
        state.count_tokens(completion.tokens_in, completion.tokens_out)
        return completion

    def _streamed(
        self,
        state: TurnState,
        messages: list[ChatMessage],
        stop: threading.Event | None,
        enough: Callable[[str], int | None] | None = None,
        **kwargs: Any,
    ) -> Generator[Token, None, Completion]:
        """Yield Token events while the model writes; `stop` ends it at the next token, `enough`
        where the text so far is long enough (agent.streaming)."""
        return streamed(
            lambda on_token: self._call(state, messages, on_token=on_token, **kwargs), stop, enough
        )

    def _parse(self, text: str) -> Step:
        """A valid step or ValueError saying what is wrong (read by the model on repair)."""
        try:
            raw = json.loads(json_object(text))
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON ({exc.msg})") from None
        try:
            step = Step.model_validate(raw)
        except ValidationError as exc:
            raise ValueError(f"missing or wrong fields ({exc.errors()[0]['msg']})") from None
        if step.action == prompts.FINAL:
            return step
        tool = self.by_name.get(step.action)
        if tool is None:
            raise ValueError(f"unknown action '{step.action}'")
        try:
            step.arguments = tool.input_model.model_validate(step.action_input)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ValueError(
                f"bad arguments for {tool.name}: {'.'.join(map(str, err['loc']))} {err['msg']}"
            ) from None
        step.action_input = step.arguments.model_dump(mode="json")
        return step

    def _next_step(
        self, state: TurnState, messages: list[ChatMessage], schema: dict, stop: threading.Event | None = None
    ) -> Step | None:
        """The model's next step, with one repair attempt; None if it cannot produce one. With a
        `stop` switch the step is generated token by token, so a stop ends it there (Stopped):
        a step can take tens of seconds on 2 cores."""
        watch = {"on_token": lambda _: _check(stop)} if stop is not None else {}
        completion = self._call(state, messages, json_schema=schema, max_tokens=256, **watch)
        try:
            return self._parse(completion.text)
        except ValueError as first:
            repair = [
                *messages,
                ChatMessage(role="assistant", content=completion.text),
                ChatMessage(role="user", content=prompts.repair_request(str(first))),
            ]
            completion = self._call(state, repair, json_schema=schema, max_tokens=256, **watch)
            try:
                return self._parse(completion.text)
            except ValueError:
                return None

    def _run_tool(self, tool: Tool, step: Step) -> tuple[str, bool, ToolResult | None]:
        try:
            result = tool.run(self.ctx, step.arguments)
        except ToolError as exc:
            return f"Error: {exc}", True, None
        except Exception as exc:  # a broken tool must not break the conversation
            return f"Error: the tool failed ({type(exc).__name__}: {exc}). Try another approach.", True, None
        return result.to_observation(), False, result

    # -- one turn ------------------------------------------------------------------------------
    def _plan(self, question: str, resolved: Resolved | None) -> list[Step]:
        """The turn's first step(s), decided in code: read the paper(s) a follow-up refers to,
        else search for the question. A 1.5B model chose these right most of the time but not
        always, and each choice costs it a generation."""
        if resolved:
            k = 4 if len(resolved.papers) == 1 else 3
            return [
                Step(
                    thought=f"The question refers to arXiv:{pid} ({resolved.how}); I read it.",
                    action="get_information_from_paper",
                    action_input={"paper_id": pid, "query": question[:300], "k": k},
                )
                for pid in resolved.papers[:2]
            ]
        return [
            Step(
                thought="I search the corpus for papers on the question.",
                action="search",
                action_input={"query": question[:300], "k": CITABLE},
            )
        ]

    def _act(
        self,
        state: TurnState,
        messages: list[ChatMessage],
        index: int,
        step: Step,
        stop: threading.Event | None,
    ) -> Iterator[AgentEvent]:
        """Run one step's tool: its events, its observation into the conversation and the state."""
        _check(stop)
        tool = self.by_name[step.action]
        if step.arguments is None:
            step.arguments = tool.input_model.model_validate(step.action_input)
        messages.append(ChatMessage(role="assistant", content=step.model_dump_json()))
        yield StepStarted(index=index, thought=step.thought, tool=step.action, arguments=step.action_input)
        started = time.perf_counter()
        with tracing.span(
            f"step {index}: {step.action}",
            **{
                "chatpapers.step.index": index,
                "chatpapers.tool.name": step.action,
                "chatpapers.step.thought": tracing.content(step.thought),
                "input.value": tracing.content(step.action_input),
            },
        ) as span:
            observation, error, result = self._run_tool(tool, step)
            tracing.set_attributes(
                span,
                **{
                    "chatpapers.tool.error": error,
                    "chatpapers.tool.observation_chars": len(observation),
                    "chatpapers.tool.passages": len(result.chunk_ids()) if result else 0,
                    "output.value": tracing.content(observation),
                },
            )
        read = shorten(observation, OBSERVATION_CHARS)
        if result is not None:
            state.record(result, tool.lists_papers, read)
            state.results.append(result)
        yield StepFinished(
            index=index,
            thought=step.thought,
            tool=step.action,
            arguments=step.action_input,
            observation=shorten(observation, DIGEST_CHARS),
            duration_ms=(time.perf_counter() - started) * 1000,
            error=error,
            chunk_ids=result.chunk_ids() if result else [],
        )
        messages.append(ChatMessage(role="user", content=f"Observation: {read}"))

    def run(
        self, question: str, history: list[Turn] | None = None, level: str | None = None,
        allowed: set[str] | None = None, earlier_passages: dict[str, str] | None = None,
        previous: list[ChatPaper] | None = None, focus: list[str] | None = None,
        chat_papers: list[ChatPaper] | None = None, stop: threading.Event | None = None,
    ) -> Iterator[AgentEvent]:  # fmt: skip
        """Events of one turn. `allowed`: papers citable from earlier turns; `earlier_passages`:
        where earlier citations pointed; `previous`: the previous answer's numbered sources and
        `focus` the paper(s) the previous turn was about (for "the second one", "that paper");
        `chat_papers`: every paper cited earlier in the chat (for "the scene classification
        paper" after a detour); `stop`: set by whoever stops the answer — the turn then ends
        with what was written (a final event marked stopped). The final event carries the
        turn's state."""
        set_stop_switch(stop)  # the model calls of tools and of the revision see it too
        level, reason, _ = decide_level(question, level, self.ctx.embedder)
        state = TurnState(
            level=level, allowed=set(allowed or ()), earlier_passages=dict(earlier_passages or {})
        )
        yield LevelDecided(level=level, reason=reason)
        previous = previous or []
        resolved = (
            resolve(
                question,
                previous,
                focus or [],
                self.ctx.embedder,
                chat_papers,
                self._words_held,
                self._papers_called,
            )
            if previous
            else None
        )
        besides: list[str] = []
        if resolved and self.reader == "narrow" and asks_if_held(question):
            # "That second paper builds on an older idea ... Is the original distillation paper in
            # the collection too?": the paper asked for is another than the one pointed back at
            besides, resolved = resolved.papers, None
        if resolved and resolved.pick_one and self.reader != "narrow":
            # several papers fit a description; only the narrow reader reads them all to choose
            resolved = resolved.model_copy(update={"papers": resolved.papers[:1], "pick_one": False})
        if resolved:
            state.focus = resolved.papers
            state.allowed.update(resolved.papers)
        numbered = {p.paper_id: p for p in previous}
        by_id = {p.paper_id: p for p in [*(chat_papers or []), *previous]}  # what earlier turns showed
        note = prompts.context_note(
            [(p.n, p.paper_id, p.title) for p in previous],
            [(numbered[p].n if p in numbered else None, p, by_id[p].title) for p in resolved.papers]
            if resolved
            else [],
            resolved.how if resolved else "",
        )

        # A question that only asks which papers fit is listed from the papers' abstracts
        # (agent.listing); one over several papers reads each of those it names, else each whose
        # abstract fits it (_several_turn); the rest is about one paper.
        if self.reader == "narrow" and resolved is None and lists_papers(question):
            yield from self._listing_turn(question, level, state, by_id, stop)
            return
        if self.reader == "narrow" and (resolved is not None or not wants_many(question)):
            asked_before = history[-1].user if history else ""
            yield from self._narrow_turn(
                question, level, state, resolved, by_id, stop, asked_before, besides=besides
            )
            return
        if self.reader == "narrow":
            yield from self._several_turn(question, level, state, by_id, stop)
            return
        messages = [
            ChatMessage(
                role="system",
                content=prompts.system_prompt(self.tools, level, self.max_steps, self.level_instructions),
            )
        ]
        earlier = prompts.earlier_turns(
            [(t.user, _recalled(t.assistant)) for t in (history or [])[-self.history_turns :]]
        )
        messages.append(ChatMessage(role="user", content=f"{earlier}{question}\n{note}".strip()))

        steps: list[StepFinished] = []
        forced = True
        try:
            planned = self._plan(question, resolved)
            for index, step in enumerate(planned):
                for event in self._act(state, messages, index, step, stop):
                    if isinstance(event, StepFinished):
                        steps.append(event)
                    yield event
            if not resolved:
                why = self._uncovered(question, state)
                if why:
                    yield self._abstention(state, level, steps, why)
                    return
            for index in range(len(planned), self.max_steps):
                _check(stop)
                step = self._next_step(state, messages, self.schema, stop)
                if step is None:
                    break
                if step.action == prompts.FINAL:
                    messages.append(ChatMessage(role="assistant", content=step.model_dump_json()))
                    forced = False
                    break
                for event in self._act(state, messages, index, step, stop):
                    if isinstance(event, StepFinished):
                        steps.append(event)
                    yield event
            _check(stop)
            sources = state.sources(CITABLE)
            request = prompts.answer_request(
                level,
                self.level_instructions,
                [(p, state.title(p)) for p in sources],
                listing=not resolved and prompts.asks_for_papers(question),
                question=question,
            )
            if forced and len(steps) >= self.max_steps:
                request = f"{prompts.STEP_CAP_NOTE} {request}"
            messages.append(ChatMessage(role="user", content=request))
            completion = yield from self._streamed(state, messages, stop, max_tokens=ANSWER_TOKENS)
        except LLMError as exc:
            yield ErrorEvent(message=str(exc))
            return
        except Stopped as stopped:
            yield self._stopped(state, level, steps, stopped.text, by_id)
            return
        yield self._final_unless_stopped(state, level, steps, completion, sources, question, forced, by_id)

    def _final_unless_stopped(
        self,
        state: TurnState,
        level: str,
        steps: list[StepFinished],
        completion: Completion,
        *args: Any,
        quote_from: list[str] | None = None,
    ) -> Final:
        """The final answer; stopped during its check or revision: the draft as written, marked."""
        try:
            return self._final(state, level, steps, completion, *args, quote_from=quote_from)
        except Stopped:
            return self._stopped(state, level, steps, completion.text, args[-1])

    def _final(
        self,
        state: TurnState,
        level: str,
        steps: list[StepFinished],
        completion: Completion,
        sources: list[str],
        question: str,
        forced: bool,
        by_id: dict[str, ChatPaper],
        quote_from: list[str] | None = None,
    ) -> Final:
        """The answer as shown: citations numbered, checked against the passages read, revised
        where no passage supports it, and the papers named when it cited none. `quote_from`: the
        papers a revision may quote (default: those cited, in focus, then read)."""
        text = completion.text.strip()
        if completion.cut:
            text = _whole_sentences(text)
        answer, cited, removed = number_citations(text, sources, state.allowed)
        draft, missing = unsupported(answer, state.evidence, self._remembered(state), question)
        revision = None
        if missing and not declines(answer):
            kept = 0 if beside_the_point(draft, missing, question) else len(draft) - len(missing)
            revision = revise(
                answer,
                missing,
                kept,
                state.quotable(quote_from or [*cited, *state.focus, *state.read]),
                "\n".join(state.evidence),
                question,
                self.ctx.embedder,
                state.title,
            )
        revised = revision.answer if revision else answer
        attributed = attribute(revised, state.quotable([]), self.ctx.embedder)
        if attributed != answer:
            answer, cited = renumber(attributed)
        if not cited and state.papers:
            # Small models often forget to cite: name the papers the answer was written from —
            # those read inside, else the best match of a listing.
            cited = (state.focus or state.read)[:SOURCES] or state.papers[:1]
            answer += "\n\n" + sources_line(cited, state.title)
        return Final(
            answer=answer,
            level=level,
            citations=cited,
            removed_citations=removed,
            passages=state.passages_for(cited),
            sources=self._sources(state, cited, by_id),
            grounding=self._grounding(answer, state, draft, missing, revision),
            abstained=declines(answer),
            steps=steps,
            tokens_in=state.tokens_in or None,
            tokens_out=state.tokens_out or None,
            forced=forced,
            state=state,
        )

    def _words_held(self, paper_ids: list[str], words: list[str]) -> dict[str, tuple[int, int]]:
        with self.ctx.connect() as conn:
            return papers.words_held(conn, paper_ids, words)

    def _named_elsewhere(self, question: str) -> bool:
        """Whether the question calls its paper by a name a paper of the corpus leads its title with."""
        names = system_names(question)
        return bool(names) and bool(self._papers_called(names))

    def _papers_called(self, names: list[str]) -> list[str]:
        with self.ctx.connect() as conn:
            return papers_called(conn, names)

    def _act_logged(
        self, state: TurnState, steps: list[StepFinished], step: Step, stop: threading.Event | None
    ) -> Iterator[AgentEvent]:
        """A step decided in code (no ReAct conversation to extend), its finished event kept."""
        for event in self._act(state, [], len(steps), step, stop):
            if isinstance(event, StepFinished):
                steps.append(event)
            yield event

    # -- the narrow reader -----------------------------------------------------------------------
    def _narrow_turn(
        self,
        question: str,
        level: str,
        state: TurnState,
        resolved: Resolved | None,
        by_id: dict[str, ChatPaper],
        stop: threading.Event | None,
        asked_before: str = "",
        steps: list[StepFinished] | None = None,
        besides: Sequence[str] = (),
    ) -> Iterator[AgentEvent]:
        """One turn read narrowly: find the paper(s) (search, or the earlier paper a follow-up
        means), read the sentences of each that answer the question, and have the model write
        from those alone — one bullet per paper when several are read. Every step is decided in
        code: the model is called once, with a prompt of a few hundred tokens. `steps`: those the
        turn already took (the search that found the papers `resolved` names); `besides`: papers
        the question asks for another than (it asks whether the corpus holds one)."""
        steps = [] if steps is None else steps
        many, kept = False, []
        unread: list[str] = []
        asked_names: list[str] = []
        style: str | None = None

        try:
            if resolved and not resolved.weak:
                to_read = resolved.papers[:MANY_PAPERS]
            elif resolved:
                # only "it" ties the question to the paper just discussed, and it may open a new
                # topic ("how much power does the strain sensor use?" was read in a dataset paper):
                # that paper first, then the search's first others; the best answering is kept
                yield from self._act_logged(state, steps, self._plan(question, None)[0], stop)
                to_read = list(dict.fromkeys([*resolved.papers, *state.papers]))[:CANDIDATES]
            else:
                # a follow-up no paper in play fits ("the finch study", "the third one" of two) is
                # searched with the question before it, which names the topic (the paper meant in
                # the search's first 3: 33 -> 35 of the benchmark's 40 follow-ups)
                # (not a question that names a paper of the corpus: "What does the ZeRO paper
                # partition ...?" was searched with the CiteSee question before it)
                back = (
                    asked_before and not besides and refers_back(question)
                    and not self._named_elsewhere(question)
                )  # fmt: skip
                query = f"{question} {asked_before}" if back else question
                yield from self._act_logged(state, steps, self._plan(query, None)[0], stop)
                why = self._uncovered(question, state)
                if why:
                    yield self._abstention(state, level, steps, why)
                    return
                to_read = [p for p in state.papers if p not in besides][:CANDIDATES]
                found = state.search_result()
                named = named_papers(question, found.papers) if found else []
                if len(named) >= 2:
                    # "how does Paper Plain's approach compare with CiteSee's?": about both
                    resolved = Resolved(papers=[p.paper_id for p in named][:MANY_PAPERS], how="named")
                    to_read = resolved.papers
            # several papers are read together when a follow-up or the question names them, or a
            # question over several chose them (_several_turn)
            many = resolved is not None and len(to_read) > 1 and not (resolved.pick_one or resolved.weak)
            asked = question
            if resolved and not many:
                # one paper known: the words that picked it ("the one from DeepMind") pick no sentence
                one = len(to_read) == 1 and not (resolved.pick_one or resolved.weak)
                if resolved.among:
                    asked = asked_of_each(question)
                else:
                    described = resolved.how == "described"
                    asked = reading.about_this_paper(
                        without_description(question, described) if one else question
                    )
            elif many:
                # each paper is asked its part of the question; how they differ, at the end
                asked = asked_of_one(question)
            if resolved and not resolved.among and asked_before and restates(question):
                # "say it again", "explain more simply": read for what was asked before
                asked = f"{asked_before} ({question})"
            read: list[Passages] = []
            for pid in to_read:
                yield from self._act_logged(
                    state,
                    steps,
                    Step(
                        thought=f"I read the sentences of arXiv:{pid} that answer the question.",
                        action="get_information_from_paper",
                        action_input={
                            "paper_id": pid,
                            "query": asked[:300],
                            "k": reading.PASSAGES,
                            "sentences": reading.LISTED_SENTENCES if many else reading.SENTENCES,
                            # a follow-up about a paper in play asks what its abstract claims
                            "abstract": reading.FOLLOW_UP_ABSTRACT_SENTENCES if resolved and not many else 0,
                        },
                    ),
                    stop,
                )
                result = state.results[-1] if state.results and not steps[-1].error else None
                if isinstance(result, Passages) and result.sentences:
                    read.append(result)
            if not read:
                yield self._abstention(state, level, steps, "none of the papers found has full text to read")
                return
            style = level if self.level_instructions else None
            if many:
                kept = read  # the papers the person named
                sources = [r.paper.paper_id for r in kept]
            else:
                margin = WEAK_SWITCH_MARGIN if resolved and resolved.weak else SWITCH_MARGIN
                if resolved and resolved.among:
                    margin = 0.0
                kept = [best_read(read, question, margin)]
                sources = [kept[0].paper.paper_id]
                system = reading.SINGLE_SYSTEM
                prompt = reading.single_paper_prompt(asked, kept[0].paper.title, kept[0].sentences, style)
            asked_names = names(question)
            unread = self._undescribed(asked_names, kept) if asked_names else []
            if unread and not many:
                # "Is the attention in FlashAttention an approximation?": RWKV's sentences on
                # attention scored above FlashAttention's own, and the answer said the paper read
                # does not describe FlashAttention; another paper read that describes every name
                # asked is the one to answer from
                describes = [r for r in read if r is not kept[0] and not self._undescribed(asked_names, [r])]
                if describes:
                    kept = describes[:1]
                    sources = [kept[0].paper.paper_id]
                    prompt = reading.single_paper_prompt(asked, kept[0].paper.title, kept[0].sentences, style)
                    unread = []
            if unread and resolved is None and len(unread) == len(asked_names):
                # the search found papers near the topic, none about what was asked: what they say
                # would be told as the asked thing's ("BERT uses ..." from OPT's warm-up). Their
                # sentences read are no sign: the reader picks those that name what was asked.
                why = f"the paper I read, {kept[0].paper.title}, does not describe {', '.join(unread)}"
                yield self._abstention(state, level, steps, why)
                return
            # the answer can say nothing of a name none of its sentences names either
            unread = unnamed(unread, [s.text for r in kept for s in r.sentences])
            chose = resolved is not None and (resolved.pick_one or resolved.weak)
            state.focus = sources if chose else state.focus or sources
            picked: list[int] = []
            if not many and reading.PICK_MODE != "off":
                picked = self._picked(state, asked, kept[0], stop)
                if picked and reading.PICK_MODE == "only":
                    chosen = [kept[0].sentences[k - 1] for k in picked]
                    kept = [kept[0].model_copy(update={"sentences": chosen})]
                    prompt = reading.single_paper_prompt(asked, kept[0].paper.title, kept[0].sentences, style)
                elif picked:
                    prompt = reading.hinted_prompt(prompt, picked)
            if many:
                compare = compares(question)
                completion = yield from self._paper_by_paper(
                    state, asked, kept, style, compare, stop, question
                )
            else:
                messages = [
                    ChatMessage(role="system", content=system),
                    ChatMessage(role="user", content=prompt),
                ]
                enough = partial(reading.past_answer_length, level=style, question=asked)
                completion = yield from self._streamed(
                    state, messages, stop, enough, max_tokens=NARROW_TOKENS
                )
            if not many and reading.only_echo(completion.text, style):
                # the 1.5B model now and then writes back the level line alone ("The user is a
                # graduate student (MSc) ..."), and the revision then quoted the sentences: asked
                # once more without it (the final answer replaces what was streamed)
                completion = yield from self._written_again(
                    state, asked, kept[0], kept[0].sentences, None, stop
                )
            if (
                not many
                and reading.PICK_MODE == "hint"
                and picked
                and reading.figures_not_pointed_at(completion.text, asked, kept[0].sentences, picked)
            ):
                # it wrote a figure that only a sentence it did not point at holds (9.0% from the
                # localization sentence for the ensemble's 3.57% top-5 error): written once more
                # from the sentences it pointed at alone, which replaces what was streamed, unless
                # those alone do not answer (its pick missed a sentence the first answer used)
                chosen = [kept[0].sentences[k - 1] for k in picked]
                again = yield from self._written_again(state, asked, kept[0], chosen, style, stop)
                if not declines(again.text):
                    completion = again
                    kept = [kept[0].model_copy(update={"sentences": chosen})]
            elif (
                not many
                and picked
                and not declines(completion.text)
                and self._holds_nothing(state, completion.text, question)
            ):
                # nothing it wrote holds in the passages (DPR against BM25: "a 22.3% improvement",
                # a figure it worked out, sank its one sentence), so the revision would answer with
                # quotes or that nothing close was found: written once more from the sentences it
                # pointed at alone, which replaces what was streamed when some of it holds and it
                # is as close to the question as a quote must be (two questions the corpus cannot
                # answer, on federated learning and on video compression, had been answered with
                # ADADELTA's and PonderNet's own sentences, at 0.19 and 0.36, instead of declined)
                chosen = [kept[0].sentences[k - 1] for k in picked]
                again = yield from self._written_again(state, asked, kept[0], chosen, style, stop)
                fits = reading.speaks_to(again.text, asked, kept[0].paper.title) and self._close_to(
                    state, again.text, [question, asked]
                )
                if fits and not declines(again.text) and not self._holds_nothing(state, again.text, question):
                    completion = again
                    kept = [kept[0].model_copy(update={"sentences": chosen})]
        except LLMError as exc:
            yield ErrorEvent(message=str(exc))
            return
        except Stopped as stopped:
            text = stopped.text if many or not kept else self._cite_paper(state, kept[0], stopped.text)
            yield self._stopped(state, level, steps, text, by_id)
            return
        if not many:  # an answer over several papers was cleaned bullet by bullet
            said = reading.by_name(
                reading.as_the_papers(reading.tidied(completion.text, style)), kept[0].paper.title
            )
            cited = self._cite_paper(state, kept[0], said)
            if resolved and resolved.among:
                # "which of these ...": which paper is the answer; the model, shown one, names none
                cited = f"{kept[0].paper.title} [1]: {cited}"
            elif asks_if_held(question):
                # "Is the original distillation paper in the collection?": the answer says which
                # paper it found (true whether or not it is the one meant), then what it read
                cited = f"The collection has {kept[0].paper.title} [1]. {cited}"
            completion = completion.model_copy(update={"text": cited})
        if unread and len(unread) < len(asked_names):
            # "how do DPR and RETRO differ?", RETRO not found: the answer says so, not just omits it
            lacking = f"\n\nThe papers I read do not describe {', '.join(unread)}."
            completion = completion.model_copy(update={"text": completion.text.rstrip() + lacking})
        # a one-paper answer is quoted, if at all, from that paper: not from the candidates read
        # beside it (the revision had quoted another read paper's table under a one-paper answer)
        quote_from = sources if not many else None
        yield self._final_unless_stopped(
            state, level, steps, completion, sources, question, False, by_id, quote_from=quote_from
        )

    def _paper_by_paper(
        self,
        state: TurnState,
        asked: str,
        read: list[Passages],
        level: str | None,
        compare: bool,
        stop: threading.Event | None,
        question: str = "",
    ) -> Generator[AgentEvent, None, Completion]:
        """An answer over several papers, read one by one (reading.one_of_several_prompt): a bullet
        per paper written from its own sentences alone and cited to it, then, when the question
        compares them, one sentence on how they differ written from the bullets. A paper whose
        sentences do not answer gets a line that says so, not a reason made up for it. `asked`:
        the question as asked of each paper (references.asked_of_one); `question`: as the person
        asked it, for how they differ (`asked` when not given)."""
        question = question or asked
        bullets: list[tuple[str, str]] = []
        lines: list[str] = []
        tokens_in = tokens_out = 0
        for n, r in enumerate(read, 1):
            title = r.paper.title or r.paper.paper_id
            head = f"- **{title}** [{n}]: "
            yield Token(text=("\n" if lines else "") + head)
            messages = [
                ChatMessage(role="system", content=reading.EACH_SYSTEM),
                ChatMessage(
                    role="user", content=reading.one_of_several_prompt(asked, title, r.sentences, level)
                ),
            ]
            enough = partial(reading.past_answer_length, n=reading.EACH_SENTENCES, level=level)
            try:
                written = yield from self._streamed(state, messages, stop, enough, max_tokens=NARROW_TOKENS)
            except Stopped as stopped:
                raise Stopped("\n".join([*lines, head + stopped.text])) from None
            tokens_in += written.tokens_in or 0
            tokens_out += written.tokens_out or 0
            text = reading.tidied(written.text, level)
            text = reading.without_the_question(text, asked, title)
            others = [o.paper for o in read if o is not r]
            text = reading.without_sentences(text, partial(about_another, own=r.paper, others=others))
            if declines(text) or not text:
                # said, not cited: the paper is no source of the answer
                lines.append(f"- **{title}**: the sentences I read of it do not answer this.")
                continue
            cited = reading.cited_sentences(text, r.sentences)
            if cited:
                state.read_passages[r.paper.paper_id] = cited[0].chunk_id
            text = reading.sentence_marks_to_paper(text, r.sentences, {r.paper.paper_id: n})
            if not re.search(rf"\[{n}\]", text):
                text = reading.with_mark(text, n)
            bullets.append((title, text))
            lines.append(head + text)
        if compare and len(bullets) > 1:
            yield Token(text="\n\n")
            messages = [
                ChatMessage(role="system", content=reading.MANY_SYSTEM),
                ChatMessage(role="user", content=reading.differ_prompt(question, bullets, level)),
            ]
            enough = partial(reading.past_answer_length, n=1, level=level)
            try:
                differ = yield from self._streamed(state, messages, stop, enough, max_tokens=NARROW_TOKENS)
            except Stopped as stopped:
                raise Stopped("\n".join(lines) + "\n\n" + stopped.text) from None
            tokens_in += differ.tokens_in or 0
            tokens_out += differ.tokens_out or 0
            # a mark it copied from the bullets is no source: the papers it names are cited
            said = reading.without_marks(reading.without_echo(differ.text, level))
            # one bullet said again says nothing of how they differ, and the 1.5B model put it
            # as both papers' ("Both PaLM and OPT observed spikes in the loss roughly 20 times")
            if (
                said
                and not declines(said)
                and not reading.repeats(said, [t for _, t in bullets])
                and not reading.only_the_question(said, question, [r.paper.title or "" for r in read])
            ):
                # the sentence names the papers; each one it names is cited
                lines.append("\n" + marked_by_name(said, [r.paper for r in read]))
        return Completion(text="\n".join(lines), tokens_in=tokens_in or None, tokens_out=tokens_out or None)

    def _remembered(self, state: TurnState) -> _RememberedQueries:
        """The embedder, remembering the turn's query vectors (each text encoded once a turn)."""
        return _RememberedQueries(self.ctx.embedder, state)

    def _holds_nothing(self, state: TurnState, text: str, question: str) -> bool:
        """Whether no sentence of a draft (its sentence marks aside) is supported by the passages
        read, as the final check will judge it."""
        claims, missing = unsupported(
            reading.without_marks(text), state.evidence, self._remembered(state), question
        )
        return bool(claims) and len(missing) == len(claims)

    def _close_to(self, state: TurnState, text: str, questions: list[str]) -> bool:
        """Whether an answer is as close in meaning to (one wording of) the question as a sentence
        quoted for it must be (MiniLM cosine)."""
        remembered = self._remembered(state)
        said = remembered.embed_query(reading.without_marks(text))
        return any(float(remembered.embed_query(q) @ said) >= QUOTE_MIN_SIMILARITY for q in questions)

    def _written_again(
        self,
        state: TurnState,
        asked: str,
        read: Passages,
        sentences: list[reading.Sentence],
        level: str | None,
        stop: threading.Event | None,
    ) -> Generator[AgentEvent, None, Completion]:
        """A one-paper answer asked for once more, from `sentences` of `read` and for `level`;
        what it streams replaces the answer streamed before."""
        prompt = reading.single_paper_prompt(asked, read.paper.title, sentences, level)
        messages = [
            ChatMessage(role="system", content=reading.SINGLE_SYSTEM),
            ChatMessage(role="user", content=prompt),
        ]
        enough = partial(reading.past_answer_length, level=level, question=asked)
        return (yield from self._streamed(state, messages, stop, enough, max_tokens=NARROW_TOKENS))

    def _picked(
        self, state: TurnState, asked: str, read: Passages, stop: threading.Event | None
    ) -> list[int]:
        """The numbers of the read sentences that state the answer, best first, as the model
        points at them in a short grammar-bound call; [] when it points at none. Shown eight
        sentences, the 1.5B model often wrote the wrong one of several numbers (146 for 74 tasks,
        9.0% for 3.57%); pointing first and then writing from what it pointed at is two easy
        steps in place of one hard one."""
        if len(read.sentences) <= 1:
            return []
        prompt = reading.pick_prompt(asked, read.paper.title, read.sentences)
        messages = [
            ChatMessage(role="system", content=reading.SINGLE_SYSTEM),
            ChatMessage(role="user", content=prompt),
        ]
        watch = {"on_token": lambda _: _check(stop)} if stop is not None else {}
        try:
            completion = self._call(
                state, messages, json_schema=reading.pick_schema(len(read.sentences)), max_tokens=24, **watch
            )
        except Stopped:
            raise Stopped("") from None  # nothing of the answer was written yet
        return reading.picked_sentences(completion.text, len(read.sentences))

    def _searched(
        self,
        question: str,
        level: str,
        state: TurnState,
        steps: list[StepFinished],
        stop: threading.Event | None,
    ) -> Generator[AgentEvent, None, PaperList | None]:
        """The search for a question about which papers fit; None, after the abstention that
        says why, when it failed or the corpus does not cover the question."""
        yield from self._act_logged(state, steps, self._plan(question, None)[0], stop)
        found = state.search_result()
        why = "the search failed" if found is None else self._uncovered(question, state)
        if why or found is None:
            yield self._abstention(state, level, steps, why or "the search failed")
            return None
        return found

    def _several_turn(
        self,
        question: str,
        level: str,
        state: TurnState,
        by_id: dict[str, ChatPaper],
        stop: threading.Event | None,
    ) -> Iterator[AgentEvent]:
        """A question over several papers ("Both PaLM and OPT hit loss spikes: how did each team
        handle them?", "which papers work with jackdaw recordings, and how do their aims differ?"):
        of the search's papers, those it names, else those whose abstracts fit it (agent.listing),
        each read narrowly; one bullet per paper from its own sentences. The step-by-step agent,
        given the same five papers, mostly answered from one of them, often not one asked about."""
        steps: list[StepFinished] = []
        found = yield from self._searched(question, level, state, steps, stop)
        if found is None:
            return
        named = named_papers(question, found.papers)
        if len(named) >= 2:
            chosen, how = named, "the papers the question names"
        else:
            # which papers fit, weighed on what they must be about: "how do their aims differ"
            # is in no abstract (the Transformer and ViT fell under the listing's floor with it)
            asked = _AND_ASKS.search(question)
            topic = question[: asked.start()] if asked else question
            weighed = listing.weigh(topic, found.papers, found.scores, self.ctx.embedder)
            chosen, how = [x.paper for x in listing.keep(weighed)], "the papers whose abstracts fit"
            if not prompts.asks_for_papers(question):
                # papers described, not asked for ("both the memory-augmented learner and the
                # shape-bias study ..."): the search's first two are read too
                first = {p.paper_id for p in [*chosen, *found.papers[:2]]}
                chosen = [p for p in found.papers if p.paper_id in first]
        if not chosen:
            yield self._abstention(state, level, steps, "no paper the search found says it is about this")
            return
        resolved = Resolved(papers=[p.paper_id for p in chosen][:MANY_PAPERS], how=how)
        yield from self._narrow_turn(question, level, state, resolved, by_id, stop, steps=steps)

    def _listing_turn(
        self,
        question: str,
        level: str,
        state: TurnState,
        by_id: dict[str, ChatPaper],
        stop: threading.Event | None,
    ) -> Iterator[AgentEvent]:
        """Which papers fit: the search's papers whose own abstracts answer the question, each
        with that sentence (agent.listing). No model call: a second or two instead of 35-78 s."""
        steps: list[StepFinished] = []
        found = yield from self._searched(question, level, state, steps, stop)
        if found is None:
            return
        weighed = listing.weigh(question, found.papers, found.scores, self.ctx.embedder)
        kept = listing.keep(weighed)
        if not kept:
            yield self._abstention(state, level, steps, "no paper the search found says it is about this")
            return
        cited = [x.paper.paper_id for x in kept]
        answer = listing.listing_answer(kept, dropped=len(weighed) - len(kept))
        # what the answer states is the papers' own sentences (its framing lines are not claims)
        quoted = " ".join(x.sentence for x in kept if x.sentence)
        shown = grounding_check(quoted, [listing.abstract_text(x.paper) for x in kept], self.ctx.embedder)
        yield Final(
            answer=answer,
            level=level,
            citations=cited,
            passages=state.passages_for(cited),
            sources=self._sources(state, cited, by_id),
            # the answer is the papers' own sentences: the model wrote nothing to check
            grounding=shown.model_copy(update={"draft_checked": 0, "draft_supported": 0}),
            steps=steps,
            state=state,
        )

    @staticmethod
    def _cite_paper(state: TurnState, read: Passages, text: str) -> str:
        """A single-paper answer cites sentences ([2]); shown, it cites the paper ([1]), and the
        source card points at the passage of the first sentence cited."""
        cited = reading.cited_sentences(text, read.sentences)
        if cited:
            state.read_passages[read.paper.paper_id] = cited[0].chunk_id
        return reading.sentence_marks_to_paper(text, read.sentences, {read.paper.paper_id: 1})

    def _grounding(
        self,
        answer: str,
        state: TurnState,
        draft: list[Claim],
        missing: list[Claim],
        revision: Revision | None,
    ) -> Grounding:
        """The check of the answer as shown, with what the revision of the draft left out."""
        checked, supported = len(draft), len(draft) - len(missing)
        if revision is None or not revision.left_out:
            return Grounding(checked=checked, supported=supported, unsupported=[c.text for c in missing])
        shown = grounding_check(answer, state.evidence, self.ctx.embedder)
        return shown.model_copy(
            update={
                "left_out": revision.left_out,
                "quoted": revision.quoted,
                "draft_checked": checked,
                "draft_supported": supported,
            }
        )

    def _undescribed(self, asked: list[str], read: list[Passages]) -> list[str]:
        """Of the names asked about, those none of the papers read describes (each paper's full
        text read at most once, and only for a name its front matter lacks)."""
        texts: dict[str, str] = {}
        with self.ctx.connect() as conn:

            def full_text(paper_id: str) -> str:
                if paper_id not in texts:
                    texts[paper_id] = " ".join(text for _, _, text in papers.chunk_texts(conn, paper_id))
                return texts[paper_id]

            return undescribed(asked, [r.paper for r in read], full_text)

    def _uncovered(self, question: str, state: TurnState) -> str | None:
        listing = state.search_result()
        if listing is None:
            return None
        best = max(listing.scores, default=0.0)
        return uncovered(question, listing.paper_ids(), best, self.ctx.connect)

    def _abstention(self, state: TurnState, level: str, steps: list[StepFinished], why: str) -> Final:
        """The answer when the corpus does not cover the question: says so, lists the closest
        papers, and makes nothing up (no model call at all)."""
        closest = state.papers[:3]
        lines = [f"I could not find this in the corpus: {why}, so I cannot answer it from the papers here."]
        if closest:
            lines.append("The closest papers are:")
            lines += [f"- [{state.title(p) or p}]({abs_url(p)})" for p in closest]
        return Final(
            answer="\n".join(lines),
            level=level,
            citations=[],
            steps=steps,
            abstained=True,
            forced=False,
            state=state,
        )

    def _stopped(
        self,
        state: TurnState,
        level: str,
        steps: list[StepFinished],
        text: str,
        earlier: dict[str, ChatPaper],
    ) -> Final:
        """What had been written when the person stopped, its citations numbered as usual; no
        grounding check or revision (whoever stops wants the answer now, and it is unfinished)."""
        answer, cited, removed = number_citations(text.strip(), state.sources(CITABLE), state.allowed)
        return Final(
            answer=answer,
            level=level,
            citations=cited,
            removed_citations=removed,
            passages=state.passages_for(cited),
            sources=self._sources(state, cited, earlier),
            steps=steps,
            tokens_in=state.tokens_in or None,
            tokens_out=state.tokens_out or None,
            stopped=True,
            state=state,
        )

    @staticmethod
    def _sources(state: TurnState, cited: list[str], earlier: dict[str, ChatPaper]) -> list[Source]:
        cards = []
        passages = state.passages_for(cited)
        for n, pid in enumerate(cited, 1):
            record = state.records.get(pid)
            before = earlier.get(pid)
            published = record.published if record else None
            cards.append(
                Source(
                    n=n,
                    paper_id=pid,
                    title=record.title if record else (before.title if before else pid),
                    authors=record.authors if record else (before.authors if before else []),
                    year=published.year if published else (before.year if before else None),
                    url=abs_url(pid),
                    passage=passages.get(pid),
                )
            )
        return cards


def _check(stop: threading.Event | None) -> None:
    """Between steps: a stopped answer goes no further."""
    if stop is not None and stop.is_set():
        raise Stopped
