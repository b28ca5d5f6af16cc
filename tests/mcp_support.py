"""`agentdiff mcp` driven by the `mcp` SDK's own client over stdio, for the MCP tests: every answer is
checked to be compact JSON text and the same object as its `structuredContent`."""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Optional

AGENTDIFF = str(Path(sys.executable).parent / "agentdiff")


@asynccontextmanager
async def mcp_session(root: Path, *args: str, name: str = "test-assistant", cwd: Optional[Path] = None):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp_types import Implementation

    params = StdioServerParameters(command=AGENTDIFF, args=["mcp", *args], cwd=str(cwd or root), env={"AGENTDIFF_NO_COLOR": "1"})
    with open(root / "server.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write, client_info=Implementation(name=name, version="1.0")) as session:
                call_session = await session.initialize()

                async def call(tool: str, progress=None, **arguments):
                    result = await session.call_tool(tool, arguments, progress_callback=progress)
                    text = result.content[0].text if result.content else ""
                    if result.is_error:
                        return "error", text
                    answer = json.loads(text)
                    assert result.structured_content == answer, (tool, text)  # typed: the same object, for clients that read it
                    assert text == json.dumps(answer, ensure_ascii=False, separators=(",", ":")), text[:200]  # compact: no indentation
                    return answer

                call.session = session  # type: ignore[attr-defined]
                call.initialized = call_session  # type: ignore[attr-defined]
                yield call
