"""A 404 page that works wherever the site is deployed.

A host serves `404.html` for any missing address, at any depth, so its links can be
neither relative (they would resolve against the missing address) nor absolute with
the configured path (they break when the site is served under another path: a fork's
GitHub Pages, a preview, a mirror). The page's own links are made relative and a
small script, first in `<head>`, finds the site's root before anything loads: the
configured path if the address is under it, else the shortest leading part of the
address under which the site's stylesheet exists. It then sets `<base>`, and points
the theme's configuration at the same root.
"""

from __future__ import annotations

import json
import re

MARK = "data-fe-relocatable"  # on the root-finding script: the page is rewritten already
_ROOT_SCRIPT = """<script data-fe-relocatable>
(function () {
  var configured = %(configured)s, marker = "assets/stylesheets/encyclopedia.css";
  function exists(prefix) {
    try {
      var request = new XMLHttpRequest();
      request.open("HEAD", prefix + marker, false);  /* before any link of the page loads */
      request.send();
      return request.status === 200;
    } catch (error) { return false; }
  }
  var path = location.pathname, root = null;
  if (path.indexOf(configured) === 0) root = configured;
  var parts = path.split("/");
  for (var i = 1; root === null && i < parts.length; i++) {
    var prefix = parts.slice(0, i).join("/") + "/";
    if (exists(prefix)) root = prefix;
  }
  var base = document.createElement("base");
  base.href = root || "/";
  document.head.appendChild(base);
})();
</script>"""

_CONFIG_SCRIPT = """<script>
(function () {
  var element = document.getElementById("__config"), config = JSON.parse(element.textContent);
  config.base = document.baseURI;
  element.textContent = JSON.stringify(config);
})();
</script>"""


def relocatable_404(html: str, base_path: str) -> str:
    """The theme's rendering of 404.html (`base_path`: the path its absolute links start with,
    such as "/encyclopedia/") made to work under any deployment path. A page rewritten already
    comes back as it is."""
    if MARK in html:
        return html
    base_path = "/" + base_path.strip("/") + "/" if base_path.strip("/") else "/"
    prefix = re.escape(base_path)
    html = re.sub(rf'(\s(?:href|src)=")({prefix})(?!/)', r"\1", html)
    html = re.sub(rf'("(?:base|search)": ")({prefix})', r"\1", html)
    html = html.replace('href="."', 'href="./"')
    root_script = _ROOT_SCRIPT % {"configured": json.dumps(base_path)}
    html, found = re.subn(r"(<meta charset=[^>]*>)", lambda match: match.group(1) + root_script, html, count=1)
    if not found:
        html = html.replace("<head>", "<head>" + root_script, 1)
    return re.sub(
        r'(<script id="__config"[^>]*>.*?</script>)',
        lambda match: match.group(1) + _CONFIG_SCRIPT,
        html,
        count=1,
        flags=re.S,
    )
