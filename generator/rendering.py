"""Render the encyclopedia into Markdown pages through the Jinja templates in `templates/`."""

from __future__ import annotations

from pathlib import Path

import jinja2

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"


def environment(templates_dir: Path = TEMPLATES_DIR) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_scaffold(entry_id: str, schema_path: str) -> str:
    return environment().get_template("new-entry.yaml.j2").render(id=entry_id, schema_path=schema_path)
