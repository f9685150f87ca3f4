/* The diagnose page: hands the pasted or chosen log to a Web Worker and shows what matched.
   Log text is only ever put on the page as text (never as HTML). Works with Material's
   instant navigation: it wires itself up whenever a page with #fe-diagnose is shown. */
(function () {
  "use strict";

  var script = document.currentScript;
  var workerUrl = new URL("diagnose-worker.js", script.src).href;
  var signaturesUrl = new URL("../../api/signatures.json", script.src).href;
  var diagnoseUrl = new URL("../../api/diagnose.json", script.src).href;
  var searchUrl = new URL("../../api/search-index.json", script.src).href;
  var siteRoot = new URL("../../", script.src);
  var worker = null;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function highlighted(match) {
    var code = element("code", "fe-diagnose__line");
    code.appendChild(document.createTextNode(match.text.slice(0, match.start)));
    code.appendChild(element("mark", null, match.text.slice(match.start, match.end)));
    code.appendChild(document.createTextNode(match.text.slice(match.end)));
    return code;
  }

  function titleOf(results, id) {
    var found = results.find(function (result) { return result.id === id; });
    return found ? found.title : id;
  }

  function shared() { return window.FeShared; }  // shared.js: loaded after this script

  /* The results shown as items: a wrapper that reports another result is told under it. */
  function shownResults(results) {
    return results.filter(function (result) { return !result.reports; });
  }

  /* What a generic code or a launcher's summary means here (generator/roles.py). */
  function roleNotes(result, specific) {
    if (result.role === "umbrella") {
      if (specific) return [shared().umbrellaNote];
      var notes = [shared().umbrellaAlone];
      if (result.answer && result.answer.next) notes.push("Collect next: " + result.answer.next);
      return notes;
    }
    return result.role === "wrapper" ? [shared().wrapperAlone] : [];
  }

  function reporters(results, result) {
    return result.reportedBy.map(function (id) {
      var wrapper = results.find(function (other) { return other.id === id; });
      return shared().reportedBy + ": " + wrapper.title + " (line " + wrapper.first + ")";
    });
  }

  function ranksWord(ranks) {
    return ranks.length === 1 ? "rank " + ranks[0] : "ranks " + self.DiagnoseCulprit.ranges(ranks);
  }

  /* One result per entry; a line matched by several entries is shown under the first only. */
  function render(list, results, culprit) {
    list.textContent = "";
    var shown = new Set();
    var items = shownResults(results);
    var specific = items.some(function (result) { return result.role === "failure"; });
    items.forEach(function (result) {
      var item = element("li", "fe-diagnose__result");
      item.dataset.entry = result.id;
      var heading = element("p", "fe-diagnose__title");
      var link = element("a", null, result.title);
      link.href = new URL(result.url, siteRoot).href;
      heading.appendChild(link);
      heading.appendChild(document.createTextNode(" "));
      heading.appendChild(element("span", "fe-severity fe-severity--" + result.severity, result.severity));
      item.appendChild(heading);
      item.appendChild(element("p", "fe-diagnose__score",
        result.score + " signature" + (result.score === 1 ? "" : "s") + " matched, first on line " + result.first +
        (result.rank !== null ? ", rank " + result.rank : "")));
      roleNotes(result, specific).forEach(function (note) {
        item.appendChild(element("p", "fe-diagnose__role", note));
      });
      result.consequenceOf.forEach(function (cause) {
        if (result.reportedBy.indexOf(cause) >= 0) return;  // a wrapper: told as reporting this result
        item.appendChild(element("p", "fe-diagnose__consequence",
          "A consequence of “" + titleOf(results, cause) + "” above: fix that first."));
      });
      if (result.collateral && culprit && culprit.initiators.length) {
        item.appendChild(element("p", "fe-diagnose__collateral",
          "Collateral: seen only on other ranks than " + ranksWord(culprit.initiators) + ", which started it."));
      }
      if (result.answer) {
        item.appendChild(labelled("Quick answer", result.answer.summary, "fe-diagnose__answer"));
        item.appendChild(labelled("What to do", result.answer.fix, "fe-diagnose__fix"));
      }
      var fresh = result.matches.filter(function (match) { return !shown.has(match.line); });
      var lines = element("ul", "fe-diagnose__lines");
      fresh.slice(0, 5).forEach(function (match) {
        shown.add(match.line);
        var row = element("li");
        row.appendChild(element("span", "fe-diagnose__number", "line " + match.line + ": "));
        row.appendChild(highlighted(match));
        lines.appendChild(row);
      });
      if (fresh.length) item.appendChild(lines);
      reporters(results, result).forEach(function (note) {
        item.appendChild(element("p", "fe-diagnose__reported", note));
      });
      if (fresh.length < result.matches.length) {
        var again = result.matches.filter(function (match) { return fresh.indexOf(match) < 0; })
          .map(function (match) { return match.line; });
        item.appendChild(element("p", "fe-diagnose__again",
          "Also matched on line" + (again.length > 1 ? "s " : " ") + Array.from(new Set(again)).join(", ") +
          ", shown above."));
      }
      list.appendChild(item);
    });
  }

  /* No signature matched: the entries closest to the log's error lines, said to be only that. */
  function renderClosest(list, closest) {
    if (!closest.length) return;
    var heading = element("li", "fe-diagnose__closest-heading", shared().closestHeading + ":");
    list.appendChild(heading);
    closest.forEach(function (entry) {
      var item = element("li", "fe-diagnose__result fe-diagnose__result--closest");
      item.dataset.entry = entry.id;
      item.dataset.evidence = "closest";
      var title = element("p", "fe-diagnose__title");
      var link = element("a", null, entry.title);
      link.href = new URL("failures/" + entry.id + "/", siteRoot).href;
      title.appendChild(link);
      item.appendChild(title);
      item.appendChild(element("p", "fe-diagnose__score", "found from line " + entry.line + ": " + entry.text));
      if (entry.answer) item.appendChild(labelled("Quick answer", entry.answer.summary, "fe-diagnose__answer"));
      list.appendChild(item);
    });
  }

  /* Nothing matched and the log cannot show its failure: it stops inside a traceback (where, and
     what to paste next) or no line reports an error (where else to look): generator/incomplete.py. */
  function notice(incomplete) {
    return incomplete.kind === "traceback"
      ? { heading: shared().cutHeading, advice: shared().cutAdvice }
      : { heading: shared().noErrorHeading, advice: shared().noErrorAdvice };
  }

  function renderIncomplete(list, incomplete) {
    if (!incomplete) return;
    var item = element("li", "fe-diagnose__cut");
    item.dataset.cut = incomplete.kind;
    item.appendChild(element("p", "fe-diagnose__title", notice(incomplete).heading));
    if (incomplete.kind === "traceback") {
      item.appendChild(element("p", "fe-diagnose__score", "its last frame, line " + incomplete.line + ": " + incomplete.text));
    }
    item.appendChild(element("p", "fe-diagnose__answer", notice(incomplete).advice));
    list.appendChild(item);
  }

  function labelled(label, text, className) {
    var paragraph = element("p", className);
    paragraph.appendChild(element("strong", null, label + ": "));
    paragraph.appendChild(document.createTextNode(text));
    return paragraph;
  }

  /* The diagnosis as Markdown, for a bug report or a chat. */
  function asMarkdown(results, culprit, closest, incomplete) {
    var out = ["## Diagnosis", ""];
    if (!results.length && incomplete) {
      var where = incomplete.kind === "traceback" ? " (its last frame, line " + incomplete.line + ")" : "";
      out.push("No known failure signature found. " + notice(incomplete).heading + where + ". " +
               notice(incomplete).advice, "");
    }
    if (!results.length && closest.length) {
      out.push("No known failure signature found. " + shared().closestHeading + ":", "");
      closest.forEach(function (entry, index) {
        out.push((index + 1) + ". **[" + entry.title.replace(/[\[\]]/g, "") + "](" +
                 new URL("failures/" + entry.id + "/", siteRoot).href + ")**, found from line " + entry.line);
      });
      return out.join("\n") + "\n";
    }
    if (culprit) {
      var told = self.DiagnoseCulprit.culpritLines(culprit, results);
      out.push(told.first);
      told.rest.forEach(function (line) { out.push("   - " + line.replace(/`{3,}/g, "``")); });
      out.push("");
    }
    var items = shownResults(results);
    var specific = items.some(function (result) { return result.role === "failure"; });
    items.forEach(function (result, index) {
      out.push((index + 1) + ". **[" + result.title.replace(/[\[\]]/g, "") + "](" + new URL(result.url, siteRoot).href +
               ")** (" + result.severity + "), first on line " + result.first +
               (result.rank !== null ? ", rank " + result.rank : ""));
      roleNotes(result, specific).forEach(function (note) { out.push("   - " + note); });
      result.consequenceOf.forEach(function (cause) {
        if (result.reportedBy.indexOf(cause) < 0) out.push("   - A consequence of: " + titleOf(results, cause));
      });
      reporters(results, result).forEach(function (note) { out.push("   - " + note); });
      if (result.collateral && culprit && culprit.initiators.length) {
        out.push("   - Collateral: seen only on other ranks than " + ranksWord(culprit.initiators) + ", which started it.");
      }
      if (result.answer) {
        out.push("   - Quick answer: " + result.answer.summary.replace(/\s+/g, " "));
        out.push("   - What to do: " + result.answer.fix.replace(/\s+/g, " "));
      }
      out.push("   ```text");
      result.matches.slice(0, 3).forEach(function (match) {
        out.push("   line " + match.line + ": " + match.text.replace(/`{3,}/g, "``"));
      });
      out.push("   ```");
    });
    return out.join("\n") + "\n";
  }

  function setUp() {
    var root = document.getElementById("fe-diagnose");
    if (!root || root.dataset.ready) return;
    root.dataset.ready = "true";
    var form = document.getElementById("fe-diagnose-form");
    var text = document.getElementById("fe-log");
    var file = document.getElementById("fe-file");
    var drop = document.getElementById("fe-drop");
    var status = document.getElementById("fe-status");
    var progress = document.getElementById("fe-progress");
    var list = document.getElementById("fe-results");
    var summary = document.getElementById("fe-summary");
    var copy = document.getElementById("fe-copy");
    var clear = document.getElementById("fe-file-clear");
    var lastInput = "text";  // the input the reader used last wins: typed text or a chosen file
    var markdown = "";

    function run(message, description) {
      if (worker) worker.terminate();  // a new log replaces a scan still running
      worker = new Worker(workerUrl);
      message.signaturesUrl = signaturesUrl;
      message.diagnoseUrl = diagnoseUrl;
      message.searchUrl = searchUrl;
      summary.hidden = true;
      copy.hidden = true;
      status.textContent = "Scanning " + description + "…";
      progress.hidden = false;
      progress.value = 0;
      list.textContent = "";
      root.dataset.state = "running";
      worker.onmessage = function (event) {
        var data = event.data;
        if (data.type === "progress") {
          progress.value = data.fraction;
        } else if (data.type === "results") {
          progress.hidden = true;
          render(list, data.results, data.culprit);
          if (!data.results.length) renderIncomplete(list, data.incomplete);
          renderClosest(list, data.closest || []);
          var count = shownResults(data.results).length;
          status.textContent = count
            ? count + " matching failure" + (count === 1 ? "" : "s") + ", best first."
            : "No known failure signature found in this log.";
          showSummary(data.results, data.culprit);
          markdown = asMarkdown(data.results, data.culprit, data.closest || [], data.incomplete);
          copy.hidden = !data.results.length && !(data.closest || []).length && !data.incomplete;
          root.dataset.state = "done";
        } else {
          progress.hidden = true;
          status.textContent = "Could not diagnose this log: " + data.message;
          root.dataset.state = "error";
        }
      };
      worker.postMessage(message);
    }

    function showSummary(results, culprit) {
      summary.textContent = "";
      if (!culprit) return;
      var told = self.DiagnoseCulprit.culpritLines(culprit, results);
      summary.appendChild(element("strong", null, told.first));
      var details = element("ul", "fe-diagnose__culprit");
      told.rest.forEach(function (line) { details.appendChild(element("li", null, line)); });
      summary.appendChild(details);
      summary.hidden = false;
    }

    function showFile() {
      clear.hidden = !file.files.length;
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (file.files.length && (lastInput === "file" || !text.value.trim())) run({ file: file.files[0] }, file.files[0].name);
      else run({ text: text.value }, "the pasted log");
    });
    text.addEventListener("input", function () { lastInput = "text"; });
    file.addEventListener("change", function () {
      showFile();
      if (file.files.length) {
        lastInput = "file";
        run({ file: file.files[0] }, file.files[0].name);
      }
    });
    clear.addEventListener("click", function () {
      file.value = "";
      lastInput = "text";
      showFile();
      text.focus();
    });
    copy.addEventListener("click", function () {
      navigator.clipboard.writeText(markdown).then(function () {
        copy.textContent = "Copied";
        setTimeout(function () { copy.textContent = "Copy as Markdown"; }, 2000);
      }, function () {
        copy.textContent = "Copy failed: select the results and copy them";
      });
    });
    ["dragenter", "dragover"].forEach(function (name) {
      drop.addEventListener(name, function (event) { event.preventDefault(); drop.classList.add("fe-diagnose__drop--over"); });
    });
    ["dragleave", "drop"].forEach(function (name) {
      drop.addEventListener(name, function () { drop.classList.remove("fe-diagnose__drop--over"); });
    });
    drop.addEventListener("drop", function (event) {
      event.preventDefault();
      var dropped = event.dataTransfer && event.dataTransfer.files[0];
      if (dropped) {
        lastInput = "file";
        run({ file: dropped }, dropped.name);
      }
    });
  }

  if (typeof document$ !== "undefined") document$.subscribe(setUp);
  else document.addEventListener("DOMContentLoaded", setUp);
})();
