"""The ReAct research agent over the corpus (tools, LLM providers, loop). Built in the agent issue."""
