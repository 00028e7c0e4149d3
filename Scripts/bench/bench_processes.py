"""The processes of a benchmark run, shared by the drivers (shell_bench.py,
real_apps_bench.py): a process and its descendants from /proc, their summed PSS and RSS from
smaps_rollup, a running peak sampled while waiting, Chromium as an app window on a URL, and
stopping process groups."""
import os, signal, subprocess, time


def tree(pid):
    """pid and all its descendants."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def memory(pids):
    """(PSS, RSS) in KiB summed over pids."""
    pss = rss = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1])
        except OSError:
            pass
    return pss, rss


def sample(roots, peak):
    pids = []
    for r in roots:
        pids += tree(r)
    pss, rss = memory(pids)
    peak[0] = max(peak[0], pss)
    peak[1] = max(peak[1], rss)


def settle(roots, peak, seconds=2.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        sample(roots, peak)
        time.sleep(0.02)


def stop(procs):
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except OSError:
            pass
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def start_chromium(url, profile):
    """`chromium --app=URL` with its own profile folder, as a kiosk would run it (no GPU under Xvfb)."""
    return subprocess.Popen(
        ["chromium", f"--app={url}", f"--user-data-dir={profile}", "--no-sandbox", "--no-first-run",
         "--disable-gpu", "--no-default-browser-check", "--disable-sync", "--window-size=1024,768"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
