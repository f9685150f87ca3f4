/* The diagnose page: hands the pasted or chosen log to a Web Worker and shows what matched.
   Log text is only ever put on the page as text (never as HTML). Works with Material's
   instant navigation: it wires itself up whenever a page with #fe-diagnose is shown. */
(function () {
  "use strict";

  var script = document.currentScript;
  var workerUrl = new URL("diagnose-worker.js", script.src).href;
  var signaturesUrl = new URL("../../api/signatures.json", script.src).href;
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

  function render(list, results) {
    list.textContent = "";
    results.forEach(function (result) {
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
        result.score + " signature" + (result.score === 1 ? "" : "s") + " matched, first on line " + result.first));
      var lines = element("ul", "fe-diagnose__lines");
      result.matches.slice(0, 5).forEach(function (match) {
        var row = element("li");
        row.appendChild(element("span", "fe-diagnose__number", "line " + match.line + ": "));
        row.appendChild(highlighted(match));
        lines.appendChild(row);
      });
      item.appendChild(lines);
      list.appendChild(item);
    });
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

    function run(message, description) {
      if (worker) worker.terminate();  // a new log replaces a scan still running
      worker = new Worker(workerUrl);
      message.signaturesUrl = signaturesUrl;
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
          render(list, data.results);
          status.textContent = data.results.length
            ? data.results.length + " matching failure" + (data.results.length === 1 ? "" : "s") + ", best first."
            : "No known failure signature found in this log.";
          root.dataset.state = "done";
        } else {
          progress.hidden = true;
          status.textContent = "Could not diagnose this log: " + data.message;
          root.dataset.state = "error";
        }
      };
      worker.postMessage(message);
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (file.files.length) run({ file: file.files[0] }, file.files[0].name);
      else run({ text: text.value }, "the pasted log");
    });
    file.addEventListener("change", function () {
      if (file.files.length) run({ file: file.files[0] }, file.files[0].name);
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
      if (dropped) run({ file: dropped }, dropped.name);
    });
  }

  if (typeof document$ !== "undefined") document$.subscribe(setUp);
  else document.addEventListener("DOMContentLoaded", setUp);
})();
