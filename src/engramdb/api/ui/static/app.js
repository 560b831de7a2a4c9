// EngramDB dashboard: keeps the key in this tab's session storage and sends it as a bearer header
// on every htmx request. It never puts the key in a URL, a cookie or local storage, and it writes
// server text into the page only as text (textContent).
(function () {
  "use strict";
  var KEY = "engram.key";
  var base = document.documentElement.getAttribute("data-base") || "/ui";

  function key() { return sessionStorage.getItem(KEY); }

  function toSignin() {
    location.assign(base + "/signin?next=" + encodeURIComponent(location.pathname + location.search));
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

  function signinPage(form) {
    var problem = document.getElementById("signin-problem");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var value = document.getElementById("key").value.trim();
      fetch(base + "/part/session", { headers: { Authorization: "Bearer " + value }, cache: "no-store",
                                      credentials: "omit" })
        .then(function (answer) {
          if (answer.ok) {
            sessionStorage.setItem(KEY, value);
            location.assign(nextPage());
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

  var form = document.getElementById("signin-form");
  if (form) { signinPage(form); return; }
  if (!key()) { toSignin(); return; }

  document.body.addEventListener("htmx:configRequest", function (event) {
    var value = key();
    if (!value) { event.preventDefault(); toSignin(); return; }
    event.detail.headers.Authorization = "Bearer " + value;
  });

  document.body.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.elt.id !== "main" && event.detail.elt.id !== "who") { say("", false); }
  });

  document.body.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr.status === 401) {  // the key was revoked, or is unknown: sign in again
      event.detail.shouldSwap = false;
      sessionStorage.removeItem(KEY);
      toSignin();
      return;
    }
    if ((xhr.getResponseHeader("content-type") || "").indexOf("json") >= 0) {  // a problem from the API layer
      event.detail.shouldSwap = false;
      try {
        var problem = JSON.parse(xhr.responseText);
        say(problem.code + ": " + problem.message, true);
      } catch (err) {
        say("The server answered " + xhr.status + ".", true);
      }
    }
  });

  document.body.addEventListener("htmx:afterSettle", function (event) {
    var elt = event.detail.requestConfig ? event.detail.requestConfig.elt : null;
    if (elt && (elt.id === "main" || elt.id === "who" || elt.closest("#who"))) { return; }  // page load, header
    if (event.detail.target.id === "messages") { return; }
    focusIn(event.detail.target);
  });

  document.getElementById("signout").addEventListener("click", function () {
    sessionStorage.removeItem(KEY);
    location.assign(base + "/signin");
  });

  document.body.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (!button) { return; }
    var field = document.getElementById(button.getAttribute("data-copy"));
    field.select();
    navigator.clipboard.writeText(field.value).then(function () { say("Copied.", false); },
                                                   function () { say("Copy it from the field.", true); });
  });
}());
