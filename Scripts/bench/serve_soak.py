#!/usr/bin/env python3
"""Soak load for `clientctl serve` (driven by Scripts/bench/serve-soak).

Mixed load on one serve process for DURATION seconds: cached assets, 304 revalidations,
byte ranges, event streams opened and dropped, idle connections held until the server
closes them, and a version switch every SWITCH seconds done as a page would do it
(check, switch-to-pending, startup-complete naming the new version). Samples the serve
process's RSS and open descriptors every second. Prints a JSON summary on stdout.
"""
import http.client, json, os, random, socket, subprocess, sys, threading, time

port, pid, root, release_cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
duration, switch_every = float(sys.argv[5]), float(sys.argv[6])
files = [f"/assets/f{i:03d}.js" for i in range(200)]
stop = time.monotonic() + duration
lock = threading.Lock()
counts = {"asset": 0, "not_modified": 0, "range": 0, "events": 0, "idle_closed": 0, "switches": 0}
errors = []


def count(kind, n=1):
    with lock:
        counts[kind] += n


def error(what):
    with lock:
        if len(errors) < 50:
            errors.append(what)
        counts.setdefault("errors", 0)
        counts["errors"] += 1


def client():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=20)


def assets():
    conn, etags = client(), {}
    while time.monotonic() < stop:
        path = random.choice(files)
        try:
            headers = {"If-None-Match": etags[path]} if path in etags and random.random() < 0.5 else {}
            if random.random() < 0.2:
                headers = {"Range": "bytes=10-99"}
            conn.request("GET", path + "?v=1", headers=headers)
            r = conn.getresponse()
            r.read()
            if r.status == 200:
                etags[path] = r.getheader("ETag")
                count("asset")
            elif r.status == 304:
                count("not_modified")
            elif r.status == 206:
                count("range")
            else:
                error(f"{path}: {r.status}")
        except (OSError, http.client.HTTPException):
            conn.close()  # the server may close idle keep-alive connections; reconnect
            conn = client()


def events():
    while time.monotonic() < stop:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(f"GET /__clientctl/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            data = s.recv(4096)
            if b" 200 " in data.split(b"\r\n")[0]:
                count("events")
            elif b" 503 " not in data:
                error(f"events: {data[:60]!r}")
            s.close()
        except OSError as e:
            error(f"events: {e}")
        time.sleep(0.05)


def idle():
    while time.monotonic() < stop:
        held = []
        for _ in range(50):
            try:
                held.append(socket.create_connection(("127.0.0.1", port), timeout=60))
            except OSError as e:
                error(f"idle connect: {e}")
        for s in held:
            try:
                if s.recv(1) == b"":
                    count("idle_closed")
            except OSError:
                pass
            s.close()


def control(name, version):
    conn = client()
    body = json.dumps({"version": version}) if version else None
    conn.request("POST", f"/__clientctl/{name}", body=body,
                 headers={"X-Clientctl-Shim": "1", "Content-Type": "application/json"})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, json.loads(body or b"{}")


def switches():
    n = 1
    while time.monotonic() + switch_every < stop:
        time.sleep(switch_every)
        n += 1
        version = f"1.{n}.0"
        subprocess.run([release_cmd, version], check=True, stdout=subprocess.DEVNULL)
        status, body = control("check", None)
        if status != 200:
            error(f"check: {status} {body}")
            continue
        status, body = control("switch-to-pending", None)
        if status != 200:
            error(f"switch: {status} {body}")
            continue
        status, body = control("startup-complete", version)
        if status != 200:
            error(f"ack {version}: {status} {body}")
            continue
        count("switches")


def sample(out):
    base = time.monotonic()
    while time.monotonic() < stop:
        try:
            rss = int(next(l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")).split()[1]) // 1024
            fds = len(os.listdir(f"/proc/{pid}/fd"))
        except (OSError, StopIteration):
            error("serve is gone")
            return
        out.append((round(time.monotonic() - base), rss, fds))
        time.sleep(1)


samples = []
threads = [threading.Thread(target=f, daemon=True) for f in [assets, assets, assets, events, idle, switches]]
threads.append(threading.Thread(target=sample, args=(samples,), daemon=True))
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=max(0, stop - time.monotonic()) + 60)
warm = [s for s in samples if s[0] >= min(30, duration / 4)]
first_minute = [s[1] for s in warm[:60]] or [0]
last_minute = [s[1] for s in warm[-60:]] or [0]
print(json.dumps({
    "seconds": duration, "counts": counts, "errors": errors,
    "rss_mib": {"first_minute_max": max(first_minute), "last_minute_max": max(last_minute),
                "max": max(s[1] for s in samples) if samples else 0},
    "fds": {"min": min(s[2] for s in samples) if samples else 0, "max": max(s[2] for s in samples) if samples else 0,
            "last": samples[-1][2] if samples else 0},
    "samples": samples,
}))
