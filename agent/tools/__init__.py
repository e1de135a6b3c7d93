"""The seven ChatPapers tools, one typed unit each."""

from agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent.tools.context import PriorContext, SubsequentContext
from agent.tools.paper import AskPaperQuestion, FullPaperSummary, InformationFromPaper
from agent.tools.search import RecentPapers, Search

ALL_TOOLS: list[Tool] = [
    Search(),
    RecentPapers(),
    FullPaperSummary(),
    AskPaperQuestion(),
    InformationFromPaper(),
    PriorContext(),
    SubsequentContext(),
]
TOOLS_BY_NAME = {t.name: t for t in ALL_TOOLS}

__all__ = ["ALL_TOOLS", "TOOLS_BY_NAME", "Tool", "ToolContext", "ToolError", "ToolResult"]
