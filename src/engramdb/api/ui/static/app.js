// EngramDB dashboard: keeps the key in this tab's session storage and sends it as a bearer header
// on every htmx request. It never puts the key in a URL, a cookie or local storage, and it writes
// server text into the page only as text (textContent). Local storage holds only the operator's
// own names for scopes ("labels"), which never leave the browser.
(function () {
  "use strict";
  var KEY = "engram.key";
  var WHY = "engram.why";  // why the tab was sent to sign in (shown there once)
  var LABELS = "engram.labels";
  var base = document.documentElement.getAttribute("data-base") || "/ui";

  function key() { return sessionStorage.getItem(KEY); }

  // Replace, never push: Back from a page must not land on a sign-in form, nor sign-in on a page
  // that sends it straight back.
  function toSignin(why) {
    if (why) { sessionStorage.setItem(WHY, why); }
    location.replace(base + "/signin?next=" + encodeURIComponent(location.pathname + location.search));
  }

  function nextPage() {
    var next = new URLSearchParams(location.search).get("next") || "";
    return next.indexOf(base + "/") === 0 ? next : base + "/memories";  // only a page of this dashboard
  }

  function say(text, isProblem) {
    var box = document.getElementById("messages");
    if (!box) { return; }
    if (!text) { box.replaceChildren(); return; }
    var line = document.createElement("p");
    line.className = isProblem ? "problem" : "done";
    if (isProblem) { line.setAttribute("role", "alert"); }
    line.textContent = text;
    box.replaceChildren(line);
  }

  function focusIn(target) {
    var mark = target.querySelector("[data-focus]") || target.querySelector("h1, h2");
    if (!mark) { return; }
    var into = mark.hasAttribute("tabindex") ? mark : mark.querySelector("button, a[href], input, select, textarea");
    (into || mark).focus();
  }

  function check(value) {
    return fetch(base + "/part/session", { headers: { Authorization: "Bearer " + value }, cache: "no-store",
                                           credentials: "omit" });
  }

  function signinPage(form) {
    var problem = document.getElementById("signin-problem");
    var note = document.getElementById("signin-why");
    var why = sessionStorage.getItem(WHY);
    sessionStorage.removeItem(WHY);
    if (why) { note.textContent = why; note.hidden = false; }
    if (key()) {  // already signed in (Back, or a bookmark): go on if the key still works
      check(key()).then(function (answer) {
        if (answer.ok) { location.replace(nextPage()); } else { sessionStorage.removeItem(KEY); }
      }, function () { return null; });
    }
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var value = document.getElementById("key").value.trim();
      check(value)
        .then(function (answer) {
          if (answer.ok) {
            sessionStorage.setItem(KEY, value);
            location.replace(nextPage());
            return null;
          }
          return answer.json().then(function (body) {
            problem.textContent = "This key was refused: " + body.message;
            problem.hidden = false;
          });
        })
        .catch(function () {
          problem.textContent = "The server could not be reached.";
          problem.hidden = false;
        });
    });
  }

  function labels() {
    try { return JSON.parse(localStorage.getItem(LABELS) || "{}") || {}; } catch (err) { return {}; }
  }

  // The operator's names for scopes: shown beside every scope the page names, never sent anywhere.
  function showLabels(root) {
    var known = labels();
    root.querySelectorAll("[data-scope-key]").forEach(function (elt) {
      var name = known[elt.getAttribute("data-scope-key")] || "";
      if (elt.tagName === "OPTION") {
        if (!elt.hasAttribute("data-text")) { elt.setAttribute("data-text", elt.textContent); }
        elt.textContent = (name ? name + " — " : "") + elt.getAttribute("data-text");
        return;
      }
      var mark = elt.querySelector(".scope-name");
      if (mark) { mark.textContent = name; mark.hidden = !name; }
      var field = elt.querySelector("input[data-label-for]");
      if (field && document.activeElement !== field) { field.value = name; }
    });
  }

  function saveLabel(form) {
    var field = form.querySelector("input[data-label-for]");
    var known = labels();
    var name = field.value.trim();
    if (name) { known[field.getAttribute("data-label-for")] = name; } else { delete known[field.getAttribute("data-label-for")]; }
    localStorage.setItem(LABELS, JSON.stringify(known));
    showLabels(document);
    say(name ? "Label saved in this browser." : "Label removed.", false);
  }

  function download(button) {
    fetch(button.getAttribute("data-download"), { headers: { Authorization: "Bearer " + key() }, cache: "no-store",
                                                   credentials: "omit" })
      .then(function (answer) {
        if (!answer.ok) { throw new Error("The server answered " + answer.status + "."); }
        return answer.blob();
      })
      .then(function (blob) {
        var link = document.createElement("a");
        link.href = URL.createObjectURL(blob);
        link.download = button.getAttribute("data-filename") || "export.json";
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
        say("Exported to " + link.download + ".", false);
      })
      .catch(function (err) { say(err.message, true); });
  }

  var form = document.getElementById("signin-form");
  if (form) { signinPage(form); return; }
  if (!key()) { toSignin(""); return; }

  document.body.addEventListener("htmx:configRequest", function (event) {
    var value = key();
    if (!value) { event.preventDefault(); toSignin(""); return; }
    event.detail.headers.Authorization = "Bearer " + value;
  });

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt.id !== "main" && event.detail.elt.id !== "who") { say("", false); }
  });

  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var asking = event.detail.requestConfig ? event.detail.requestConfig.elt : null;
    if (asking && asking.hasAttribute("data-window-next")) {  // the swap takes the button away, and its focus
      focusedWindow = document.activeElement === asking ? asking : null;
    }
    var xhr = event.detail.xhr;
    if (xhr.status === 401) {  // the key was revoked, or is unknown: sign in again, saying why
      event.detail.shouldSwap = false;
      sessionStorage.removeItem(KEY);
      var why = "The server refused this tab's key";
      try { why += ": " + JSON.parse(xhr.responseText).message; } catch (err) { why += "."; }
      toSignin(why + ". Sign in with a valid key.");
      return;
    }
    if ((xhr.getResponseHeader("content-type") || "").indexOf("json") >= 0) {  // a problem from the API layer
      event.detail.shouldSwap = false;
      var text = "The server answered " + xhr.status + ".";
      try {
        var problem = JSON.parse(xhr.responseText);
        text = problem.code + ": " + problem.message;
      } catch (err) { text = "The server answered " + xhr.status + "."; }
      if (event.detail.elt.id === "main") {  // a page's own load (a malformed address): it takes the page's place
        var line = document.createElement("p");
        line.className = "problem";
        line.setAttribute("role", "alert");
        line.textContent = text;
        event.detail.elt.replaceChildren(line);
      } else {
        say(text, true);
      }
    }
  });

  // The next window of a long list: pressed, or arrived while its button had the focus (a keyboard
  // reader tabbed to it, and so scrolled it into view), the focus goes to the window's first row;
  // loaded because the page scrolled, the focus stays where the reader left it.
  var focusedWindow = null;
  function windowLoaded(elt, config) {
    var first = document.getElementById(elt.getAttribute("data-window-next"));
    var pressed = config.triggeringEvent && config.triggeringEvent.type === "click";
    var link = first ? first.querySelector("a[href]") : null;
    if ((pressed || focusedWindow === elt) && link && document.activeElement !== link) { link.focus(); }
  }

  document.body.addEventListener("htmx:afterSettle", function (event) {
    var elt = event.detail.requestConfig ? event.detail.requestConfig.elt : null;
    if (elt && elt.hasAttribute("data-window-next")) { windowLoaded(elt, event.detail.requestConfig); return; }
    showLabels(event.detail.target);
    if (elt && (elt.id === "main" || elt.id === "who" || elt.closest("#who"))) { return; }  // page load, header
    if (event.detail.target.id === "messages") { return; }
    focusIn(event.detail.target);
  });

  document.getElementById("signout").addEventListener("click", function () {
    sessionStorage.removeItem(KEY);
    location.assign(base + "/signin");
  });

  document.body.addEventListener("submit", function (event) {
    if (event.target.matches("form[data-label-form]")) { event.preventDefault(); saveLabel(event.target); }
  });

  document.body.addEventListener("click", function (event) {
    var dismiss = event.target.closest("button[data-dismiss]");
    if (dismiss) {  // a confirmation's Cancel: the panel goes, the focus returns to the page
      var panel = document.getElementById(dismiss.getAttribute("data-dismiss"));
      panel.replaceChildren();
      focusIn(document.getElementById("main"));
      return;
    }
    var exporter = event.target.closest("button[data-download]");
    if (exporter) { download(exporter); return; }
    var button = event.target.closest("button[data-copy]");
    if (!button) { return; }
    var field = document.getElementById(button.getAttribute("data-copy"));
    field.select();
    navigator.clipboard.writeText(field.value).then(function () { say("Copied.", false); },
                                                   function () { say("Copy it from the field.", true); });
  });
}());
