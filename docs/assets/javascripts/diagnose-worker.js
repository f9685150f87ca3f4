/* Web Worker of the diagnose page: loads the signatures once, then matches each log sent to it.
   Everything stays in this browser tab: the log is never sent anywhere. */
"use strict";
importScripts("diagnose-matcher.js");

var matcherPromise = null;

function loadMatcher(signaturesUrl) {
  if (!matcherPromise) {
    matcherPromise = fetch(signaturesUrl)
      .then(function (response) {
        if (!response.ok) throw new Error("could not load the signatures (HTTP " + response.status + ")");
        return response.json();
      })
      .then(function (signatures) { return new self.DiagnoseMatcher.Matcher(signatures); });
  }
  return matcherPromise;
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
  Promise.all([loadMatcher(message.signaturesUrl), readText(message)])
    .then(function (loaded) {
      var matcher = loaded[0], text = loaded[1];
      var started = Date.now();
      var results = matcher.scan(text, function (fraction) {
        self.postMessage({ type: "progress", fraction: fraction });
      });
      self.postMessage({ type: "results", results: results, bytes: text.length, milliseconds: Date.now() - started });
    })
    .catch(function (error) {
      self.postMessage({ type: "error", message: String(error && error.message || error) });
    });
};
