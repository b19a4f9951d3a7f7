"""Pin mcp-specgen's runtime to its own version (the one in `_version.py`).

pyproject.toml cannot name the project's version inside `dependencies`, so
this metadata hook writes them from the hook's configuration.
"""

from __future__ import annotations

from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface

RUNTIME = "mcp-specgen-runtime"


class RuntimePin(MetadataHookInterface):
    """Dependencies: the configured tools and the runtime at this version."""

    def update(self, metadata: dict[str, Any]) -> None:
        version = metadata["version"]
        tools: list[str] = list(self.config.get("dependencies", []))
        extras: list[str] = list(self.config.get("runtime-extras", []))
        always = ",".join(self.config.get("runtime-with", []))
        runtime = f"{RUNTIME}[{always}]" if always else RUNTIME
        metadata["dependencies"] = [f"{runtime}=={version}", *tools]
        metadata["optional-dependencies"] = {
            extra: [f"{RUNTIME}[{extra}]=={version}"] for extra in extras
        }
