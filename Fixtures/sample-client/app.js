// Sample client for clientctl's tests and demo. Scripts/demo rewrites the next line
// when it publishes another version of this folder.
var SAMPLE_CLIENT_VERSION = "1.0.0";

(function () {
  "use strict";

  function show(id, text) {
    var el = document.getElementById(id);
    if (el) { el.textContent = text; }
  }

  show("version", SAMPLE_CLIENT_VERSION);

  var notes = ["Buy oat milk", "Call the plumber", "Ship the new client"];
  var list = document.getElementById("notes");
  notes.forEach(function (text) {
    var item = document.createElement("li");
    item.textContent = text;
    list.appendChild(item);
  });

  // When the page runs under clientctl, the WebAppLocalServer shim is injected first in
  // <head>; tell it start-up completed so the watchdog keeps this version.
  if (window.WebAppLocalServer && typeof window.WebAppLocalServer.startupDidComplete === "function") {
    window.WebAppLocalServer.startupDidComplete(function () { show("status", "Ready (startup confirmed)"); });
  } else {
    show("status", "Ready");
  }
})();
