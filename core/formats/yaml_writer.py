"""YAML written the way ADK writes its recordings and sessions (`dump_pydantic_to_yaml`): keys in
model order, strings holding a newline or a quote as `|` blocks, no line wrapping, Unicode kept,
sequences indented under their key."""

from __future__ import annotations

from typing import Any

import yaml


class _AdkStyleDumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> Any:
        return super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    if "\n" in data or '"' in data or "'" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_AdkStyleDumper.add_representer(str, _str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_AdkStyleDumper, indent=2, sort_keys=False, width=1_000_000, allow_unicode=True)
