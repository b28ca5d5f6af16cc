"""Imported once by the worker server before it forks any worker: the heavy imports (google.adk,
google.genai: about 1.5 s) and ADK's one-off lazy set-up (about 0.7 s on a first invocation) are paid
here, once, instead of in every run. Only ADK and this module are loaded; no agent code is, so a
worker never runs stale agent code.
"""

from __future__ import annotations

import asyncio


def _warm_up() -> None:
    try:
        from google.adk.agents import LlmAgent
        from google.adk.models.base_llm import BaseLlm
        from google.adk.models.llm_response import LlmResponse
        from google.adk.runners import InMemoryRunner
        from google.genai import types
    except ImportError:  # google-adk not installed: native agents still run
        return

    def ping(text: str) -> dict:
        """Answer a ping."""
        return {"text": text}

    class _Echo(BaseLlm):
        """Asks for one tool call, then answers: so the models a tool call makes (declarations, calls,
        responses), whose schemas pydantic builds on first use, are built here, not in every worker."""

        model: str = "agentdiff-warm-up"

        async def generate_content_async(self, llm_request, stream=False):
            if any(part.function_response for part in llm_request.contents[-1].parts or []):
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))
            else:
                call = types.FunctionCall(name="ping", args={"text": "hi"})
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(function_call=call)]))

    async def once() -> None:
        agent = LlmAgent(name="warm_up", model=_Echo(), instruction="warm up", tools=[ping])
        runner = InMemoryRunner(agent=agent, app_name="warm_up")
        session = await runner.session_service.create_session(app_name="warm_up", user_id="u")
        async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=types.Content(role="user", parts=[types.Part(text="hi")])):
            pass
        await runner.close()

    try:
        asyncio.run(once())
    except Exception:  # warming is an optimisation; a failure here must not stop the server
        pass
    try:  # what every run imports next: the loader of the agent's `.env` (python-dotenv with it)
        import google.adk.cli.utils.envs  # noqa: F401
    except ImportError:  # an ADK without it: runs load no `.env`
        pass


_warm_up()

# agentdiff's own worker modules, so a forked worker has nothing left to import but the agent
from . import adk_adapter, child, cloud_metrics, custom_metrics, genai_cache, harness, jobs, judge, native_adapter, replay_guard, trace_plugins, user_turns  # noqa: E402,F401

adk_adapter.adk_version()  # read once here: every forked worker inherits it
