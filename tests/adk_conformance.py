"""ADK's own conformance record and replay, in process (the recipe of adk-formats.md §8).

The tests use these as the reference: recordings written by ADK's RecordingsPlugin, and the
verdict of ADK's ReplayPlugin with its event and session validators. It imports nothing of
agentdiff and runs on any ADK from 1.19 (feature-detected), so it also runs as a script in another
ADK version's environment:

    ENV/bin/python tests/adk_conformance.py record|replay AGENT_FILE CASE_DIR

prints `{"passed": …, "message": …}` for replay.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml


def _streaming(mode: str):
    from google.adk.agents.run_config import StreamingMode

    return StreamingMode.SSE if mode == "sse" else StreamingMode.NONE


def _message(spec_message: dict[str, Any]):
    from google.genai import types

    if spec_message.get("content"):
        return types.UserContent(**spec_message["content"])
    return types.UserContent(parts=[types.Part(text=spec_message["text"])])


async def _send_messages(runner, session, spec: dict, config_key: str, case_dir: Path, mode: str) -> None:
    """Send the spec's messages, each with the plugin's config for its index in the state delta."""
    from google.adk.agents.run_config import RunConfig

    for index, message in enumerate(spec.get("user_messages") or []):
        state_delta = dict(message.get("state_delta") or {})
        state_delta[config_key] = {"dir": str(case_dir), "user_message_index": index, "streaming_mode": mode}
        async for _ in runner.run_async(
            user_id=session.user_id,
            session_id=session.id,
            new_message=_message(message),
            state_delta=state_delta,
            run_config=RunConfig(streaming_mode=_streaming(mode)),
        ):
            pass


async def _record(agent, case_dir: Path, mode: str) -> None:
    from google.adk.cli.plugins.recordings_plugin import RecordingsPlugin
    from google.adk.runners import InMemoryRunner

    try:
        from google.adk.utils.yaml_utils import dump_pydantic_to_yaml
    except ImportError:  # ADK before 2.x kept it beside the plugins
        from google.adk.cli.plugins.yaml_utils import dump_pydantic_to_yaml

    spec = yaml.safe_load((case_dir / "spec.yaml").read_text())
    suffix = "-sse" if mode == "sse" else ""
    (case_dir / f"generated-recordings{suffix}.yaml").unlink(missing_ok=True)
    (case_dir / f"generated-session{suffix}.yaml").unlink(missing_ok=True)
    runner = InMemoryRunner(agent=agent, app_name=spec["agent"], plugins=[RecordingsPlugin()])
    session = await runner.session_service.create_session(
        app_name=spec["agent"], user_id="adk_conformance_test_user", state=spec.get("initial_state") or {}
    )
    await _send_messages(runner, session, spec, "_adk_recordings_config", case_dir, mode)
    final = await runner.session_service.get_session(app_name=spec["agent"], user_id=session.user_id, session_id=session.id)
    dump_pydantic_to_yaml(
        final,
        case_dir / f"generated-session{suffix}.yaml",
        sort_keys=False,
        exclude={
            "state": {"_adk_recordings_config": True},
            "events": {"__all__": {"actions": {"state_delta": {"_adk_recordings_config": True}}}},
        },
    )
    await runner.close()


def record_with_adk(agent, case_dir: Path, mode: str = "none") -> None:
    asyncio.run(_record(agent, case_dir, mode))


async def _replay(agent, case_dir: Path, mode: str) -> tuple[bool, str]:
    from google.adk.cli.conformance._generated_file_utils import load_recorded_session
    from google.adk.cli.conformance._replay_validators import (
        compare_events,
        compare_session,
    )
    from google.adk.cli.plugins.replay_plugin import ReplayPlugin
    from google.adk.runners import InMemoryRunner

    spec = yaml.safe_load((case_dir / "spec.yaml").read_text())
    runner = InMemoryRunner(agent=agent, app_name=spec["agent"], plugins=[ReplayPlugin()])
    session = await runner.session_service.create_session(
        app_name=spec["agent"], user_id="adk_conformance_test_user", state=spec.get("initial_state") or {}
    )
    try:
        await _send_messages(runner, session, spec, "_adk_replay_config", case_dir, mode)
    except Exception as exc:  # ReplayVerificationError and friends end the run, as in `adk conformance test`
        await runner.close()
        return False, f"Replay verification failed: {exc}"
    final = await runner.session_service.get_session(app_name=spec["agent"], user_id=session.user_id, session_id=session.id)
    import inspect

    takes_mode = len(inspect.signature(load_recorded_session).parameters) > 1  # recordings per streaming mode
    recorded = load_recorded_session(case_dir, _streaming(mode)) if takes_mode else load_recorded_session(case_dir)
    await runner.close()
    if recorded is None:
        return False, "No recorded session found for replay comparison"
    errors = []
    events = compare_events(final.events, recorded.events)
    if not events.success:
        errors.append(f"Event mismatch: {events.error_message}")
    state = compare_session(final, recorded)
    if not state.success:
        errors.append(f"Session mismatch: {state.error_message}")
    return not errors, "\n\n".join(errors)


def replay_with_adk(agent, case_dir: Path, mode: str = "none") -> tuple[bool, str]:
    """ADK's replay verdict for a recorded case: (passed, error message)."""
    return asyncio.run(_replay(agent, case_dir, mode))


if __name__ == "__main__":
    import importlib.util
    import json
    import logging
    import sys

    logging.disable(logging.CRITICAL)
    action, agent_file, case = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    spec = importlib.util.spec_from_file_location("reference_agent", agent_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if action == "record":
        record_with_adk(module.root_agent, case)
    else:
        passed, message = replay_with_adk(module.root_agent, case)
        print(json.dumps({"passed": passed, "message": message}))
