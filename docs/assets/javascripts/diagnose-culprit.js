/* The diagnose page's culprit finder: which rank started a multi-rank failure, by the same line
   rules and the same decisions as `mlfail diagnose` (generator/rank_lines.py, generator/culprit.py;
   the rules and words come from shared.js). A pasted log is one input: ranks come from the lines'
   prefixes only (no file paths, no Flight Recorder dumps, no node reports on the page). */
(function (root) {
  "use strict";

  var shared = root.FeShared;
  var RULES = shared.rankLines.map(function (rule) {
    return { name: rule.name, means: rule.means, regex: new RegExp(rule.pattern) };
  });
  var EVIDENCE = new RegExp(shared.evidenceLine), PROGRESS = new RegExp(shared.progressLine);
  var TIMESTAMPS = shared.timestamps.map(function (pattern) { return new RegExp(pattern); });
  var RANK_PATTERNS = shared.rankPatterns.map(function (pattern) { return new RegExp(pattern); });
  var LOCAL_PREFIX = new RegExp(shared.localPrefix), NCCL_PREFIX = new RegExp(shared.ncclPrefix);
  var SIGNAL = new RegExp(shared.signalPattern);
  var STOP_SIGNALS = new Set(shared.stopSignals), LAUNCHER_RULES = new Set(shared.launcherRules);
  var AT_ONCE = shared.atOnce, MIN_COMPARED = shared.minCompared;

  /* The lines the matcher keeps for the finder: the first and last evidence lines, the last
     progress lines (the same budgets as the command line's taps). */
  function Keeper() { this.evidence = []; this.progress = []; this.evidenceCount = 0; }
  Keeper.prototype.add = function (lineNumber, text) {
    if (EVIDENCE.test(text)) {
      if (this.evidence.length >= 2 * shared.evidenceKept) this.evidence.splice(shared.evidenceKept, 1);
      this.evidence.push({ line: lineNumber, text: text });
    } else if (PROGRESS.test(text)) {
      if (this.progress.length >= shared.progressKept) this.progress.shift();
      this.progress.push({ line: lineNumber, text: text });
    }
  };
  Keeper.prototype.lines = function () {
    return this.evidence.concat(this.progress).sort(function (a, b) { return a.line - b.line; });
  };

  var LAUNCHER_EXCEPTION = new RegExp(shared.launcherException);

  function readLine(text) {
    for (var i = 0; i < RULES.length; i++) {
      var found = RULES[i].regex.exec(text);
      if (!found) continue;
      if (RULES[i].means === "own-failure" && LAUNCHER_EXCEPTION.test(text)) return null;
      return { rule: RULES[i], found: found };
    }
    return null;
  }

  /* `year`: the year of glog lines, which print none (yearOf: the job's first dated line's). */
  function timeOf(text, glogYear) {
    for (var i = 0; i < TIMESTAMPS.length; i++) {
      var found = TIMESTAMPS[i].exec(text);
      if (!found) continue;
      var g = found.groups, year = g.y ? +g.y : (glogYear || shared.glogYear), fraction = g.f || "0";
      var moment = Date.UTC(year, +g.mo - 1, +g.d, +g.h, +g.mi, Math.min(+g.s, 59));
      var date = new Date(moment);
      if (date.getUTCMonth() !== +g.mo - 1 || date.getUTCDate() !== +g.d || +g.h > 23 || +g.mi > 59) return null;
      return moment / 1000 + (+fraction) / Math.pow(10, fraction.length);
    }
    return null;
  }

  function yearOf(lines) {
    for (var i = 0; i < lines.length; i++) {
      var found = TIMESTAMPS[0].exec(lines[i].text);
      if (found) return +found.groups.y;
    }
    return shared.glogYear;
  }

  /* The rank that printed a line: `[rankN]`, a torchrun `[defaultN]:` prefix, or a rank it names. */
  function lineRank(text) {
    var found = RANK_PATTERNS[0].exec(text);
    if (found) return +found[1];
    var local = LOCAL_PREFIX.exec(text);
    if (local) return +local[1];
    for (var i = 2; i < RANK_PATTERNS.length; i++) {
      found = RANK_PATTERNS[i].exec(text);
      if (found) return +found[1];
    }
    return null;
  }

  function fingerprint(text) { return text.replace(/SequenceNumber=[0-9]+,?\s*/g, "").trim(); }

  function valuesOf(name, found) {
    var groups = {};
    Object.keys(found.groups || {}).forEach(function (key) {
      if (found.groups[key] !== undefined) groups[key] = found.groups[key];
    });
    if (name === "monitored-barrier") return { ranks: (groups.ranks.match(/[0-9]+/g) || []).map(Number) };
    if (name === "collective-mismatch") {
      return { a: +groups.a, fa: fingerprint(groups.fa), b: +groups.b, fb: fingerprint(groups.fb) };
    }
    if (name === "progress") return { step: +(groups.step || groups.done || 0) };
    var values = {};
    Object.keys(groups).forEach(function (key) {
      values[key] = /^-?[0-9]+$/.test(groups[key]) ? +groups[key] : groups[key];
    });
    return values;
  }

  function event(rule, means, rank, line, text, time, value, host) {
    return { rule: rule, means: means, rank: rank, line: line, text: text, time: time,
             value: value || {}, host: host || null };
  }

  function eventsOf(lines) {
    var events = [], clock = null;  // the time of the latest timestamped line so far
    var year = yearOf(lines);
    lines.forEach(function (kept) {
      var stamped = timeOf(kept.text, year);
      if (stamped !== null) clock = stamped;
      var read = readLine(kept.text);
      if (!read) return;
      var rank = lineRank(kept.text);
      if (read.rule.name === "torchrun-failed") rank = +read.found.groups.local;
      var nccl = NCCL_PREFIX.exec(kept.text);
      events.push(event(read.rule.name, read.rule.means, rank, kept.line, kept.text, clock,
                        valuesOf(read.rule.name, read.found), nccl ? nccl[1] : null));
    });
    return launcherSummaries(perTask(events));
  }

  function taskRanks(text) {
    var ranks = [];
    text.split(",").forEach(function (part) {
      var bounds = part.split("-");
      if (!/^[0-9]+$/.test(bounds[0]) || (bounds[1] !== undefined && !/^[0-9]+$/.test(bounds[1]))) return;
      for (var rank = +bounds[0]; rank <= +(bounds[1] || bounds[0]) && ranks.length < 100000; rank++) ranks.push(rank);
    });
    return ranks;
  }

  function perTask(events) {
    var out = [];
    events.forEach(function (e) {
      if (e.rule === "srun-task") {
        var what = e.value.what === undefined ? "" : String(e.value.what);
        var means = what === "Killed" || what === "Terminated" ? "stopped" : "own-failure";
        taskRanks(e.value.tasks === undefined ? "" : String(e.value.tasks)).forEach(function (rank) {
          out.push(event(e.rule, means, rank, e.line, e.text, e.time, {}, String(e.value.host)));
        });
      } else if (e.rule === "torchrun-failed") {
        var code = +e.value.exitcode;
        out.push(event(e.rule, code > 0 ? "exited" : code === -15 ? "stopped" : "own-failure", e.rank, e.line,
                       e.text, e.time, { exitcode: code }));
      } else {
        out.push(e);
      }
    });
    return out;
  }

  function summaryEvent(block, root) {
    var first = block.first;
    var rankText = /^([0-9]+)/.exec(block.rank), codeText = /^(-?[0-9]+)/.exec(block.exitcode || "");
    var rank = rankText ? +rankText[1] : null, exitcode = codeText ? +codeText[1] : null;
    var message = block.traceback || "";
    var signal = SIGNAL.exec(message) || SIGNAL.exec(block.exitcode || "");
    var means;
    if (signal) {
      means = STOP_SIGNALS.has(signal.groups.name) ? "stopped" : "own-failure";
    } else {
      var read = message ? readLine(message) : null;
      means = read && ["timeout", "peer-lost", "stopped", "own-failure"].indexOf(read.rule.means) >= 0
        ? read.rule.means : "exited";
    }
    var text = "rank " + rank + ": exitcode " + exitcode + (message ? ", " + message : "");
    return event("launcher-summary", means, rank, first.line, text, timeOf(block.time || ""),
                 { exitcode: exitcode, root: root }, block.host || null);
  }

  function launcherSummaries(events) {
    var out = [], block = {}, root = false, previous = null;
    function close() {
      if ("rank" in block) out.push(summaryEvent(block, root));
      block = {};
    }
    events.forEach(function (e) {
      if (e.rule === "root-cause") {
        close();
        root = true;
        out.push(e);
      } else if (e.rule === "launcher-field") {
        var contiguous = previous !== null && previous.rule === "launcher-field";
        var field = e.value.field;
        if (field === undefined || !contiguous || field in block) close();
        if (field !== undefined) {
          block[field] = String(e.value.value === undefined ? "" : e.value.value).trim();
          if (!block.first) block.first = e;
        }
      } else {
        close();
        out.push(e);
      }
      previous = e;
    });
    close();
    return out;
  }

  // -- deciding: the rules of generator/culprit.py, in its order --------------------------------

  function unique(values) { return Array.from(new Set(values)).sort(function (a, b) { return a - b; }); }
  function ranked(events, test) { return events.filter(function (e) { return e.rank !== null && test(e); }); }
  function evidence(events, limit) {
    return events.slice(0, limit || 5).map(function (e) { return { rule: e.rule, line: e.line, text: e.text }; });
  }
  function decision(ranks, rule, shown, note) { return { ranks: ranks, rule: rule, evidence: shown, note: note || null }; }

  function named(events) {
    var barrier = events.filter(function (e) { return e.rule === "monitored-barrier"; });
    if (barrier.length) {
      return decision(unique([].concat.apply([], barrier.map(function (e) { return e.value.ranks; }))),
                      "monitored-barrier", evidence(barrier));
    }
    var reports = events.filter(function (e) { return e.rule === "collective-mismatch"; });
    if (reports.length) {
      var ran = new Map();
      reports.forEach(function (e) {
        if (!ran.has(e.value.a)) ran.set(e.value.a, e.value.fa);
        if (!ran.has(e.value.b)) ran.set(e.value.b, e.value.fb);
      });
      var groups = new Map();
      ran.forEach(function (print, rank) {
        if (!groups.has(print)) groups.set(print, []);
        groups.get(print).push(rank);
      });
      if (ran.size >= MIN_COMPARED && groups.size >= 2) {
        var smallest = Array.from(groups.values()).sort(function (a, b) { return a.length - b.length; })[0];
        if (smallest.length * 2 < ran.size) return decision(unique(smallest), "collective-mismatch", evidence(reports));
      }
    }
    var counters = ranked(events, function (e) { return e.rule === "work-counters"; });
    if (counters.length) {
      var stuck = Math.max.apply(null, counters.map(function (e) { return e.value.seq; }));
      var behind = unique(counters.filter(function (e) { return e.value.enqueued < stuck; }).map(function (e) { return e.rank; }));
      var reporting = unique(counters.map(function (e) { return e.rank; }));
      if (behind.length && behind.length !== reporting.length) {
        var shown = counters.filter(function (e) { return behind.indexOf(e.rank) >= 0; })
          .concat(counters.filter(function (e) { return behind.indexOf(e.rank) < 0; }).slice(0, 1));
        return decision(behind, "work-counters", evidence(shown));
      }
    }
    return null;
  }

  function ownFailures(events, world, seen) {
    var own = ranked(events, function (e) { return e.means === "own-failure"; });
    if (!own.length) return null;
    var ranks = unique(own.map(function (e) { return e.rank; }));
    var all = seen.every(function (rank) { return ranks.indexOf(rank) >= 0; });
    if (ranks.length > 1 && all && own.every(function (e) { return e.rule === "launcher-summary"; })) return null;
    var firstTime = new Map();
    own.forEach(function (e) {
      if (e.time !== null) firstTime.set(e.rank, Math.min(firstTime.has(e.rank) ? firstTime.get(e.rank) : e.time, e.time));
    });
    if (firstTime.size && firstTime.size === ranks.length) {
      var start = Math.min.apply(null, Array.from(firstTime.values()));
      ranks = unique(Array.from(firstTime.keys()).filter(function (rank) { return firstTime.get(rank) - start <= AT_ONCE; }));
    }
    var everyone = world !== null ? world : seen.length;
    var note = ranks.length > 1 && ranks.length >= everyone
      ? "every rank (" + ranks.length + ") failed the same way: not one rank's fault" : null;
    var chosen = own.filter(function (e) { return ranks.indexOf(e.rank) >= 0; }).map(function (e, i) { return [e, i]; });
    chosen.sort(function (a, b) {
      return (a[0].rule !== "own-failure") - (b[0].rule !== "own-failure") || (a[0].time || 0) - (b[0].time || 0) || a[1] - b[1];
    });
    return decision(ranks, "own-failure", evidence(chosen.map(function (pair) { return pair[0]; })), note);
  }

  function waitedElsewhere(events) {
    var waitedIn = new Map(), calls = new Map();
    events.forEach(function (e) {
      if (e.rank === null || waitedIn.has(e.rank)) return;
      if (e.rule === "collective-call") calls.set(e.rank, e);
      else if (e.rule === "watchdog-timeout") waitedIn.set(e.rank, [e.value.op + " #" + e.value.seq, e]);
      else if (e.means === "timeout" && calls.has(e.rank)) waitedIn.set(e.rank, [String(calls.get(e.rank).value.op), calls.get(e.rank)]);
    });
    var groups = new Map();
    waitedIn.forEach(function (pair, rank) {
      if (!groups.has(pair[0])) groups.set(pair[0], []);
      groups.get(pair[0]).push(rank);
    });
    if (waitedIn.size < MIN_COMPARED || groups.size < 2) return null;
    var smallest = Array.from(groups.values()).reduce(function (a, b) { return b.length < a.length ? b : a; });
    if (smallest.length * 2 >= waitedIn.size) return null;
    var shown = smallest.map(function (rank) { return waitedIn.get(rank)[1]; });
    waitedIn.forEach(function (pair, rank) { if (smallest.indexOf(rank) < 0 && shown.length === smallest.length) shown.push(pair[1]); });
    return decision(unique(smallest), "waited-elsewhere", evidence(shown));
  }

  function absentFromTimeout(events, world, seen) {
    var timeouts = ranked(events, function (e) { return e.means === "timeout"; });
    if (!timeouts.length) return null;
    var waited = new Set(timeouts.map(function (e) { return e.rank; }));
    var everyone = world !== null ? Array.from({ length: world }, function (_, i) { return i; }) : seen;
    var absent = everyone.filter(function (rank) { return !waited.has(rank); });
    if (absent.length && absent.length < everyone.length) return decision(unique(absent), "absent-from-timeout", evidence(timeouts, 3));
    return waitedElsewhere(events);
  }

  function behindInProgress(events) {
    var last = new Map();
    events.forEach(function (e) { if (e.rule === "progress" && e.rank !== null) last.set(e.rank, e); });
    if (last.size < 2) return null;
    var ahead = Math.max.apply(null, Array.from(last.values()).map(function (e) { return e.value.step; }));
    var behind = unique(Array.from(last.keys()).filter(function (rank) { return last.get(rank).value.step < ahead; }));
    if (!behind.length || behind.length * 2 >= last.size) return null;
    var shown = behind.map(function (rank) { return last.get(rank); });
    var leader = Array.from(last.values()).find(function (e) { return e.value.step === ahead; });
    return decision(behind, "behind", evidence(shown.concat([leader])));
  }

  function onlyExited(events) {
    if (events.some(function (e) { return (e.means === "timeout" || e.means === "peer-lost") && e.rank === null; })) return null;
    var exited = ranked(events, function (e) { return e.means === "exited"; });
    var waited = new Set(ranked(events, function (e) { return e.means === "timeout" || e.means === "peer-lost"; }).map(function (e) { return e.rank; }));
    var stopped = new Set(ranked(events, function (e) { return e.means === "stopped"; }).map(function (e) { return e.rank; }));
    var ranks = unique(exited.map(function (e) { return e.rank; })).filter(function (rank) { return !waited.has(rank) && !stopped.has(rank); });
    if (!ranks.length || (ranks.length > 1 && !waited.size && !stopped.size)) return null;
    return decision(ranks, "only-exited", evidence(exited.filter(function (e) { return ranks.indexOf(e.rank) >= 0; })));
  }

  function absentFromStop(events, world) {
    var stopped = unique(ranked(events, function (e) { return e.means === "stopped"; }).map(function (e) { return e.rank; }));
    if (stopped.length < 2) return null;
    var size = world !== null ? world : stopped[stopped.length - 1] + 1;
    var absent = [];
    for (var rank = 0; rank < size; rank++) if (stopped.indexOf(rank) < 0) absent.push(rank);
    if (!absent.length || absent.length * 2 >= size) return null;
    return decision(absent, "absent-from-stop", evidence(events.filter(function (e) { return e.means === "stopped"; })));
  }

  function worldSize(events) {
    var sizes = events.filter(function (e) { return e.rule === "world-size" && typeof e.value.size === "number" && e.value.size > 0; })
      .map(function (e) { return e.value.size; });
    return sizes.length ? Math.max.apply(null, sizes) : null;
  }

  /* The finder's answer for a pasted log: null when it shows one process only; `foundOn`: the
     ranks the results' lines were printed by. */
  function findCulprit(lines, foundOn) {
    var events = eventsOf(lines);
    var world = worldSize(events);
    var seen = unique(ranked(events, function () { return true; }).map(function (e) { return e.rank; }));
    var hosts = {};
    events.forEach(function (e) { if (e.rank !== null && e.host) hosts[e.rank] = e.host; });
    var launched = events.some(function (e) { return LAUNCHER_RULES.has(e.rule); });
    var every = new Set(seen.concat(foundOn || []));
    if (every.size < 2 && !(world > 1) && !launched) return null;
    var failing = unique(ranked(events, function (e) {
      return ["own-failure", "timeout", "peer-lost", "stopped", "exited"].indexOf(e.means) >= 0;
    }).map(function (e) { return e.rank; }));
    var mismatchSeen = events.filter(function (e) { return e.means === "mismatch-seen"; });
    var rules = [named, ownFailures, absentFromTimeout, behindInProgress, onlyExited, absentFromStop];
    for (var i = 0; i < rules.length; i++) {
      var decided = rules[i](events, world, seen);
      if (!decided) continue;
      if (mismatchSeen.length && (decided.rule === "own-failure" || decided.rule === "only-exited")) {
        return { initiators: [], rule: null, evidence: evidence(mismatchSeen, 1), collateral: failing,
                 worldSize: world, ranksSeen: seen, host: null,
                 note: "two ranks ran different collectives (gloo: " + mismatchSeen[0].text.slice(0, 80) +
                       "); which one is wrong the logs do not say" };
      }
      var hostNames = unique(decided.ranks.filter(function (rank) { return hosts[rank]; }).map(function (rank) { return hosts[rank]; }));
      return { initiators: decided.ranks, rule: decided.rule, evidence: decided.evidence, note: decided.note,
               collateral: failing.filter(function (rank) { return decided.ranks.indexOf(rank) < 0; }),
               worldSize: world, ranksSeen: seen, host: hostNames.length ? hostNames.join(", ") : null };
    }
    return { initiators: [], rule: null, evidence: [], note: null, collateral: failing, worldSize: world,
             ranksSeen: seen, host: null };
  }

  /* Each result's ranks; with the answer, which result started it and which are collateral
     (generator/triage.py apply_culprit). */
  function applyCulprit(results, culprit) {
    results.forEach(function (result) {
      var ranks = [];
      result.matches.forEach(function (match) {
        match.rank = lineRank(match.text);
        if (match.rank !== null && ranks.indexOf(match.rank) < 0) ranks.push(match.rank);
      });
      result.rank = ranks.length ? ranks[0] : null;
      result.ranks = ranks.slice().sort(function (a, b) { return a - b; });
      result.initiating = false;
      result.collateral = false;
    });
    if (!culprit || !culprit.initiators.length) return;
    results.forEach(function (result) {
      result.initiating = result.ranks.some(function (rank) { return culprit.initiators.indexOf(rank) >= 0; });
      result.collateral = result.ranks.length > 0 && !result.initiating;
    });
    if (!results.some(function (result) { return result.initiating; })) {
      var stand = results.find(function (result) { return result.role !== "wrapper" && !result.collateral; });
      if (stand) stand.initiating = true;
    }
  }

  /* "0-6, 8-15" for a list of ranks. */
  function ranges(ranks) {
    var sorted = unique(ranks), parts = [], start = null, previous = null;
    sorted.forEach(function (rank) {
      if (start === null) { start = previous = rank; }
      else if (rank === previous + 1) { previous = rank; }
      else { parts.push(start === previous ? String(start) : start + "-" + previous); start = previous = rank; }
    });
    if (start !== null) parts.push(start === previous ? String(start) : start + "-" + previous);
    return parts.join(", ");
  }

  function ranksWord(ranks) { return ranks.length === 1 ? "rank " + ranks[0] : "ranks " + ranges(ranks); }

  /* What the reader is told, as `mlfail diagnose` words it (diagnose.py culprit_lines): the first
     sentence, why, the evidence lines, the verdict; or, when the log cannot tell, what to collect. */
  /* The failure that started it (diagnose.py initiating_failure): the best specific result on the
     initiating ranks, else the failure the deciding rule shows (`culprit.ruleFailure`, set by the
     matcher, which knows every entry's title), else the generic result there. */
  function initiatingFailure(culprit, results) {
    var found = results.find(function (result) { return result.initiating; });
    if (found && found.role === "failure") return { title: found.title, verdict: found.verdict };
    if (culprit.ruleFailure) return culprit.ruleFailure;
    return found ? { title: found.title, verdict: found.verdict } : null;
  }

  function culpritLines(culprit, results) {
    if (!culprit.initiators.length) {
      var seen = culprit.ranksSeen.length ? " (ranks " + ranges(culprit.ranksSeen) + " seen)" : "";
      return { first: "Which rank started it cannot be told from these logs" + seen + ".",
               rest: ["Collect next: " + shared.culpritCollect + "."] };
    }
    var started = initiatingFailure(culprit, results);
    var what = started ? started.title : "a failure of its own (below)";
    var host = culprit.host ? " (node " + culprit.host + ")" : "";
    var others = culprit.collateral.length ? "; " + ranksWord(culprit.collateral) + " failed because of it (collateral)" : "";
    var who = ranksWord(culprit.initiators);
    var verdict = started && started.verdict ? started.verdict : "unknown";
    var rest = ["Why: " + (shared.culpritRuleWords[culprit.rule] || culprit.rule) + "."];
    if (culprit.note) rest.push("Note: " + culprit.note + ".");
    culprit.evidence.slice(0, 3).forEach(function (item) { rest.push("line " + item.line + ": " + item.text); });
    rest.push("Verdict: " + verdict + ": " + shared.verdictWords[verdict] + ".");
    return { first: who.charAt(0).toUpperCase() + who.slice(1) + host + " started it: " + what + others + ".", rest: rest };
  }

  root.DiagnoseCulprit = { Keeper: Keeper, findCulprit: findCulprit, applyCulprit: applyCulprit, ranges: ranges,
                           lineRank: lineRank, readLine: readLine, timeOf: timeOf, culpritLines: culpritLines };
})(typeof self !== "undefined" ? self : this);
