"""The ML failure encyclopedia: YAML entries in, a cross-linked site out.

Data flows one way: `yaml_source` reads files, `models` and `validation` check
them, `loading` assembles the `Encyclopedia`, `rendering` turns it into
Markdown pages, and `mkdocs_plugin` (or `generate`) publishes those pages.
"""
