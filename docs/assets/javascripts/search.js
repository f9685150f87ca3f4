/* The header's search box: Pagefind's chunked index for words, the diagnose matcher for
   pasted error text. Nothing is fetched until the reader starts a search; then only the
   index chunks of the words asked for (and, for a pasted error, the signatures).

   A query is read the way generator/search.py reads one (the same rules, checked on a shared
   table): numbers, sizes, hex addresses, paths and rank prefixes are dropped; identifiers are
   searched whole and by their parts; tag aliases and common spellings stand for their tag.
   Each remaining word is searched on its own and the scores are added, so a long query ranks
   the pages that share most of its words instead of finding nothing. Text that matches an
   entry's error signature puts that entry first, marked "matches this error". */
(function (root) {
  "use strict";

  var STOPWORDS = new Set(("a an and are as at be but by for from has have if in into is it its not of on or so " +
    "such that the their then there this to was were when which while will with").split(" "));
  var SYNONYMS = { oom: ["out", "memory"], ooms: ["out", "memory"], nans: ["nan"], hang: ["hangs"] };
  var NOISE = new RegExp(
    "\\[(?:rank|Rank|RANK) ?\\d+\\]:?|\\[default\\d+\\]:" +  // rank prefixes
    "|\\b[EWIF]\\d{4}\\b" +  // glog severity and date: E1129
    "|0x[0-9a-fA-F]+" +  // addresses
    "|\\S*[/\\\\]\\S*" +  // paths
    "|\\b\\d+(?:\\.\\d+)?\\s*(?:[KMGT]i?B|bytes)\\b" +  // sizes
    "|\\b\\d+(?:[.:]\\d+)*\\b", "g");  // numbers, versions, times
  var IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z_][A-Za-z0-9_]*)*/g;
  var CAMEL = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
  var MAX_TERMS = 8;  // one index lookup each
  var SHOWN = 10;

  /* The words of a text as search terms (generator/search.py `terms`). */
  function terms(text) {
    var normalise = root.DiagnoseMatcher ? root.DiagnoseMatcher.normaliseText : function (line) { return line; };
    var found = [];
    text.split("\n").forEach(function (line) {
      (normalise(line).replace(NOISE, " ").match(IDENTIFIER) || []).forEach(function (identifier) {
        var parts = [];
        identifier.split(/[._-]/).forEach(function (chunk) {
          var pieces = chunk.match(CAMEL);
          Array.prototype.push.apply(parts, pieces || [chunk]);
        });
        var seen = new Set();
        [identifier].concat(parts).forEach(function (term) {
          term = term.toLowerCase();
          if (seen.has(term)) return;
          seen.add(term);
          if (!STOPWORDS.has(term) && term.length > 1) found.push(term);
        });
      });
    });
    return found;
  }

  /* The terms to look up: synonyms added, duplicates dropped, the most telling first. */
  function queryTerms(text) {
    var all = [];
    terms(text).forEach(function (term) {
      all.push(term);
      Array.prototype.push.apply(all, SYNONYMS[term] || []);
    });
    var unique = Array.from(new Set(all));
    return unique.sort(function (a, b) { return b.length - a.length; }).slice(0, MAX_TERMS);
  }

  function looksLikeAnError(text) {
    return text.indexOf("\n") >= 0 ||
      (text.length >= 24 && /Error|Exception|error:|failed|Traceback|Assertion|NCCL|CUDA|Killed|Signal/.test(text));
  }

  root.FeSearch = { terms: terms, queryTerms: queryTerms };
  if (typeof document === "undefined") return;

  var script = document.currentScript;
  var siteRoot = new URL("../../", script.src);
  var pagefind = null, signatures = null;

  function loadPagefind() {
    if (!pagefind) {
      pagefind = import(new URL("pagefind/pagefind.js", siteRoot).href).then(function (module) {
        // Entry pages differ in length by their prose, which says little about the match:
        // length hardly counts, and a word's weight (title, signatures, tags) counts most.
        var options = { excerptLength: 22, ranking: { pageLength: 0.1, termFrequency: 0.6, termSaturation: 1.0 } };
        return Promise.all([module.options(options), loadJson(new URL("pagefind/pagefind-entry.json", siteRoot).href)])
          .then(function (loaded) {
            var languages = loaded[1].languages || {};
            var pages = Object.keys(languages).reduce(function (sum, key) { return sum + languages[key].page_count; }, 0);
            return { search: module.search, pageCount: pages };
          });
      });
    }
    return pagefind;
  }

  function loadScript(url) {
    return new Promise(function (resolve, reject) {
      var tag = document.createElement("script");
      tag.src = url;
      tag.onload = resolve;
      tag.onerror = function () { reject(new Error("could not load " + url)); };
      document.head.appendChild(tag);
    });
  }

  function loadJson(url) {
    return fetch(url).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status + " for " + url);
      return response.json();
    });
  }

  function loadSignatures() {
    if (!signatures) {
      signatures = Promise.all([
        root.DiagnoseMatcher ? null : loadScript(new URL("diagnose-matcher.js", script.src).href),
        loadJson(new URL("api/signatures.json", siteRoot).href),
        loadJson(new URL("api/diagnose.json", siteRoot).href),
      ]).then(function (loaded) { return new root.DiagnoseMatcher.Matcher(loaded[1], loaded[2].causes); });
    }
    return signatures;
  }

  /* Entries whose signatures the pasted text matches, best first. */
  function errorMatches(text) {
    if (!looksLikeAnError(text)) return Promise.resolve([]);
    return loadSignatures().then(function (matcher) {
      return matcher.scan(text).map(function (result) {
        return { url: new URL(result.url, siteRoot).href, title: result.title, excerpt: null, matchesError: true };
      });
    });
  }

  /* Pagefind finds the candidates (the whole query, and each term on its own); then they are
     ranked as generator/search.py ranks: a term counts by where the entry has it (title,
     tags, signature words, in its search card) and how rare it is; the query's words in
     the order of one of the entry's signatures ("tried to allocate") count most. */
  var CANDIDATES = 30;
  var WEIGHTS = { title: 6, terms: 4, text: 1 };

  function wordMatches(text) {
    var words = queryTerms(text);
    if (!words.length) return Promise.resolve([]);
    var whole = terms(text).join(" ");
    return loadPagefind().then(function (module) {
      var searches = [module.search(whole)].concat(words.map(function (word) { return module.search(word); }));
      return Promise.all(searches).then(function (found) {
        var pages = Math.max(module.pageCount || 0, 1), rarity = {}, candidates = new Map();
        words.forEach(function (word, index) {
          var count = found[index + 1] ? found[index + 1].results.length : 0;
          rarity[word] = Math.log(1 + pages / Math.max(count, 1));
        });
        found.forEach(function (search, index) {
          (search ? search.results : []).slice(0, CANDIDATES).forEach(function (result) {
            var entry = candidates.get(result.id) || { result: result, hits: 0, all: false };
            entry.hits += 1;
            entry.all = entry.all || index === 0;  // has every word of the query
            candidates.set(result.id, entry);
          });
        });
        var best = Array.from(candidates.values()).sort(function (a, b) {
          return (b.all - a.all) || (b.hits - a.hits);
        }).slice(0, CANDIDATES);
        return Promise.all(best.map(function (entry) { return entry.result.data(); })).then(function (datas) {
          var scored = datas.map(function (page, index) {
            return { page: page, score: cardScore(page, words, rarity, whole) + (best[index].all ? 2 : 0) };
          });
          scored.sort(function (a, b) { return b.score - a.score; });
          return scored.slice(0, SHOWN).map(function (item) {
            return { url: item.page.url, title: item.page.meta.title, excerpt: item.page.excerpt, matchesError: false };
          });
        });
      });
    });
  }

  function cardScore(page, words, rarity, phrase) {
    var fields = {
      title: new Set(terms(page.meta.title || "")),
      terms: new Set(terms(page.meta.terms || "")),
      text: new Set(terms(page.content || "")),
    };
    var score = 0;
    words.forEach(function (word) {
      Object.keys(WEIGHTS).forEach(function (field) {
        if (fields[field].has(word)) score += WEIGHTS[field] * rarity[word];
      });
    });
    var card = terms(page.meta.terms || "").join(" ");
    if (phrase.indexOf(" ") > 0 && card.indexOf(phrase) >= 0) score += 20;  // the signature's own words, in order
    return score;
  }

  function sameUrl(a, b) {
    return new URL(a, location.href).pathname === new URL(b, location.href).pathname;
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  /* Pagefind's excerpt is HTML with <mark>s: keep the text and the marks, nothing else. */
  function excerptNodes(html) {
    var parsed = new DOMParser().parseFromString("<p>" + html + "</p>", "text/html").body.firstChild;
    var out = [];
    (parsed ? Array.from(parsed.childNodes) : []).forEach(function (node) {
      out.push(node.nodeName === "MARK" ? element("mark", null, node.textContent) : document.createTextNode(node.textContent));
    });
    return out;
  }

  function render(list, meta, found, query) {
    list.textContent = "";
    found.forEach(function (item) {
      var row = element("li", "md-search-result__item");
      var link = element("a", "md-search-result__link");
      link.href = item.url;
      var article = element("article", "md-search-result__article md-typeset");
      var title = element("h1", null, item.title);
      if (item.matchesError) title.appendChild(element("span", "fe-search-badge", "matches this error"));
      article.appendChild(title);
      if (item.excerpt) {
        var excerpt = element("p");
        excerptNodes(item.excerpt).forEach(function (node) { excerpt.appendChild(node); });
        article.appendChild(excerpt);
      }
      link.appendChild(article);
      row.appendChild(link);
      list.appendChild(row);
    });
    meta.textContent = found.length
      ? found.length + " failure" + (found.length === 1 ? "" : "s") + " for this search"
      : "No failure found for “" + query.slice(0, 80) + "”. Try the words of the error, or paste its line.";
  }

  function setUp() {
    var dialog = document.querySelector("[data-fe-search]");
    if (!dialog || dialog.dataset.ready) return;
    dialog.dataset.ready = "true";
    var toggle = document.getElementById("__search");
    var input = dialog.querySelector("[data-fe-search-query]");
    var form = dialog.querySelector("[data-fe-search-form]");
    var list = dialog.querySelector("[data-fe-search-results]");
    var meta = dialog.querySelector("[data-fe-search-meta]");
    var timer = null, generation = 0;

    function run() {
      var query = input.value.trim();
      var mine = ++generation;
      if (!query) {
        list.textContent = "";
        meta.textContent = "Type to search; paste an error line to find the failure that prints it.";
        return;
      }
      meta.textContent = "Searching…";
      Promise.all([errorMatches(query), wordMatches(query)]).then(function (both) {
        if (mine !== generation) return;  // a newer query is on its way
        var found = both[0].slice();
        both[1].forEach(function (item) {
          if (!found.some(function (other) { return sameUrl(other.url, item.url); })) found.push(item);
        });
        render(list, meta, found.slice(0, SHOWN), query);
        dialog.dataset.state = "done";
      }).catch(function (error) {
        if (mine !== generation) return;
        var served = location.protocol !== "file:";
        meta.textContent = served ? "Search failed: " + error.message
          : "Search needs the site served over HTTP (make serve), not opened as files.";
        dialog.dataset.state = "error";
      });
    }

    function open() {
      toggle.checked = true;
      input.focus();
    }

    input.addEventListener("input", function (event) {
      dialog.dataset.state = "running";
      clearTimeout(timer);
      var pasted = event.inputType === "insertFromPaste" || event.inputType === "insertFromDrop";
      timer = setTimeout(run, pasted ? 0 : 120);
    });
    input.addEventListener("focus", function () {
      toggle.checked = true;
      loadPagefind().catch(function () {});  // warm up while the reader types
    });
    toggle.addEventListener("change", function () { if (toggle.checked) input.focus(); });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var first = list.querySelector("a");
      if (first) location.href = first.href;
    });
    form.addEventListener("reset", function () { setTimeout(run, 0); });
    document.addEventListener("keydown", function (event) {
      var typing = event.target && /^(INPUT|TEXTAREA|SELECT)$/.test(event.target.tagName);
      if (event.key === "Escape" && toggle.checked) {
        toggle.checked = false;
        input.blur();
      } else if (!typing && !event.ctrlKey && !event.metaKey && !event.altKey && (event.key === "/" || event.key === "s")) {
        event.preventDefault();
        open();
      }
    });
  }

  if (typeof document$ !== "undefined") document$.subscribe(setUp);
  else document.addEventListener("DOMContentLoaded", setUp);
})(typeof self !== "undefined" ? self : this);
