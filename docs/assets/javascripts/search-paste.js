/* Material's search box reacts to key presses only, so an error message pasted (or dropped)
   into it would find nothing until the next key. Any other change of its text is announced
   as a key press too, so pasting a log line searches at once. */
(function () {
  "use strict";
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input || !input.classList || !input.classList.contains("md-search__input")) return;
    input.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true, key: "Unidentified" }));
  });
})();
