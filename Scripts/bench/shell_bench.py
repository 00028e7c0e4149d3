"""Driver of Scripts/bench/shell: times launch → committed trial and samples the memory of
each process tree (see the header of Scripts/bench/shell)."""
import os, re, select, shutil, signal, statistics, subprocess, sys, time

from bench_processes import memory, sample, settle, start_chromium, stop, tree

BIN, WORK, ROUNDS = sys.argv[1], sys.argv[2], int(sys.argv[3])


def wait_for(stream, pattern, roots, deadline, peak):
    """Reads lines from stream until one matches; samples memory meanwhile."""
    buf = b""
    fd = stream.fileno()
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.02)
        sample(roots, peak)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("stream closed before " + pattern)
            buf += chunk
            for line in buf.split(b"\n"):
                if re.search(pattern, line.decode(errors="replace")):
                    return line.decode(errors="replace"), buf
    raise RuntimeError("timed out waiting for " + pattern + ": " + buf.decode(errors="replace")[-500:])


def fresh_root(i, mode):
    root = f"{WORK}/root-{mode}-{i}"
    shutil.copytree(f"{WORK}/template", root, symlinks=True)
    return root


def run_shell(i):
    root = fresh_root(i, "shell")
    peak = [0, 0]
    t0 = time.monotonic()
    p = subprocess.Popen([f"{BIN}/clientctl-shell", "--root", root, "--events", "--exit-after", "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for(p.stdout, r'"kind":"committed"', [p.pid], t0 + 60, peak)
        t = time.monotonic() - t0
        settle([p.pid], peak)
    finally:
        stop([p])
    return t, peak


def run_chromium(i):
    root = fresh_root(i, "chromium")
    peak = [0, 0]
    t0 = time.monotonic()
    serve = subprocess.Popen([f"{BIN}/clientctl", "serve", "--root", root, "--port", "0", "--check-interval", "0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    procs = [serve]
    try:
        line, _ = wait_for(serve.stderr, r"serving http://127\.0\.0\.1:\d+/", [serve.pid], t0 + 60, peak)
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        chromium = start_chromium(url, f"{root}/chromium")
        procs.append(chromium)
        wait_for(serve.stderr, r"completed startup", [serve.pid, chromium.pid], t0 + 60, peak)
        t = time.monotonic() - t0
        settle([serve.pid, chromium.pid], peak)
    finally:
        stop(procs[::-1])
    return t, peak


results = {"shell": [], "chromium": []}
for i in range(ROUNDS):
    for mode, fn in (("shell", run_shell), ("chromium", run_chromium)) if i % 2 == 0 else (("chromium", run_chromium), ("shell", run_shell)):
        t, peak = fn(i)
        results[mode].append((t, peak))
        print(f"round {i + 1} {mode:9s} {t * 1000:7.0f} ms  peak PSS {peak[0] / 1024:6.1f} MiB  RSS {peak[1] / 1024:6.1f} MiB", flush=True)

print()
print("| launch → first paint acknowledged | median | min | max | peak PSS (median) | peak RSS (median) |")
print("|---|---|---|---|---|---|")
for mode, label in (("shell", "clientctl-shell"), ("chromium", "clientctl serve + chromium --app")):
    ts = [t * 1000 for t, _ in results[mode]]
    pss = statistics.median(p[0] for _, p in results[mode]) / 1024
    rss = statistics.median(p[1] for _, p in results[mode]) / 1024
    print(f"| {label} | {statistics.median(ts):.0f} ms | {min(ts):.0f} ms | {max(ts):.0f} ms | {pss:.0f} MiB | {rss:.0f} MiB |")
ratio = statistics.median(t for t, _ in results["shell"]) / statistics.median(t for t, _ in results["chromium"])
print(f"\nshell / (serve + chromium), median time: {ratio:.2f} (goal: at most 0.50)")
