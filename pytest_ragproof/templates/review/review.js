// ragproof review: keyboard first. Every action is a plain link or form of the page;
// the keys below only follow those links and submit those forms.
(function () {
  "use strict";
  const root = document.querySelector(".review");
  if (!root) return;

  function go(attr) {
    const href = root.getAttribute(attr);
    if (href) window.location.assign(href);
  }

  function submit(selector) {
    const form = document.querySelector(selector);
    if (form) form.requestSubmit();
    return Boolean(form);
  }

  // The metric the y/n keys answer: the row marked "current" (first not yet labelled).
  function metrics() {
    return Array.from(document.querySelectorAll(".metric"));
  }
  function current() {
    return document.querySelector(".metric.current") || metrics()[0] || null;
  }
  function move(step) {
    const rows = metrics();
    if (!rows.length) return;
    const at = rows.indexOf(current());
    const next = rows[Math.min(rows.length - 1, Math.max(0, at + step))];
    rows.forEach((r) => r.classList.toggle("current", r === next));
    next.scrollIntoView({ block: "nearest" });
  }
  // An imported case: copy what production did into the edit form's box (the reviewer
  // saves the edit: e, then Ctrl+Enter); the value is set as text, never parsed as markup.
  function take(id) {
    const button = document.getElementById(id);
    const box = document.getElementById("edit-box");
    const field = button && document.getElementById(button.getAttribute("data-target"));
    if (!field || !box) return false;
    box.open = true;
    field.value = button.getAttribute("data-value") || "";
    return true;
  }
  ["take-answer", "take-sources"].forEach((id) => {
    const button = document.getElementById(id);
    if (button) button.addEventListener("click", () => take(id));
  });

  function answer(value) {
    const row = current();
    const button = row && row.querySelector('button[data-key="' + value + '"]');
    if (button) button.form.requestSubmit(button);
  }

  document.addEventListener("keydown", function (event) {
    const target = event.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    if (typing) {
      const labelForm = target.form && target.form.classList.contains("label");
      if (event.key === "Enter" && labelForm) {
        // Enter in a grade saves the grade; in a note it leaves the box (y/n then save
        // the verdict with the note): never the form's first button by surprise.
        event.preventDefault();
        const grade = target.form.querySelector('button[value="grade"]');
        if (target.name === "grade" && grade) target.form.requestSubmit(grade);
        else target.blur();
      } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target.form) {
        event.preventDefault();
        target.form.requestSubmit();
      } else if (event.key === "Escape") {
        target.blur();
      }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    let handled = true;
    switch (event.key) {
      case "j": case "ArrowRight": go("data-next"); break;
      case "k": case "ArrowLeft": go("data-prev"); break;
      case "s": go("data-skip"); break;
      case "ArrowDown": move(1); break;
      case "ArrowUp": move(-1); break;
      case "y": answer("yes"); break;
      case "n": answer("no"); break;
      case "u": handled = submit("form#undo") || submit("form#unanswerable"); break;
      case "p": handled = take("take-answer"); break;
      case "d": handled = take("take-sources"); break;
      case "a": handled = submit("form#approved"); break;
      case "r": handled = submit("form#rejected"); break;
      case "e": {
        const box = document.getElementById("edit-box");
        if (box) {
          box.open = true;
          const first = box.querySelector("textarea");
          if (first) first.focus();
        } else handled = false;
        break;
      }
      default: handled = false;
    }
    if (handled) event.preventDefault();
  });

  // The source span of a generated case, scrolled into the middle of its document's
  // box (the box scrolls, the page stays where it is: the question stays in view).
  const span = document.getElementById("span");
  const box = span && span.closest("pre.document");
  if (box) {
    const offset = span.getBoundingClientRect().top - box.getBoundingClientRect().top;
    box.scrollTop += offset - Math.max(0, (box.clientHeight - span.offsetHeight) / 2);
  }

  // Clicking in a metric row, or a field of it, makes it the one y/n answer.
  metrics().forEach((row) => {
    const pick = function () {
      metrics().forEach((r) => r.classList.toggle("current", r === row));
    };
    row.addEventListener("click", pick);
    row.addEventListener("focusin", pick);
  });
})();
