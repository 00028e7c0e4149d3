"""Driver of Scripts/bench/real-apps: first paint of real apps in the shell and in serve +
Chromium, and the shell's memory over many switches (see the header of Scripts/bench/real-apps).
Reads the lines of Scripts/real-apps (NAME VERSION FOLDER) on stdin."""
import json, os, re, select, shutil, signal, statistics, subprocess, sys, time

from bench_processes import memory, sample, settle, start_chromium, stop, tree

BIN, WORK, ROUNDS, SWITCHES = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
SAMPLE_EVERY = int(os.environ.get("SAMPLE_EVERY", "100"))
APPS = {}
for line in sys.stdin.read().splitlines():
    name, version, folder = line.split(" ", 2)
    APPS[name] = (version, folder)
APP_ID = "com.example.bench"

# The app is on screen: the handbook's front page loaded, or JupyterLab restored with its launcher.
READY = {
    "mkdocs-material": "w.location.pathname === '/app/' && d.readyState === 'complete'",
    "jupyterlite": "w.location.pathname === '/app/lab/index.html' && w.jupyterapp && "
                   "d.querySelector('.jp-Launcher .jp-LauncherCard') && !d.getElementById('jupyterlab-splash')",
}
# After the acknowledgement, in the switch run: check every 250 ms, switch once a version is ready.
SWITCHING = """
  WebAppLocalServer.onNewVersionReady(function () { WebAppLocalServer.switchToPendingVersion(); });
  var again = function () { setTimeout(check, 250); };
  WebAppLocalServer.onError(again);
  function check() { WebAppLocalServer.checkForUpdates(again); }
  check();
"""
DRIVER = """<!doctype html>
<html><head><meta charset="utf-8"><title>bench</title>
<style>html, body { margin: 0; height: 100%; } #app { position: fixed; left: 0; top: 0; width: 100%; height: 100%; border: 0; }</style>
</head><body><iframe id="app" src="app/"></iframe><script>
(function () {
  var frame = document.getElementById('app');
  function ready(w, d) { return READY; }
  function after() { AFTER }
  (function poll() {
    var on = false;
    try { on = ready(frame.contentWindow, frame.contentDocument); } catch (e) {}
    if (!on) return setTimeout(poll, 20);
    requestAnimationFrame(function () { requestAnimationFrame(function () { WebAppLocalServer.startupDidComplete(after); }); });
  })();
})();
</script></body></html>
"""


def run(args):
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def build(name, folder, after="", marker=None):
    """A release folder of ours: the driver page at the root, the app in app/."""
    out = f"{WORK}/build-{name}-{len(os.listdir(WORK))}"
    shutil.copytree(folder, f"{out}/app")
    if marker:
        page = f"{out}/app/index.html"
        with open(page) as f:
            text = f.read()
        with open(page, "w") as f:
            f.write(text.replace("#c80000", marker))
    with open(f"{out}/index.html", "w") as f:
        f.write(DRIVER.replace("READY", READY[name]).replace("AFTER", after))
    return out


def publish(folder, releases, version):
    run([f"{BIN}/clientctl", "publish", folder, "--app", APP_ID, "--channel", "stable", "--version", version,
         "--min-shell", "1.0.0", "--key", f"{WORK}/key.pem", "--out", releases])


def init(root, releases):
    run([f"{BIN}/clientctl", "init", "--root", root, "--app", APP_ID, "--channel", "stable",
         "--manifest-url", f"file://{releases}/stable/manifest.json", "--trust", f"{WORK}/key.pub.pem",
         "--shell-version", "1.0.0", "--startup-timeout", "120"])
    run([f"{BIN}/clientctl", "install", "--root", root])


def own_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmRSS:")).split()[1])


class Lines:
    """Reads a child's output line by line without blocking; samples memory while waiting."""

    def __init__(self, stream):
        self.fd, self.buf, self.seen = stream.fileno(), b"", []

    def wait(self, pattern, deadline, roots=(), peak=None):
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                text = line.decode(errors="replace")
                self.seen.append(text)
                if re.search(pattern, text):
                    return text
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {pattern}: {self.seen[-10:]}")
            ready, _, _ = select.select([self.fd], [], [], 0.02)
            if peak is not None:
                sample(roots, peak)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise RuntimeError(f"output ended before {pattern}: {self.seen[-10:]}")
                self.buf += chunk


def run_shell(template, root, origin=()):
    shutil.copytree(template, root, symlinks=True)
    peak = [0, 0]
    t0 = time.monotonic()
    p = subprocess.Popen([f"{BIN}/clientctl-shell", "--root", root, "--events", "--exit-after", "120", "--check-interval", "0", *origin],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        Lines(p.stdout).wait(r'"kind":"committed"', t0 + 120, [p.pid], peak)
        t = time.monotonic() - t0
        settle([p.pid], peak)
    finally:
        stop([p])
    return t, peak


def run_loopback(template, root):
    return run_shell(template, root, ("--origin", "loopback", "--port", "0"))


def run_chromium(template, root):
    shutil.copytree(template, root, symlinks=True)
    peak = [0, 0]
    t0 = time.monotonic()
    serve = subprocess.Popen([f"{BIN}/clientctl", "serve", "--root", root, "--port", "0", "--check-interval", "0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    procs = [serve]
    try:
        lines = Lines(serve.stderr)
        line = lines.wait(r"serving http://127\.0\.0\.1:\d+/", t0 + 120, [serve.pid], peak)
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        chromium = start_chromium(url, f"{root}/chromium")
        procs.append(chromium)
        lines.wait(r"completed startup", t0 + 120, [serve.pid, chromium.pid], peak)
        t = time.monotonic() - t0
        settle([serve.pid, chromium.pid], peak)
    finally:
        stop(procs[::-1])
    return t, peak


def first_paint():
    rows = []
    for name, (version, folder) in APPS.items():
        releases, template = f"{WORK}/releases-{name}", f"{WORK}/template-{name}"
        publish(build(name, folder), releases, "1.0.0")
        init(template, releases)
        results = {"shell": [], "loopback": [], "chromium": []}
        for i in range(ROUNDS):
            order = (("shell", run_shell), ("loopback", run_loopback), ("chromium", run_chromium))
            for mode, fn in order if i % 2 == 0 else order[::-1]:
                t, peak = fn(template, f"{WORK}/root-{name}-{mode}-{i}")
                results[mode].append((t, peak))
                print(f"{name} round {i + 1} {mode:9s} {t * 1000:7.0f} ms  peak PSS {peak[0] / 1024:6.1f} MiB  RSS {peak[1] / 1024:6.1f} MiB",
                      flush=True)
                shutil.rmtree(f"{WORK}/root-{name}-{mode}-{i}", ignore_errors=True)
        rows.append((name, version, results))
    print()
    print("| app | host | launch → app on screen, acknowledged: median | min | max | peak PSS (median) | peak RSS (median) |")
    print("|---|---|---|---|---|---|---|")
    for name, version, results in rows:
        for mode, label in (("shell", "clientctl-shell"), ("loopback", "clientctl-shell --origin loopback"),
                            ("chromium", "clientctl serve + chromium --app")):
            ts = [t * 1000 for t, _ in results[mode]]
            pss = statistics.median(p[0] for _, p in results[mode]) / 1024
            rss = statistics.median(p[1] for _, p in results[mode]) / 1024
            print(f"| {name} {version} | {label} | {statistics.median(ts):.0f} ms | {min(ts):.0f} ms | {max(ts):.0f} ms "
                  f"| {pss:.0f} MiB | {rss:.0f} MiB |")
    print()
    for name, version, results in rows:
        med = {m: statistics.median(t for t, _ in results[m]) for m in results}
        pss = {m: statistics.median(p[0] for _, p in results[m]) for m in results}
        for mode in ("shell", "loopback"):
            print(f"{name}: {mode} / (serve + chromium), median time {med[mode] / med['chromium']:.2f}, "
                  f"median peak PSS {pss[mode] / pss['chromium']:.2f}")


def switches():
    version, folder = APPS["mkdocs-material"]
    builds = [build("mkdocs-material", folder, SWITCHING), build("mkdocs-material", folder, SWITCHING, marker="#0000c8")]
    releases, root = f"{WORK}/releases-switch", f"{WORK}/root-switch"
    publish(builds[0], releases, "1.0.0")
    init(root, releases)
    t0 = time.monotonic()
    shell = subprocess.Popen([f"{BIN}/clientctl-shell", "--root", root, "--events", "--exit-after", "86400", "--check-interval", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    samples, waits, lines = [], [], Lines(shell.stdout)
    try:
        lines.wait(r'"kind":"committed".*"version":"1\.0\.0"', t0 + 120)
        for n in range(SWITCHES + 1):
            if n % SAMPLE_EVERY == 0 or n == SWITCHES:
                time.sleep(1)
                pss, rss = memory(tree(shell.pid))
                samples.append((n, own_rss(shell.pid), rss, pss, len(tree(shell.pid)) - 1))
                print(f"after {n:4d} switches ({time.monotonic() - t0:6.0f} s): shell RSS {samples[-1][1] / 1024:6.1f} MiB, "
                      f"tree RSS {rss / 1024:6.1f} MiB, PSS {pss / 1024:6.1f} MiB, {samples[-1][4]} child processes", flush=True)
            if n == SWITCHES:
                break
            publish(builds[(n + 1) % 2], releases, f"1.0.{n + 1}")
            if (n + 1) % 50 == 0:
                run([f"{BIN}/clientctl", "prune", "stable", "--out", releases, "--keep", "3"])
            start = time.monotonic()
            lines.wait(r'"kind":"committed".*"version":"1\.0\.%d"' % (n + 1), start + 120)
            waits.append(time.monotonic() - start)
    finally:
        stop([shell])
    fresh = [s for s in lines.seen if '"reason":"fresh-process"' in s]
    errors = [s for s in lines.seen if ('"event":"error"' in s or "webProcessTerminated" in s or "bridgeRefused" in s) and s not in fresh]
    print()
    print("| switches | shell RSS | tree RSS | tree PSS | child processes |")
    print("|---|---|---|---|---|")
    for n, own, rss, pss, kids in samples:
        print(f"| {n} | {own / 1024:.1f} MiB | {rss / 1024:.1f} MiB | {pss / 1024:.1f} MiB | {kids} |")
    base = next((s for s in samples if s[0] == 100), None)
    if base and samples[-1][0] > 100:
        last = samples[-1]
        print(f"\ngrowth from switch 100 to {last[0]}: shell RSS {100 * (last[1] - base[1]) / base[1]:+.1f} %, "
              f"tree RSS {100 * (last[2] - base[2]) / base[2]:+.1f} %, tree PSS {100 * (last[3] - base[3]) / base[3]:+.1f} % (goal: under 10 %)")
    if waits:
        ms = sorted(w * 1000 for w in waits)
        print(f"published → committed, per switch: median {statistics.median(ms):.0f} ms, p90 {ms[int(len(ms) * 0.9)]:.0f} ms, "
              f"max {ms[-1]:.0f} ms; {len(fresh)} fresh web processes; {len(errors)} error, refusal or web-process death events")
    for e in errors[:5]:
        print("  " + e)


run([f"{BIN}/clientctl", "keygen", "--out", f"{WORK}/key"])
if ROUNDS > 0:
    first_paint()
if SWITCHES > 0:
    print()
    switches()
