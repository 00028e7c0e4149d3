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
                    if (!r.ok) throw new Error(body.error || ("HTTP " + r.status + " from " + cfg.base + name));
                    return body;
                  });
                });
            }
            return {
              startupDidComplete: function () { return call("POST", "startup-complete"); },
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
            function call(action, seconds, channel) {
              var handler = webkitHandler();
              if (!handler) return Promise.reject(new Error("the clientctl message handler is not available"));
              var message = { action: action };
              if (typeof seconds === "number") message.seconds = seconds;
              if (typeof channel === "string") message.channel = channel;
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
            startupDidComplete: function (cb) { report(backend.startupDidComplete(), cb); },
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
            }
          };
        }
        """#
}
