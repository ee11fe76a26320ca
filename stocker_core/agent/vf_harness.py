"""The harness the Stocker verifiers environment plays with by default: verifiers' own chat
program (the ``null`` harness's tool-calling loop: the model through the rollout's interception
endpoint, the task's MCP tools), run by this Python interpreter.

verifiers' ``null`` harness has ``uv`` sync the program's dependencies from the network into a
fresh interpreter; this interpreter already has them (openai, mcp, httpx, tenacity, certifi
come with verifiers), so the rollout runs offline. It runs on the ``subprocess`` runtime (the
host), which is where Stocker's data is.
"""

from __future__ import annotations

import json
import sys

import verifiers.v1 as vf
from verifiers.v1.dialects.chat import message_to_wire
from verifiers.v1.harnesses.null import NullHarness
from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE

__all__ = ["StockerChatHarness"]


class StockerChatHarness(NullHarness):
    """verifiers' chat program on this interpreter (see the module docstring); its config is
    the ``null`` harness's."""

    NEEDS_CONTAINER = False

    async def setup(self, runtime: vf.Runtime) -> None:
        """Nothing to install: the program's packages are this interpreter's."""

    async def launch(  # type: ignore[override]
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        """Run the chat program once: the task's prompt, the tools, replies until a text one."""
        system_prompt, prompt = self.resolve_prompt(data)
        script = f".vf-chat-{trace.id}.py"
        await runtime.write(script, CHAT_PROGRAM_SOURCE.encode())
        args = [f"--base-url={endpoint}", f"--api-key={secret}", f"--model={ctx.model}"]
        if tool_interception_url:
            args.append(f"--tool-interception-url={tool_interception_url}")
        if system_prompt:
            args.append(f"--system-prompt={system_prompt}")
        if mcp_urls:
            timeout = self.config.tool_timeout
            servers = {name: {"url": url, "timeout": timeout} for name, url in mcp_urls.items()}
            args.append("--mcp-config=" + json.dumps({"mcpServers": servers}))
        if isinstance(prompt, str):
            args.append(f"--prompt={prompt}")
        elif prompt is not None:
            messages = f".vf-initial-messages-{trace.id}.json"
            await runtime.write(messages, json.dumps([message_to_wire(m) for m in prompt]).encode())
            args.append(f"--initial-messages-file={messages}")
        return await runtime.run_program([sys.executable, script, *args], dict(self.config.resolved_env))
