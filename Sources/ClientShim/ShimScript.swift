/// The shim's JavaScript, kept small and readable; ``Shim/scriptElement`` calls it with
/// `{backend, plugin, base, version}`.
enum ShimScript {
    static let source = #"""
        function (cfg) {
          "use strict";
          if (window.WebAppLocalServer) return;
          var readyCallbacks = [], errorCallbacks = [], listening = false;
          function each(list, arg) { list.slice().forEach(function (cb) { try { cb(arg); } catch (e) { setTimeout(function () { throw e; }); } }); }
          function ready(version) { each(readyCallbacks, version); }
          function failed(message) { each(errorCallbacks, new Error(message)); }

          var lease = { id: Math.random().toString(36).slice(2, 12) + Date.now().toString(36), registered: false, downloads: false };
          // The page's problems after its acknowledgement (docs/page-errors.md): the top window
          // counts its uncaught errors and unhandled rejections; reportProblem(kind) adds the
          // app's own. One post every 2 s at most, whatever the page throws: a count, the
          // first 3 distinct messages and at most 20 kinds wait in memory, nothing more.
          var problems = { errors: 0, messages: [], app: [], waiting: Object.create(null), kinds: 0, timer: null, busy: false, last: 0, watching: false };
          function problemPoster(call) {
            function post(keepalive) {
              if (problems.timer) clearTimeout(problems.timer);
              problems.timer = null;
              if (!problems.errors && !problems.app.length) return;
              var body = {}, waiting = problems.waiting;
              if (problems.errors) body.errors = problems.errors;
              if (problems.messages.length) body.messages = problems.messages;
              if (problems.app.length) body.app = problems.app;
              problems.errors = 0; problems.messages = []; problems.app = []; problems.waiting = Object.create(null); problems.kinds = 0;
              problems.last = Date.now();
              if (!keepalive) problems.busy = true;
              function settle(error) {
                var refused = (error && error.body && error.body.refused) || null;
                Object.keys(waiting).forEach(function (kind) {
                  var w = waiting[kind];
                  if (refused && refused[kind]) w.reject(new Error(refused[kind]));
                  else if (error && !refused) w.reject(error);
                  else w.resolve();
                });
              }
              // A post that did not reach the agent (no answer, or a 5xx) gives its count and
              // messages back to the next one; one the agent refused (a 4xx) is not sent again.
              function giveBack(error) {
                if (keepalive || (error && error.status && error.status < 500)) return;
                problems.errors += body.errors || 0;
                (body.messages || []).forEach(function (m) {
                  if (problems.messages.length < 3 && problems.messages.indexOf(m) < 0) problems.messages.push(m);
                });
              }
              call("POST", "problems", body, keepalive).then(function () { settle(null); }, function (error) { giveBack(error); settle(error); }).then(function () {
                if (keepalive) return;
                problems.busy = false;
                schedule();
              });
            }
            function schedule() {
              if (problems.timer || problems.busy || (!problems.errors && !problems.app.length)) return;
              problems.timer = setTimeout(function () { post(false); }, Math.max(0, problems.last + 2000 - Date.now()));
            }
            return { post: post, schedule: schedule };
          }
          function problemText(text) { return String(text).replace(/[\u0000-\u001f\u007f]+/g, " ").slice(0, 120); }
          function noteProblem(poster, message) {
            problems.errors++;
            if (problems.messages.length < 3) {
              var m = problemText(message());
              if (m && problems.messages.indexOf(m) < 0) problems.messages.push(m);
            }
            poster.schedule();
          }

          function serveBackend() {
            // POSTs name the version this page was served with, so the agent can refuse an
            // acknowledgement (or a switch) from a page of another version: an old tab.
            function call(method, name, extra, keepalive) {
              var init = { method: method, cache: "no-store", credentials: "same-origin", headers: { "X-Clientctl-Shim": "1" } };
              if (method === "POST") {
                var body = extra || {};
                if (cfg.version) body.version = cfg.version;
                init.headers["Content-Type"] = "application/json";
                init.body = JSON.stringify(body);
                if (keepalive) init.keepalive = true;
              }
              return fetch(cfg.base + name, init)
                .then(function (r) {
                  return r.json().catch(function () { return {}; }).then(function (body) {
                    if (!r.ok) { var e = new Error(body.error || ("HTTP " + r.status + " from " + cfg.base + name)); e.body = body; e.status = r.status; throw e; }
                    return body;
                  });
                });
            }
            var poster = problemPoster(call);
            return {
              startupDidComplete: function () { return call("POST", "startup-complete"); },
              // From the acknowledgement on, in the top window only (a frame's errors are not
              // counted): errors of scripts of the page's own origin (another origin's are
              // muted "Script error." or not the app's) and every unhandled rejection.
              watchProblems: function () {
                if (problems.watching || typeof window.addEventListener !== "function") return;
                problems.watching = true;
                window.addEventListener("pagehide", function () { poster.post(true); });
                if (window.top !== window) return;
                var own = window.location.origin + "/";
                window.addEventListener("error", function (e) {
                  if (!e || typeof e.filename !== "string" || e.filename.indexOf(own) !== 0) return;
                  noteProblem(poster, function () {
                    var path = e.filename.slice(own.length - 1).split(/[?#]/)[0];
                    return (e.message || "error") + " @ " + path + ":" + (e.lineno || 0);
                  });
                });
                window.addEventListener("unhandledrejection", function (e) {
                  noteProblem(poster, function () {
                    var r = e && e.reason;
                    try { return "Unhandled rejection: " + (r && r.message !== undefined ? r.message : String(r)); } catch (x) { return "Unhandled rejection"; }
                  });
                });
              },
              // The app's own problem: counted with the next post; resolves once it was sent,
              // rejects with the server's reason for a kind that is not a word.
              reportProblem: function (kind) {
                var w = problems.waiting[kind];
                if (!w) {
                  if (problems.kinds >= 20) return Promise.reject(new Error("reportProblem: more than 20 kinds within 2 seconds; " + kind + " was not counted"));
                  problems.kinds++;
                  w = problems.waiting[kind] = {};
                  w.promise = new Promise(function (resolve, reject) { w.resolve = resolve; w.reject = reject; });
                }
                if (problems.app.length < 20) problems.app.push(kind);
                poster.schedule();
                return w.promise;
              },
              checkForUpdates: function () { return call("POST", "check"); },
              switchToPendingVersion: function () { return call("POST", "switch-to-pending"); },
              status: function () { return call("GET", "status"); },
              getChannel: function () { return call("GET", "channel"); },
              setChannel: function (name) { return call("POST", "set-channel", { channel: name }); },
              // A lease dies with its page: let go when the page goes (and the agent caps it).
              holdUpdate: function (seconds) {
                if (!lease.registered && typeof window.addEventListener === "function") {
                  lease.registered = true;
                  window.addEventListener("pagehide", function () { call("POST", "hold", { lease: lease.id, seconds: 0 }, true).catch(function () {}); });
                }
                return call("POST", "hold", { lease: lease.id, seconds: seconds });
              },
              // The page's download hold, a lease of its own that also ends with the page.
              holdDownloads: function (seconds) {
                var id = "page-" + lease.id;
                if (!lease.downloads && typeof window.addEventListener === "function") {
                  lease.downloads = true;
                  window.addEventListener("pagehide", function () { call("POST", "hold-downloads", { lease: id, seconds: 0 }, true).catch(function () {}); });
                }
                return call("POST", "hold-downloads", { lease: id, seconds: seconds });
              },
              // Input resets the device's idle time: at most one report every 5 s.
              watchInput: function () {
                if (typeof window.addEventListener !== "function") return;
                var last = 0;
                function input() {
                  var now = Date.now();
                  if (now - last < 5000) return;
                  last = now;
                  call("POST", "activity").catch(function () {});
                }
                ["keydown", "pointerdown", "pointermove", "wheel", "touchstart"].forEach(function (name) {
                  window.addEventListener(name, input, { capture: true, passive: true });
                });
              },
              listen: function () {
                if (typeof EventSource !== "function") return;
                var source = new EventSource(cfg.base + "events");
                source.addEventListener("updateAvailable", function (e) { ready(JSON.parse(e.data).version); });
                source.addEventListener("error", function (e) { if (e.data) failed(JSON.parse(e.data).message); });
                // After a watchdog rollback the server tells listening pages to load the good version.
                source.addEventListener("reload", function () { window.location.reload(); });
              },
              // A page on trial may never register anything (it may throw first). While the
              // version is on trial, poll status every second with short requests (no open
              // stream, so headless browsers' virtual time still runs); if the served version
              // changes — a rollback — reload onto the good version.
              // After the trial, poll every 10 s (every 2 s while a version is staged): when the
              // staged version's apply policy allows it (switchNow), the page switches and
              // reloads onto the new version.
              watchTrial: function () {
                var initial = null, failures = 0;
                function poll() {
                  call("GET", "status").then(function (s) {
                    failures = 0;
                    if (initial === null) initial = s.current;
                    else if (s.current !== initial) { window.location.reload(); return; }
                    if (s.switchNow && !s.inTrial) {
                      // The staged version's apply policy lets this page switch now.
                      call("POST", "switch-to-pending").then(function () { window.location.reload(); }, function () { setTimeout(poll, 2000); });
                      return;
                    }
                    setTimeout(poll, s.inTrial ? 1000 : s.pending ? 2000 : 10000);
                  }, function () { if (++failures < 10) setTimeout(poll, 2000); });
                }
                poll();
              }
            };
          }

          function capacitorBackend() {
            function plugin() {
              var p = window.Capacitor && window.Capacitor.Plugins && window.Capacitor.Plugins[cfg.plugin];
              if (!p) throw new Error("Capacitor plugin " + cfg.plugin + " is not available");
              return p;
            }
            function call(name) {
              try { return Promise.resolve(plugin()[name]()); } catch (e) { return Promise.reject(e); }
            }
            return {
              startupDidComplete: function () { return call("startupDidComplete"); },
              checkForUpdates: function () { return call("checkForUpdates"); },
              switchToPendingVersion: function () { return call("switchToPendingVersion"); },
              status: function () { return call("status"); },
              holdUpdate: function () { return Promise.reject(new Error("holdUpdate is not supported by this host")); },
              holdDownloads: function () { return Promise.reject(new Error("holdDownloads is not supported by this host")); },
              getChannel: function () { return Promise.reject(new Error("getChannel is not supported by this host")); },
              setChannel: function () { return Promise.reject(new Error("setChannel is not supported by this host")); },
              reportProblem: function () { return Promise.reject(new Error("reportProblem is not supported by this host")); },
              listen: function () {
                var p = plugin();
                p.addListener("updateAvailable", function (e) { ready(e && e.version); });
                p.addListener("error", function (e) { failed((e && e.message) || String(e)); });
              }
            };
          }

          // The native shell (clientctl-shell): WebKit's script message handler "clientctl",
          // whose postMessage returns a promise of the reply (WebKitGTK >= 2.40). Pages are
          // organized once for every host, so the serve backend steps aside when it is there.
          function webkitHandler() {
            return window.webkit && window.webkit.messageHandlers && window.webkit.messageHandlers.clientctl;
          }
          function webkitBackend() {
            function call(action, seconds, channel, kind) {
              var handler = webkitHandler();
              if (!handler) return Promise.reject(new Error("the clientctl message handler is not available"));
              var message = { action: action };
              if (typeof seconds === "number") message.seconds = seconds;
              if (typeof channel === "string") message.channel = channel;
              if (typeof kind === "string") message.kind = kind;
              if (cfg.version) message.version = cfg.version;
              return Promise.resolve(handler.postMessage(message)).then(function (reply) {
                return typeof reply === "string" ? JSON.parse(reply) : (reply || {});
              });
            }
            return {
              startupDidComplete: function () { return call("startup-complete"); },
              checkForUpdates: function () { return call("check"); },
              switchToPendingVersion: function () { return call("switch-to-pending"); },
              status: function () { return call("status"); },
              // The shell ends the lease with the page and its web process.
              holdUpdate: function (seconds) { return call("hold-update", seconds); },
              holdDownloads: function (seconds) { return call("hold-downloads", seconds); },
              getChannel: function () { return call("channel"); },
              setChannel: function (name) { return call("set-channel", undefined, name); },
              // The shell counts the page's errors itself; the app's own go by message.
              reportProblem: function (kind) { return call("report-problem", undefined, undefined, kind); },
              // The shell delivers engine events by evaluating this function in the page.
              listen: function () {
                window.__clientctlEvent = function (name, data) {
                  if (name === "updateAvailable") ready(data && data.version);
                  else if (name === "error") failed((data && data.message) || "update failed");
                };
              }
            };
          }

          var backend = cfg.backend === "capacitor" ? capacitorBackend()
            : (cfg.backend === "webkit" || webkitHandler()) ? webkitBackend() : serveBackend();
          function listen() {
            if (listening) return;
            listening = true;
            try { backend.listen(); } catch (e) { listening = false; failed(e.message); }
          }
          function report(promise, cb, errCb) {
            promise.then(function () { if (cb) cb(); }, function (e) { if (errCb) errCb(e); else failed(e.message); });
          }
          // A promise of the value, also given to cb (or the error to errCb, else onError).
          function settle(promise, cb, errCb) {
            if (cb || errCb) promise.then(function (v) { if (cb) cb(v); }, function (e) { if (errCb) errCb(e); else failed(e.message); });
            return promise;
          }

          if (backend.watchTrial) backend.watchTrial();
          if (backend.watchInput) backend.watchInput();
          function seconds(value, name) {
            var n = Number(value);
            if (!isFinite(n) || n < 0) throw new Error((name || "holdUpdate") + " takes a number of seconds, 0 or more");
            return n;
          }

          window.WebAppLocalServer = {
            startupDidComplete: function (cb) {
              var acknowledged = backend.startupDidComplete();
              if (backend.watchProblems) acknowledged.then(function () { backend.watchProblems(); }, function () {});
              report(acknowledged, cb);
            },
            checkForUpdates: function (cb) { listen(); report(backend.checkForUpdates(), cb); },
            onNewVersionReady: function (cb) { readyCallbacks.push(cb); listen(); },
            switchToPendingVersion: function (cb, errCb) { report(backend.switchToPendingVersion(), cb, errCb); },
            onError: function (cb) { errorCallbacks.push(cb); listen(); },
            localFileSystemUrl: function () { throw new Error("WebAppLocalServer.localFileSystemUrl is not supported"); },
            status: function () { return backend.status(); },
            // Holds the switch to a staged version back for `seconds` (renew before it ends;
            // the agent caps each lease); resolves to {until}. releaseUpdate() lets go.
            holdUpdate: function (value) {
              try { return backend.holdUpdate(seconds(value)); } catch (e) { return Promise.reject(e); }
            },
            releaseUpdate: function () { return backend.holdUpdate(0); },
            // Holds the device's downloads back for `seconds` (a call on a metered link, a
            // video call: renew before it ends; the agent caps each lease); resolves to
            // {until}. 0 lets go; the hold also ends with the page.
            holdDownloads: function (value) {
              try { return backend.holdDownloads(seconds(value, "holdDownloads")); } catch (e) { return Promise.reject(e); }
            },
            // The channel the device follows and those its trust root lets it choose:
            // {channel, choosable, rootChannel[, note]}.
            getChannel: function (cb, errCb) { return settle(backend.getChannel(), cb, errCb); },
            // For testers: follow another channel the trust root lets the device choose, from
            // its next check (checkForUpdates checks now). A refused channel rejects, naming why.
            setChannel: function (name, cb, errCb) {
              var p = typeof name === "string" && name ? backend.setChannel(name) : Promise.reject(new Error("setChannel takes a channel name"));
              return settle(p, cb, errCb);
            },
            // The app's own problem of `kind` (a word of at most 32 letters, digits, '-', '_'
            // or '.'), counted like an error after the acknowledgement (docs/page-errors.md):
            // resolves once sent; rejects naming why for a kind that is not one.
            reportProblem: function (kind) {
              if (typeof kind !== "string") return Promise.reject(new Error("reportProblem takes a kind: a word of at most 32 letters, digits, '-', '_' or '.'"));
              return backend.reportProblem(kind.slice(0, 33));
            }
          };
        }
        """#
}
