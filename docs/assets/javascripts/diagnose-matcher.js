/* The diagnose page's matcher: the same rules and ranking as `python -m generator diagnose`.
   Runs in a Web Worker (diagnose-worker.js); also loadable on its own for tests.

   Lines are cut to 4,096 characters (code points); CRLF counts as a line end. Every
   signature with a "needle" (a literal each of its matches contains) is looked for with
   one Aho-Corasick pass over each line, and its regex runs only on lines holding the
   needle; the rare signature without one is tried on every line. Ranking: only entries
   that a primary (not supporting) signature matched, then distinct
   signatures matched, then the summed length of their patterns, then the earliest
   matching line, then the entry id. */
(function (root) {
  "use strict";

  var MAX_LINE_LENGTH = 4096;
  var MATCHES_KEPT = 10;

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&");
  }

  /* Read a line as a person would (generator/normalise.py, same rules, same order): ANSI
     codes and carriage returns dropped; backticks and runs of two or more "*" dropped;
     no-break spaces made spaces; a leading quote marker dropped; a run of blanks made one space. */
  var ANSI = /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b[@-Z\\-_]/g;
  var MARKUP = /`+|\*{2,}/g;
  var QUOTE = /^[ \t]*(?:>[ \t]?)+/;
  var BLANKS = / [ \t]+|\t[ \t]*/g;

  function normaliseText(text) {
    return text.replace(ANSI, "").replace(/\r/g, "").replace(MARKUP, "").replace(/\u00a0/g, " ")
      .replace(QUOTE, "").replace(BLANKS, " ");
  }

  /* A regex signature as it must read against normalised lines (normalise_regex in Python). */
  function normaliseRegex(pattern) {
    var out = "", i = 0, n = pattern.length;
    function blank() { if (out.charAt(out.length - 1) !== " " || out.length === 0) out += " "; }
    while (i < n) {
      var ch = pattern.charAt(i);
      if (ch === "\\" && i + 1 < n) {
        var pair = pattern.substr(i, 2);
        if (pair === "\\*" && pattern.substr(i, 4) === "\\*\\*") {
          while (pattern.substr(i, 2) === "\\*") i += 2;
          continue;
        }
        if (pair === "\\t") blank();
        else if (pair !== "\\`") out += pair;
        i += 2;
        continue;
      }
      if (ch === "[") {
        var end = classEnd(pattern, i);
        out += pattern.slice(i, end);
        i = end;
        continue;
      }
      if (ch === " " || ch === "\u00a0") blank();
      else if (ch !== "`") out += ch;
      i += 1;
    }
    return out;
  }

  function classEnd(pattern, start) {
    var i = start + 1;
    if (pattern.charAt(i) === "^") i += 1;
    if (pattern.charAt(i) === "]") i += 1;
    while (i < pattern.length) {
      if (pattern.charAt(i) === "\\") { i += 2; continue; }
      if (pattern.charAt(i) === "]") return i + 1;
      i += 1;
    }
    return pattern.length;
  }

  function codePoints(text) {
    return Array.from(text).length;
  }

  function cutLine(line) {
    if (line.length > MAX_LINE_LENGTH) line = Array.from(line).slice(0, MAX_LINE_LENGTH).join("");
    return line;
  }

  /* Aho-Corasick over the needles: goto tables as Maps, failure links, outputs. */
  function Automaton(needles) {
    this.next = [new Map()];
    this.fail = [0];
    this.out = [[]];
    var self = this;
    needles.forEach(function (needle, index) {
      var state = 0;
      for (var i = 0; i < needle.length; i++) {
        var ch = needle.charCodeAt(i);
        var target = self.next[state].get(ch);
        if (target === undefined) {
          target = self.next.length;
          self.next.push(new Map());
          self.fail.push(0);
          self.out.push([]);
          self.next[state].set(ch, target);
        }
        state = target;
      }
      self.out[state].push(index);
    });
    var queue = [];
    this.next[0].forEach(function (target) { queue.push(target); });
    for (var head = 0; head < queue.length; head++) {
      var state = queue[head];
      this.next[state].forEach(function (target, ch) {
        queue.push(target);
        var fallback = self.fail[state];
        while (fallback && !self.next[fallback].has(ch)) fallback = self.fail[fallback];
        var candidate = self.next[fallback].get(ch);
        self.fail[target] = candidate !== undefined && candidate !== target ? candidate : 0;
        self.out[target] = self.out[target].concat(self.out[self.fail[target]]);
      });
    }
  }

  /* The indexes of the needles found in `text`. */
  Automaton.prototype.search = function (text, found) {
    var state = 0, next = this.next, fail = this.fail, out = this.out;
    for (var i = 0; i < text.length; i++) {
      var ch = text.charCodeAt(i);
      var target = next[state].get(ch);
      while (target === undefined && state !== 0) {
        state = fail[state];
        target = next[state].get(ch);
      }
      state = target === undefined ? 0 : target;
      var hits = out[state];
      for (var h = 0; h < hits.length; h++) found.add(hits[h]);
    }
    return found;
  };

  /* The rank a line belongs to (generator/triage.py, same patterns, same order), or null. */
  var RANK_PATTERNS = [/\[(?:rank|Rank|RANK) ?([0-9]{1,6})\]/, /\[default([0-9]{1,6})\]:/,
                       /\b(?:rank|Rank|RANK) ?:? ?([0-9]{1,6})\b/, /\blocal_rank: ?([0-9]{1,6})/];

  function rankOf(line) {
    for (var i = 0; i < RANK_PATTERNS.length; i++) {
      var found = RANK_PATTERNS[i].exec(line);
      if (found) return Number(found[1]);
    }
    return null;
  }

  /* `causes`: [cause, effect] pairs of entry ids; a matched cause ranks above its matched effect. */
  function Matcher(signatures, causes) {
    this.causes = causes || [];
    this.signatures = [];
    this.always = [];  // signatures without a needle: tried on every line
    var needles = [], needleIndex = new Map(), byNeedle = [];
    var self = this;
    signatures.forEach(function (signature) {
      var source = signature.kind === "literal" ? escapeRegExp(normaliseText(signature.pattern))
        : normaliseRegex(signature.pattern);
      var regex;
      try {
        regex = new RegExp(source);
      } catch (error) {
        return;  // cannot happen for a validated corpus; never take the page down for it
      }
      var index = self.signatures.length;
      self.signatures.push({
        id: signature.id, title: signature.title, url: signature.url, severity: signature.severity,
        pattern: signature.pattern, regex: regex, length: codePoints(signature.pattern),
        supporting: !!signature.supporting,
      });
      if (signature.needle) {
        if (!needleIndex.has(signature.needle)) {
          needleIndex.set(signature.needle, needles.length);
          needles.push(signature.needle);
          byNeedle.push([]);
        }
        byNeedle[needleIndex.get(signature.needle)].push(index);
      } else {
        self.always.push(index);
      }
    });
    this.byNeedle = byNeedle;
    this.automaton = new Automaton(needles);
  }

  /* Match every line of `text`; `progress(fraction)` is called now and then. */
  Matcher.prototype.scan = function (text, progress) {
    var found = new Map();  // signature index -> matches
    var position = 0, lineNumber = 0, nextReport = 0;
    var needles = new Set();
    while (position < text.length) {
      var end = text.indexOf("\n", position);
      if (end < 0) end = text.length;
      var line = text.slice(position, end);
      lineNumber += 1;
      position = end + 1;
      line = cutLine(normaliseText(line));
      needles.clear();
      this.automaton.search(line, needles);
      var candidates = this.always.slice();
      needles.forEach(function (needle) { Array.prototype.push.apply(candidates, this.byNeedle[needle]); }, this);
      for (var c = 0; c < candidates.length; c++) {
        var index = candidates[c];
        var kept = found.get(index);
        if (kept && kept.length >= MATCHES_KEPT) continue;
        var match = this.signatures[index].regex.exec(line);
        if (!match) continue;
        if (!kept) found.set(index, kept = []);
        kept.push({ line: lineNumber, text: line, signature: index, start: match.index, end: match.index + match[0].length });
      }
      if (progress && position >= nextReport) {
        progress(Math.min(position / text.length, 1));
        nextReport = position + 1048576;
      }
    }
    return this.rank(found);
  };

  Matcher.prototype.rank = function (found) {
    var results = new Map(), signatures = this.signatures;
    found.forEach(function (matches, index) {
      var signature = signatures[index];
      var result = results.get(signature.id);
      if (!result) {
        result = { id: signature.id, title: signature.title, url: signature.url, severity: signature.severity,
                   score: 0, specificity: 0, first: Infinity, matches: [], primary: false };
        results.set(signature.id, result);
      }
      result.score += 1;
      if (!signature.supporting) {
        result.primary = true;
        if (!result.evidence) result.evidence = new Set();
        matches.forEach(function (match) { result.evidence.add(match.line); });
      }
      result.specificity += signature.length;
      result.first = Math.min(result.first, matches[0].line);
      matches.forEach(function (match) {
        result.matches.push({ line: match.line, text: match.text, signature: signature.pattern,
                              start: match.start, end: match.end, order: index });
      });
    });
    // Context lines (supporting signatures) never put an entry in the result on their own.
    var list = Array.from(results.values()).filter(function (result) { return result.primary; });
    list.forEach(function (result) {
      result.matches.sort(function (a, b) { return a.line - b.line || a.order - b.order; });
    });
    list.sort(function (a, b) {
      return b.score - a.score || b.specificity - a.specificity || a.first - b.first ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    });
    list = this.causesFirst(list);
    readRanks(list);
    return list;
  };

  /* The order above, changed only where a cause with evidence of its own would follow its effect
     (triage.py). */
  Matcher.prototype.causesFirst = function (list) {
    var matched = new Map(list.map(function (result) { return [result.id, result]; }));
    /* A cause moves only with evidence of its own: a primary match on a line its effect did not match. */
    function independent(cause, effect) {
      return Array.from(matched.get(cause).evidence).some(function (line) { return !matched.get(effect).evidence.has(line); });
    }
    var causesOf = new Map();
    this.causes.forEach(function (pair) {
      if (matched.has(pair[0]) && matched.has(pair[1]) && pair[0] !== pair[1] && independent(pair[0], pair[1])) {
        if (!causesOf.has(pair[1])) causesOf.set(pair[1], new Set());
        causesOf.get(pair[1]).add(pair[0]);
      }
    });
    var remaining = list.slice(), placed = new Set(), ordered = [];
    function free(result) {
      return Array.from(causesOf.get(result.id) || []).every(function (cause) { return placed.has(cause); });
    }
    while (remaining.length) {
      var index = remaining.findIndex(free);
      if (index < 0) index = 0;  // a cycle of causes: the best-ranked goes first
      var chosen = remaining.splice(index, 1)[0];
      chosen.consequenceOf = Array.from(causesOf.get(chosen.id) || []).sort();
      placed.add(chosen.id);
      ordered.push(chosen);
    }
    return ordered;
  };

  /* Each result's rank (of its first line naming one); the earliest such line overall is the
     rank that failed first, and results first seen on another rank after it are collateral. */
  function readRanks(list) {
    var earliest = null;
    list.forEach(function (result) {
      result.rank = null;
      result.collateral = false;
      result.matches.forEach(function (match) {
        match.rank = rankOf(match.text);
        if (match.rank === null) return;
        if (result.rank === null) { result.rank = match.rank; result.rankLine = match.line; }
        if (!earliest || match.line < earliest.line) earliest = match;
      });
    });
    list.firstFailure = earliest && { rank: earliest.rank, line: earliest.line, text: earliest.text };
    if (!earliest) return;
    list.forEach(function (result) {
      result.collateral = result.rank !== null && result.rank !== earliest.rank && result.rankLine > earliest.line;
    });
  }

  root.DiagnoseMatcher = { Matcher: Matcher, MAX_LINE_LENGTH: MAX_LINE_LENGTH, normaliseText: normaliseText,
                           normaliseRegex: normaliseRegex, rankOf: rankOf };
})(typeof self !== "undefined" ? self : this);
