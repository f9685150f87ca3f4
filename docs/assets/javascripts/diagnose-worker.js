/* Web Worker of the diagnose page: loads the signatures once, then matches each log sent to it.
   Everything stays in this browser tab: the log is never sent anywhere. */
"use strict";
importScripts("shared.js", "diagnose-culprit.js", "diagnose-matcher.js", "search.js");

var matcherPromise = null, searchPromise = null;

function loadJson(url) {
  return fetch(url).then(function (response) {
    if (!response.ok) throw new Error("could not load " + url.split("/").pop() + " (HTTP " + response.status + ")");
    return response.json();
  });
}

/* The signatures, and which entry causes which (a cause ranks above its effect). */
function loadMatcher(signaturesUrl, diagnoseUrl) {
  if (!matcherPromise) {
    matcherPromise = Promise.all([loadJson(signaturesUrl), loadJson(diagnoseUrl)]).then(function (loaded) {
      return { matcher: new self.DiagnoseMatcher.Matcher(loaded[0], loaded[1].causes), answers: loaded[1].answers };
    });
  }
  return matcherPromise;
}

/* The word search, read only when no signature matched (generator/closest.py). */
function closestEntries(searchUrl, errorLines) {
  if (!errorLines.length) return Promise.resolve([]);
  if (!searchPromise) searchPromise = loadJson(searchUrl);
  return searchPromise.then(function (index) { return self.FeSearch.closestEntries(index, errorLines); });
}

function readText(message) {
  if (typeof message.text === "string") return Promise.resolve(message.text);
  var file = message.file;
  return file.slice(0, 2).arrayBuffer().then(function (head) {
    var bytes = new Uint8Array(head);
    var gzipped = bytes.length === 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
    if (!gzipped) return file.text();
    if (typeof DecompressionStream === "undefined") throw new Error("this browser cannot open .gz files; unzip it first");
    return new Response(file.stream().pipeThrough(new DecompressionStream("gzip"))).text();
  });
}

self.onmessage = function (event) {
  var message = event.data;
  Promise.all([loadMatcher(message.signaturesUrl, message.diagnoseUrl), readText(message)])
    .then(function (loaded) {
      var matcher = loaded[0].matcher, answers = loaded[0].answers, text = loaded[1];
      var started = Date.now();
      var results = matcher.scan(text, function (fraction) {
        self.postMessage({ type: "progress", fraction: fraction });
      });
      results.forEach(function (result) { result.answer = answers[result.id] || null; });
      var closest = results.length ? Promise.resolve([]) : closestEntries(message.searchUrl, results.errorLines);
      return closest.then(function (found) {
        found.forEach(function (entry) { entry.answer = answers[entry.id] || null; });
        self.postMessage({ type: "results", results: results, culprit: results.culprit || null,
                           closest: found, incomplete: results.incomplete || null, bytes: text.length, milliseconds: Date.now() - started });
      });
    })
    .catch(function (error) {
      self.postMessage({ type: "error", message: String(error && error.message || error) });
    });
};
