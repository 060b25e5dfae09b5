#!/usr/bin/env python3
"""`make bench`: measures diligenced and diligencectl against the floor this machine allows.

Every figure is measured in the same run as its reference (the C reference server in
bench/ref-server.c, socat, `diligencectl version`), so a busy machine moves both and the ratio
stays meaningful. Prints one table and writes it as JSON (docs/performance.md explains each
row and how it is measured).

    bench/run.py --bin-dir DIR --helpers DIR [--quick] [--json PATH]

DIR holds the release diligenced and diligencectl; --helpers holds the compiled ref-server and
client. --quick shortens the long windows (10 s instead of 60 s, fewer phases) for a look while
working; the committed table comes from a full run.
"""

import argparse
import json
import math
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import uuid
import threading
import time

REQUEST = b'{"command":"status"}\n'
MIB = 1024 * 1024


def log(text):
    print(f"bench: {text}", file=sys.stderr, flush=True)


# MARK: - Processes under test


class Daemon:
    """A diligenced with its own directories, started the way systemd would (NOTIFY_SOCKET)."""

    def __init__(self, binary, root, database=None, name="daemon", extra_env=None):
        self.root = root
        self.socket = os.path.join(root, "run", "diligenced.sock")
        self.database = database or os.path.join(root, "data", "diligence.sqlite3")
        for sub in ("run", "data", "config"):
            os.makedirs(os.path.join(root, sub), mode=0o700, exist_ok=True)
        self.notify_path = os.path.join(root, "notify.sock")
        if os.path.exists(self.notify_path):
            os.unlink(self.notify_path)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        self.notify.settimeout(30)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": root,
            "XDG_RUNTIME_DIR": os.path.join(root, "run"),
            "XDG_DATA_HOME": os.path.join(root, "data"),
            "XDG_CONFIG_HOME": os.path.join(root, "config"),
            "NOTIFY_SOCKET": self.notify_path,
            **(extra_env or {}),
        }
        self.stderr = open(os.path.join(root, f"{name}.log"), "ab")
        started = time.monotonic()
        self.process = subprocess.Popen(
            [binary, "--socket", self.socket, "--database", self.database],
            env=env, stdin=subprocess.DEVNULL, stdout=self.stderr, stderr=self.stderr)
        while True:
            datagram = self.notify.recv(4096)
            if b"READY=1" in datagram.split(b"\n"):
                break
        self.ready_seconds = time.monotonic() - started
        self.pid = self.process.pid
        # Keep reading, as systemd does: sd_notify blocks once the socket's queue is full.
        self.notify.settimeout(0.2)
        self.stopping = threading.Event()
        self.drainer = threading.Thread(target=self._drain, daemon=True)
        self.drainer.start()

    def _drain(self):
        while not self.stopping.is_set():
            try:
                self.notify.recv(4096)
            except TimeoutError:
                pass

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.stopping.set()
        self.drainer.join()
        self.notify.close()
        self.stderr.close()


class Connection:
    """One open connection speaking the line protocol (docs/protocol.md)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""

    def line(self):
        """The next line, with the CLOCK_MONOTONIC time at which its last byte arrived."""
        arrived = time.monotonic()
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the daemon closed the connection")
            self.buffer += chunk
            arrived = time.monotonic()
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line), arrived

    def request(self, command, **arguments):
        self.sock.sendall(json.dumps({"command": command, **arguments}).encode() + b"\n")
        response, _ = self.line()
        if not response.get("ok"):
            raise RuntimeError(f"{command} failed: {response}")
        return response["result"]

    def close(self):
        self.sock.close()


def run_json(args):
    """Runs a helper that prints one JSON object."""
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


# MARK: - /proc readings


def proc_status(pid, key, task=None):
    path = f"/proc/{pid}/task/{task}/status" if task else f"/proc/{pid}/status"
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """utime + stime of the whole process (all threads), /proc/<pid>/stat fields 14 and 15."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory(pid):
    """VmRSS in MiB, split into anonymous memory (heap, SQLite's cache) and file pages (code
    and libraries, paged in the first time a code path runs)."""
    return {key: proc_status(pid, field) / 1024
            for key, field in (("rss_mib", "VmRSS"), ("anon_mib", "RssAnon"), ("file_mib", "RssFile"))}


def switches_by_thread(pid):
    counts = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            counts[tid] = (proc_status(pid, "voluntary_ctxt_switches", tid)
                           + proc_status(pid, "nonvoluntary_ctxt_switches", tid))
        except FileNotFoundError:
            pass
    return counts


def wakeups(pid, seconds):
    """Context switches of every thread of `pid` over `seconds`, sampled once a second (a thread
    that appears meanwhile counts whole). Reading /proc does not wake the process."""
    before = switches_by_thread(pid)
    cpu_before = cpu_seconds(pid)
    total = 0
    per_second = []
    for _ in range(int(seconds)):
        time.sleep(1)
        now = switches_by_thread(pid)
        delta = sum(count - before.get(tid, 0) for tid, count in now.items())
        per_second.append(delta)
        total += delta
        before = {**before, **now}
    return {"switches": total, "per_second": per_second, "threads": len(before),
            "cpu_ms": round((cpu_seconds(pid) - cpu_before) * 1000, 1), "seconds": seconds}


def idle_and_running_wakeups(daemon, window, task, settle, what=""):
    """The daemon's wake-ups over `window` s idle (after `settle` s), then while a one-hour
    work phase of a new task `task` runs (removed afterwards)."""
    log(f"idle daemon{what}, {window} s")
    time.sleep(settle)
    idle = wakeups(daemon.pid, window)
    log(f"running phase{what}, {window} s")
    control = Connection(daemon.socket)
    control.request("task_add", name=task, work=3600, autostart="none")
    control.request("start", task=task)
    time.sleep(1)
    running = wakeups(daemon.pid, window)
    control.request("stop")
    control.request("task_remove", task=task, confirm=True)
    control.close()
    return {"idle": idle, "running": running}


# MARK: - Measurements


def presence_wakeups(daemon_binary, root, window):
    """Wake-ups of a daemon connected to a private system bus and session bus (dbus-daemon),
    subscribed to logind's signals and the screen saver's (docs/presence.md): idle, then while
    a one-hour work phase runs. Nothing owns logind's or the screen saver's name on these buses,
    so the subscriptions stay open and silent, as on a desktop where nobody locks."""
    buses = {}
    processes = []
    for name in ("system", "session"):
        directory = os.path.join(root, "presence", name)
        os.makedirs(directory, exist_ok=True)
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1",
                                f"--address=unix:path={directory}/bus"], stdout=subprocess.PIPE, text=True)
        processes.append(bus)
        buses[name] = bus.stdout.readline().strip()
    daemon = Daemon(daemon_binary, os.path.join(root, "presence", "daemon"), name="presence",
                    extra_env={"DBUS_SYSTEM_BUS_ADDRESS": buses["system"],
                               "DBUS_SESSION_BUS_ADDRESS": buses["session"]})
    try:
        # A new bus connection settles for a moment before the window starts.
        return idle_and_running_wakeups(daemon, window, "Bench away", settle=2, what=" with presence sources connected")
    finally:
        daemon.stop()
        for bus in processes:
            bus.terminate()
            bus.wait()



def hyperfine_status(ctl, socat_request, socket_path, runs, out_dir):
    """`diligencectl status` and socat sending the same request, whole processes, same run."""
    export = os.path.join(out_dir, "hyperfine-status.json")
    subprocess.run([
        "hyperfine", "-N", "--style", "none", "--warmup", "20", "--runs", str(runs),
        "--export-json", export,
        "-n", "diligencectl", f"{ctl} --socket {socket_path} status",
        "-n", "socat", f"socat OPEN:{socat_request},rdonly!!STDOUT UNIX-CONNECT:{socket_path}",
    ], check=True, stdout=subprocess.DEVNULL)
    with open(export) as f:
        results = {r["command"]: r for r in json.load(f)["results"]}
    return {name: {"median_ms": r["median"] * 1000, "mean_ms": r["mean"] * 1000,
                   "stddev_ms": (r["stddev"] or 0) * 1000, "runs": len(r["times"])}
            for name, r in results.items()}


def process_start(args, runs):
    """Median wall time of a whole short-lived process, started the way Daemon starts one."""
    times = []
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        times.append(time.monotonic() - started)
    return statistics.median(times)


def lateness(socket_path, phases):
    """Chained one-second phases (autostart all): when each phase_completed event arrives,
    against the deadline computed from the moment `start` was sent (an upper bound on the real
    start, so lateness is if anything overstated by one round trip)."""
    control = Connection(socket_path)
    control.request("task_add", name="Bench chain", work=1, short_break=1, long_break=1,
                    long_break_every=4, autostart="all")
    watch = Connection(socket_path)
    watch.sock.sendall(b'{"command":"watch"}\n')
    watch.line()  # {"ok":true,...}
    watch.line()  # the first status event
    started = time.monotonic()
    control.request("start", task="Bench chain")
    late = []
    planned = 0.0
    while len(late) < phases:
        event, arrived = watch.line()
        if event.get("event") == "phase_completed":
            planned += 1.0  # every phase of "Bench chain" lasts one second
            late.append((arrived - (started + planned)) * 1000)
    control.request("stop")
    control.request("task_remove", task="Bench chain", confirm=True)
    control.close()
    watch.close()
    ordered = sorted(late)
    tenth = max(1, len(late) // 10)
    return {
        "phases": len(late),
        "median_ms": statistics.median(late),
        "p99_ms": ordered[math.ceil(len(ordered) * 0.99) - 1],  # nearest rank
        "max_ms": ordered[-1],
        "min_ms": ordered[0],
        # Cumulative drift: does lateness grow along the chain? Median of the last tenth minus
        # median of the first tenth (a chain re-armed from each firing would grow every phase).
        "drift_ms": statistics.median(late[-tenth:]) - statistics.median(late[:tenth]),
        "lateness_ms": [round(x, 3) for x in late],
    }


def disk_flushes(directory, count):
    """The floor under a phase end: write 4 KiB and fsync, `count` times, on the disk that holds
    the database (SQLite's WAL commit with synchronous=FULL does one such flush)."""
    path = os.path.join(directory, "fsync-probe")
    times = []
    with open(path, "wb", buffering=0) as f:
        for _ in range(count):
            started = time.monotonic()
            f.write(b"\0" * 4096)
            os.fsync(f.fileno())
            times.append((time.monotonic() - started) * 1000)
    os.unlink(path)
    ordered = sorted(times)
    return {"count": count, "median_ms": statistics.median(times),
            "p99_ms": ordered[math.ceil(count * 0.99) - 1], "max_ms": ordered[-1]}


def churn(helpers, socket_path, requests, phases):
    """`requests` status requests and `phases` phases (start + skip), for the memory figure."""
    run_json([os.path.join(helpers, "client"), "rtt", socket_path, str(requests)])
    control = Connection(socket_path)
    if not any(t["name"] == "Bench churn" for t in control.request("task_list")["tasks"]):
        control.request("task_add", name="Bench churn", work=3600, short_break=600, long_break=900,
                        autostart="none")
    control.request("start", task="Bench churn")
    for i in range(phases):
        control.request("skip")
        if i < phases - 1:
            control.request("start")
    control.request("stop")
    control.close()


def reads_behind_a_locked_write(socket_path, database, seconds, samples):
    """`status` round trips while a write waits for another process's lock: `sqlite3` holds
    the database's write lock for `seconds`, one connection sends `task_add` (it waits for the
    lock), another times `samples` status requests meanwhile. The reference: the same requests
    with nothing locked. The write then answers database_locked (the lock outlasts its 2 s)."""
    def timed(connection, count):
        times = []
        for _ in range(count):
            start = time.monotonic()
            connection.sock.sendall(REQUEST)
            connection.line()
            times.append((time.monotonic() - start) * 1000)
        return times

    reader = Connection(socket_path)
    free = timed(reader, samples)
    holder = subprocess.Popen(["sqlite3", database, "BEGIN IMMEDIATE;", f".shell sleep {seconds}", "COMMIT;"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        writer = Connection(socket_path)
        writer.sock.sendall(b'{"command":"task_add","name":"Bench locked"}\n')
        time.sleep(0.05)
        locked = timed(reader, samples)
        answer, _ = writer.line()
        writer.close()
    finally:
        holder.wait()
    reader.close()
    return {"free_median_ms": statistics.median(free), "locked_median_ms": statistics.median(locked),
            "locked_max_ms": max(locked), "locked_p99_ms": sorted(locked)[int(len(locked) * 0.99) - 1],
            "write_answer": answer.get("error", {}).get("code", "ok"), "samples": samples}


def big_database(daemon_binary, root, sessions):
    """A database holding `sessions` recorded sessions, written directly with the sqlite3 CLI
    (one transaction) after a daemon created the schema."""
    path = os.path.join(root, "big", "data", "diligence.sqlite3")
    if os.path.exists(path):
        shutil.rmtree(os.path.join(root, "big"))
    Daemon(daemon_binary, os.path.join(root, "big"), name="create").stop()
    now = time.time()
    # One session every 90 s going back from now (~2.9 years for a million), a tenth skipped.
    sql = f"""
        BEGIN;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {sessions})
        INSERT INTO sessions (task_id, start, end, planned_seconds, focused_seconds, pauses, outcome, source)
        SELECT (i % 7) + 1, {now} - i * 90.0 - 60, {now} - i * 90.0, 60, 60, i % 3,
               CASE WHEN i % 10 = 0 THEN 'skipped' ELSE 'completed' END, 'bench'
        FROM n;
        COMMIT;
        PRAGMA wal_checkpoint(TRUNCATE);
    """
    subprocess.run(["sqlite3", path], input=sql, text=True, check=True, stdout=subprocess.DEVNULL)
    count = int(subprocess.run(["sqlite3", path, "SELECT count(*) FROM sessions"], check=True,
                               capture_output=True, text=True).stdout)
    return path, count


def export_while_status(daemon_binary, root, database, interval=0.01):
    """`export` of every session (each with a note, as the finding had) on one connection, read
    as fast as it comes, while another connection asks `status` every `interval` seconds: the
    status round trips during it, the export's time and size, and the daemon's peak RSS (VmHWM,
    which an earlier start on this database left at its start's figure: the daemon is new)."""
    subprocess.run(["sqlite3", database, "UPDATE sessions SET note = 'Chapter ' || (id % 97) || ': a note of about forty bytes'; "
                    "PRAGMA wal_checkpoint(TRUNCATE);"], check=True, stdout=subprocess.DEVNULL)
    daemon = Daemon(daemon_binary, os.path.dirname(os.path.dirname(database)), database=database, name="export")
    try:
        before = memory(daemon.pid)
        exporter = Connection(daemon.socket)
        status = Connection(daemon.socket)
        status.request("status")
        result = {}

        def read_export():
            total, last = 0, b""
            while not last.endswith(b"\n"):
                last = exporter.sock.recv(1 << 20)
                if not last:
                    break
                total += len(last)
            result["bytes"] = total

        started = time.monotonic()
        exporter.sock.sendall(b'{"command":"export","format":"jsonl"}\n')
        reader = threading.Thread(target=read_export)
        reader.start()
        latencies = []
        while reader.is_alive():
            sent = time.perf_counter()
            status.request("status")
            latencies.append((time.perf_counter() - sent) * 1000)
            time.sleep(interval)
        reader.join()
        seconds = time.monotonic() - started
        latencies.sort()
        return {"export_s": seconds, "bytes": result.get("bytes", 0), "samples": len(latencies),
                "status_p50_ms": latencies[len(latencies) // 2], "status_p99_ms": latencies[int(len(latencies) * 0.99)],
                "status_max_ms": latencies[-1], "rss_before_mib": before["rss_mib"],
                "rss_peak_mib": proc_status(daemon.pid, "VmHWM") / 1024, "rss_after_mib": memory(daemon.pid)["rss_mib"]}
    finally:
        daemon.stop()


def sync_merge(daemon_binary, root, sessions, window):
    """Another device's journal (docs/sync.md) of `sessions` sessions delivered into the sync
    folder as Syncthing does (a temporary file renamed into place): the time until `history`
    shows the newest (the merge writes them in one transaction; `stats all` then counts them
    all); then one newer session appended (the file delivered again), the time until `history`
    shows it, five times; the daemon's wake-ups while the folder is quiet; the journal's bytes
    per session; then the daemon restarted on that database (the merge state kept in it,
    docs/sync.md): start to READY=1, its CPU until then and the journal lines it read again, and
    the database's growth per 100 000 merged sessions."""
    base = os.path.join(root, "sync")
    folder = os.path.join(base, "folder")
    os.makedirs(folder)
    daemon = Daemon(daemon_binary, os.path.join(base, "daemon"), name="sync")
    try:
        control = Connection(daemon.socket)
        control.request("sync_enable", directory=folder)
        other, task = str(uuid.uuid4()), str(uuid.uuid4())
        now = time.time()

        def line(counter, change, **members):
            return json.dumps({"v": 1, "device": other, "hlc": [int(now * 1000), counter], "change": change, **members},
                              separators=(",", ":")) + "\n"

        def session(i, start):
            return line(i + 1, "session_recorded", session={
                "id": f"00000000-0000-4000-8000-{i:012x}", "task": task, "device": other, "start": start, "end": start + 60,
                "planned_seconds": 60, "focused_seconds": 60, "pauses": 0, "outcome": "completed"})

        head = line(0, "task_added", task={
            "id": task, "name": "Bench sync", "description": "", "color": "blue", "work_seconds": 1500,
            "short_break_seconds": 300, "long_break_seconds": 900, "long_break_every": 4, "breaks": True,
            "autostart": "none", "focus_mode": False, "goal": 0, "reminder": None, "sound": None, "archived": False})
        # The newest first: history's latest session is the first line.
        body = "".join(session(i, now - (i + 1) * 120.0) for i in range(sessions))
        journal = os.path.join(folder, f"{other}.jsonl")

        def deliver(text):
            temporary = os.path.join(folder, ".syncthing.tmp")
            with open(temporary, "w") as f:
                f.write(text)
            started = time.monotonic()
            os.rename(temporary, journal)
            return started

        def shown_after(started, i):
            latest = f"00000000-0000-4000-8000-{i:012x}"
            while control.request("history", limit=1)["sessions"][-1:] == [] or \
                    control.request("history", limit=1)["sessions"][-1]["uuid"] != latest:
                time.sleep(0.002)
            return time.monotonic() - started

        result = {"sessions": sessions, "merge_s": shown_after(deliver(head + body), 0),
                  "bytes_per_session": len(body.encode()) / sessions}
        result["counted"] = control.request("stats", period="all")["recorded"]
        latencies = []
        for n in range(5):
            body += session(sessions + n, now + n * 100.0)
            latencies.append(shown_after(deliver(head + body), sessions + n) * 1000)
        result["latency_ms"] = statistics.median(latencies)
        control.close()
        time.sleep(1)
        result["quiet"] = wakeups(daemon.pid, window)
    finally:
        daemon.stop()
    result["restart"] = restart_merged(daemon_binary, os.path.join(base, "daemon"), sessions)
    return result


def restart_merged(daemon_binary, root, sessions):
    """A daemon started on a database that merged `sessions` sessions of another device: start
    to READY=1 (the merge state restored from the database and the journals read from the kept
    positions happen before it), the daemon's CPU time by then, and the journal lines it read,
    from its log (EVENT=sync_merge_started). The database's size is taken before the start (after
    a checkpoint: the daemon's stop leaves the WAL merged) and compared with a sessions-only
    figure: the kept state's bytes per 100 000 sessions."""
    database = os.path.join(root, "data", "diligence.sqlite3")
    size = os.path.getsize(database)
    log_path = os.path.join(root, "sync.log")
    with open(log_path, "rb") as f:
        log_before = len(f.read())
    daemon = Daemon(daemon_binary, root, name="sync")
    try:
        cpu = cpu_seconds(daemon.pid)
        ready = daemon.ready_seconds
    finally:
        daemon.stop()
    with open(log_path, "rb") as f:
        started = [line for line in f.read()[log_before:].decode(errors="replace").splitlines()
                   if "event=sync_merge_started" in line]
    lines = int(started[-1].split("lines=")[1].split()[0].rstrip(")")) if started else -1
    kept = sqlite_bytes(database, ["sync_sessions", "sync_registers", "sync_cursors"])
    return {"ready_s": ready, "cpu_s": cpu, "lines_read": lines, "database_bytes": size,
            "kept_bytes_per_100k": kept * 100_000 / sessions if kept is not None else None}


def sqlite_bytes(database, tables):
    """Bytes the pages of `tables` (and their indexes) take in `database` (SQLite's dbstat), None
    where dbstat is missing."""
    try:
        import sqlite3
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        marks = ",".join("?" * len(tables))
        total = connection.execute(f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks})", tables).fetchone()[0]
        connection.close()
        return total or 0
    except Exception:
        return None


def ready_times(daemon_binary, root, database, runs):
    times = []
    for _ in range(runs):
        daemon = Daemon(daemon_binary, root, database=database, name="ready")
        times.append(daemon.ready_seconds)
        daemon.stop()
    return times


def package_sizes(deb_dir):
    """The size of the .deb `make deb` wrote, of its -dbgsym .deb, the Installed-Size dpkg
    records, and the programs in it."""
    debs = sorted(f for f in os.listdir(deb_dir) if f.startswith("diligence_") and f.endswith(".deb"))
    if not debs:
        raise SystemExit(f"bench: no diligence_*.deb in {deb_dir} (make deb)")
    deb = debs[-1]
    ddeb = deb.replace("diligence_", "diligence-dbgsym_", 1)[:-len(".deb")] + ".deb"
    field = subprocess.run(["dpkg-deb", "--field", os.path.join(deb_dir, deb), "Installed-Size"],
                           check=True, capture_output=True, text=True).stdout
    listing = subprocess.run(["dpkg-deb", "--contents", os.path.join(deb_dir, deb)],
                             check=True, capture_output=True, text=True).stdout
    programs = sum(int(line.split()[2]) for line in listing.splitlines() if line.split()[-1].startswith("./usr/bin/"))
    return {"deb": deb, "deb_bytes": os.path.getsize(os.path.join(deb_dir, deb)),
            "ddeb_bytes": os.path.getsize(os.path.join(deb_dir, ddeb)),
            "installed_kib": int(field), "programs_bytes": programs}


# MARK: - The table


class Table:
    def __init__(self):
        self.rows = []

    def add(self, figure, ours, unit, target, met, reference=None, ratio=None, note=""):
        self.rows.append({"figure": figure, "ours": ours, "reference": reference, "unit": unit,
                          "ratio": ratio, "target": target, "met": met, "note": note})

    def compare(self, figure, ours, reference, unit, bound, higher_is_better=False, note=""):
        ratio = ours / reference if reference else None
        met = ratio is not None and (ratio >= bound if higher_is_better else ratio <= bound)
        target = f"{'≥' if higher_is_better else '≤'} {bound:g} × ref"
        self.add(figure, ours, unit, target, met, reference=reference, ratio=ratio, note=note)

    def add_external(self, line):
        """A row from bench/stats.sh: a JSON object per line (figure, ours, reference, unit,
        ratio, target, met), or `figure | ours | reference | ratio | target | met`."""
        line = line.strip()
        if not line or line.startswith("#"):
            return
        if line.startswith("{"):
            row = json.loads(line)
            self.add(row.get("figure", "?"), row.get("ours"), row.get("unit", ""), row.get("target", ""),
                     row.get("met"), reference=row.get("reference"), ratio=row.get("ratio"),
                     note=row.get("note", ""))
            return
        cells = [c.strip() for c in line.strip("|").split("|")]
        cells += [""] * (6 - len(cells))
        met = {"yes": True, "no": False}.get(cells[5].lower())
        self.add(cells[0], cells[1], "", cells[4], met, reference=cells[2] or None, ratio=cells[3] or None)

    @staticmethod
    def cell(value, unit):
        if value is None:
            return "—"
        if isinstance(value, str):
            return value
        if isinstance(value, int) or float(value).is_integer() and abs(value) >= 1000:
            text = f"{value:,.0f}".replace(",", " ")
        elif abs(value) >= 100:
            text = f"{value:.0f}"
        elif abs(value) >= 10:
            text = f"{value:.1f}"
        else:
            text = f"{value:.2f}"
        return f"{text} {unit}".strip()

    def markdown(self):
        lines = ["| figure | ours | reference | ratio | target | met |", "|---|---|---|---|---|---|"]
        for r in self.rows:
            ratio = r["ratio"]
            ratio_text = "—" if ratio is None else (ratio if isinstance(ratio, str) else f"{ratio:.2f}")
            met = {True: "yes", False: "**NO**", None: "—"}[r["met"]]
            figure = r["figure"] + (f" ({r['note']})" if r["note"] else "")
            lines.append(f"| {figure} | {self.cell(r['ours'], r['unit'])} | "
                         f"{self.cell(r['reference'], r['unit'])} | {ratio_text} | {r['target']} | {met} |")
        return "\n".join(lines)


# MARK: - Main


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--helpers", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="bench/results/latest.json")
    parser.add_argument("--work-dir", default="bench/results/run")
    parser.add_argument("--deb-dir", help="where `make deb` wrote the package (its sizes go in the table)")
    options = parser.parse_args()
    quick = options.quick
    window = 10 if quick else 60
    daemon_binary = os.path.join(options.bin_dir, "diligenced")
    ctl = os.path.join(options.bin_dir, "diligencectl")
    client = os.path.join(options.helpers, "client")

    # The work directory is on the same disk as a user's data (not tmpfs): every recorded
    # session is fsynced, as it would be at home.
    root = os.path.abspath(options.work_dir)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    raw = {"quick": quick, "window_seconds": window, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
           "cpus": os.cpu_count(), "loadavg_before": os.getloadavg()}
    table = Table()

    log("starting diligenced")
    daemon = Daemon(daemon_binary, os.path.join(root, "main"))
    rss_start = memory(daemon.pid)
    raw["ready_fresh_ms"] = daemon.ready_seconds * 1000

    # The reference server answers with exactly the bytes diligenced answers.
    probe = Connection(daemon.socket)
    probe.sock.sendall(REQUEST)
    status_line = probe.buffer
    while b"\n" not in status_line:
        status_line += probe.sock.recv(65536)
    probe.close()
    response_file = os.path.join(root, "status-response.json")
    with open(response_file, "wb") as f:
        f.write(status_line)
    request_file = os.path.join(root, "status-request.json")
    with open(request_file, "wb") as f:
        f.write(REQUEST)
    ref_socket = os.path.join(root, "ref.sock")
    ref = subprocess.Popen([os.path.join(options.helpers, "ref-server"), ref_socket, response_file],
                           stdout=subprocess.PIPE)
    ref.stdout.readline()

    try:
        raw.update(idle_and_running_wakeups(daemon, window, "Bench long", settle=1))

        raw["presence"] = presence_wakeups(daemon_binary, root, window)

        log("diligencectl status vs socat (hyperfine)")
        raw["hyperfine"] = hyperfine_status(ctl, request_file, daemon.socket, 60 if quick else 300, root)

        rtt_count = 5000 if quick else 20000
        log(f"round trips on one connection ({rtt_count})")
        raw["rtt"] = {}
        for side, pid, path in (("ours", daemon.pid, daemon.socket), ("reference", ref.pid, ref_socket)):
            cpu_before = cpu_seconds(pid)
            raw["rtt"][side] = run_json([client, "rtt", path, str(rtt_count)])
            # The server's own CPU time per answer (warm-up requests included): the battery cost.
            raw["rtt"][side]["server_cpu_us"] = (cpu_seconds(pid) - cpu_before) / (rtt_count + 1000) * 1e6

        seconds = 2 if quick else 5
        log(f"throughput, 8 clients, {seconds} s each")
        raw["throughput"] = {"ours": run_json([client, "throughput", daemon.socket, "8", str(seconds)]),
                             "reference": run_json([client, "throughput", ref_socket, "8", str(seconds)])}

        phases = 20 if quick else 100
        log(f"phase-end lateness over {phases} chained 1 s phases")
        raw["lateness"] = lateness(daemon.socket, phases)
        raw["fsync"] = disk_flushes(os.path.dirname(daemon.database), phases)

        requests, churn_phases = (20000, 200) if quick else (100000, 1000)
        log(f"memory after {requests} requests and {churn_phases} phases")
        churn(options.helpers, daemon.socket, requests, churn_phases)
        after = memory(daemon.pid)
        # The same again: growth now is what a day of use adds once every code path has run.
        log("memory after the same load again")
        churn(options.helpers, daemon.socket, requests, churn_phases)
        again = memory(daemon.pid)
        raw["memory"] = {"start": rss_start, "after": after, "again": again,
                         "hwm_mib": proc_status(daemon.pid, "VmHWM") / 1024,
                         "requests": requests, "phases": churn_phases}

        log("status while a write waits for another process's lock")
        raw["locked"] = reads_behind_a_locked_write(daemon.socket, daemon.database, 3, 500 if quick else 2000)

        log("diligencectl version start-up (reference for READY)")
        raw["ctl_version_ms"] = process_start([ctl, "--socket", daemon.socket, "version"], 10 if quick else 30) * 1000
    finally:
        daemon.stop()
        ref.terminate()
        ref.wait()

    sessions = 1_000_000
    log(f"start to READY=1 with {sessions} sessions")
    database, count = big_database(daemon_binary, root, sessions)
    ready = ready_times(daemon_binary, os.path.join(root, "big"), database, 5 if quick else 10)
    raw["ready_big"] = {"sessions": count, "median_ms": statistics.median(ready) * 1000,
                        "times_ms": [round(t * 1000, 2) for t in ready]}

    log(f"status during an export of {count} sessions with notes")
    raw["export"] = export_while_status(daemon_binary, root, database)
    raw["export"]["sessions"] = count

    synced = 100_000
    log(f"another device's journal of {synced} sessions merged (docs/sync.md)")
    raw["sync"] = sync_merge(daemon_binary, root, synced, window)

    # MARK: rows
    e = raw["export"]
    table.add(f"status p99 during an export of {e['sessions']} sessions ({e['samples']} asked)", e["status_p99_ms"], "ms",
              "≤ 20 ms", e["status_p99_ms"] <= 20, note=f"max {e['status_max_ms']:.1f} ms; the export {e['export_s']:.1f} s, "
              f"{e['bytes'] / 2**20:.0f} MiB")
    table.add(f"peak RSS (VmHWM) during an export of {e['sessions']} sessions", e["rss_peak_mib"], "MiB", "≤ 64 MiB",
              e["rss_peak_mib"] <= 64, note=f"{e['rss_before_mib']:.1f} MiB before, {e['rss_after_mib']:.1f} MiB after")
    sync = raw["sync"]
    table.add(f"merging another device's journal of {sync['sessions']} sessions", sync["merge_s"], "s", "≤ 2 s",
              sync["merge_s"] <= 2 and sync["counted"] == sync["sessions"])
    table.add("a new line of another device's journal shown in history, median of 5", sync["latency_ms"], "ms",
              "≤ 200 ms", sync["latency_ms"] <= 200)
    table.add(f"wake-ups while the sync folder is quiet, {sync['quiet']['seconds']} s", sync["quiet"]["switches"], "",
              "0", sync["quiet"]["switches"] == 0)
    table.add("journal bytes per session (for context)", sync["bytes_per_session"], "B", "—", None)
    r = sync["restart"]
    table.add(f"restart with {sync['sessions']} merged sessions: start to READY=1 (for context)", r["ready_s"], "s", "—", None,
              note=f"{r['cpu_s']:.2f} s CPU; {r['lines_read']} journal lines read again")
    table.add(f"restart with {sync['sessions']} merged sessions: journal lines read again", r["lines_read"], "", "0",
              r["lines_read"] == 0)
    if r["kept_bytes_per_100k"] is not None:
        table.add("merge state kept in the database per 100 000 sessions (for context)", r["kept_bytes_per_100k"] / 2**20,
                  "MiB", "—", None, note=f"database {r['database_bytes'] / 2**20:.1f} MiB in all")
    h = raw["hyperfine"]
    table.compare("`diligencectl status`, whole process, wall median", h["diligencectl"]["median_ms"],
                  h["socat"]["median_ms"], "ms", 1.5, note="ref: socat")
    for key, label in (("median_us", "median"), ("p99_us", "p99")):
        table.compare(f"status round trip on one connection, {label}", raw["rtt"]["ours"][key],
                      raw["rtt"]["reference"][key], "µs", 2, note="ref: C server")
    cpu_ours, cpu_ref = raw["rtt"]["ours"]["server_cpu_us"], raw["rtt"]["reference"]["server_cpu_us"]
    table.add("server CPU time per status request (for context)", cpu_ours, "µs", "—", None,
              reference=cpu_ref, ratio=cpu_ours / cpu_ref if cpu_ref else None, note="ref: C server")
    table.compare("status requests per second, 8 clients", raw["throughput"]["ours"]["per_second"],
                  raw["throughput"]["reference"]["per_second"], "/s", 0.5, higher_is_better=True,
                  note="ref: C server")
    late = raw["lateness"]
    n = late["phases"]
    flush = raw["fsync"]
    table.add(f"phase-end lateness median, {n} chained phases (for context)", late["median_ms"], "ms", "—", None,
              reference=flush["median_ms"], ratio=late["median_ms"] / flush["median_ms"],
              note="ref: one 4 KiB write + fsync on the database's disk")
    table.add(f"phase-end lateness p99, {n} chained phases", late["p99_ms"], "ms", "≤ 5 ms", late["p99_ms"] <= 5,
              reference=flush["p99_ms"], ratio=late["p99_ms"] / flush["p99_ms"], note="ref: fsync p99")
    table.add(f"phase-end lateness max, {n} chained phases", late["max_ms"], "ms", "≤ 20 ms", late["max_ms"] <= 20,
              reference=flush["max_ms"], ratio=late["max_ms"] / flush["max_ms"], note="ref: fsync max")
    table.add("cumulative drift (last tenth − first tenth)", late["drift_ms"], "ms", "|drift| ≤ 5 ms",
              abs(late["drift_ms"]) <= 5)
    for key, label in (("idle", "idle daemon"), ("running", "running phase, no watcher"),
                       ("presence_idle", "idle, presence sources connected"),
                       ("presence_running", "running phase, presence sources connected")):
        w = raw["presence"][key.split("_")[1]] if key.startswith("presence") else raw[key]
        table.add(f"{label}, {w['seconds']} s: context switches", w["switches"], "", "0 (no watchdog)",
                  w["switches"] == 0, note=f"{w['cpu_ms']:g} ms CPU")
    m = raw["memory"]
    start, after, again = m["start"], m["after"], m["again"]
    table.add("resident memory after start (VmRSS)", start["rss_mib"], "MiB", "≤ 12 MiB", start["rss_mib"] <= 12,
              note=f"{start['anon_mib']:.1f} MiB anonymous")
    load = f"{m['requests']} requests and {m['phases']} phases"
    growth = after["rss_mib"] - start["rss_mib"]
    table.add(f"RSS growth after {load}", growth, "MiB", "≤ 1 MiB", growth <= 1,
              note=f"anonymous {after['anon_mib'] - start['anon_mib']:+.2f}, "
                   f"file {after['file_mib'] - start['file_mib']:+.2f} MiB")
    steady = again["rss_mib"] - after["rss_mib"]
    table.add(f"RSS growth after {load} more", steady, "MiB", "≤ 1 MiB", steady <= 1,
              note=f"VmHWM {m['hwm_mib']:.1f} MiB")
    table.compare(f"start to READY=1, {count} sessions", raw["ready_big"]["median_ms"],
                  raw["ctl_version_ms"], "ms", 5, note="ref: diligencectl version")
    table.add("start to READY=1, fresh database (for context)", raw["ready_fresh_ms"], "ms", "—", None)
    lk = raw["locked"]
    table.add(f"status while a write waits on a lock, max of {lk['samples']}", lk["locked_max_ms"], "ms", "≤ 10 ms",
              lk["locked_max_ms"] <= 10, reference=lk["free_median_ms"], ratio=lk["locked_max_ms"] / lk["free_median_ms"],
              note=f"ref: status median, nothing locked; median {lk['locked_median_ms']:.3f} ms; the write answered {lk['write_answer']}")

    if options.deb_dir:
        raw["package"] = package_sizes(options.deb_dir)
        p = raw["package"]
        table.add(f"Debian package {p['deb']} (for context)", p["deb_bytes"] / 2**20, "MiB", "—", None,
                  note=f"debug symbols {p['ddeb_bytes'] / 2**20:.1f} MiB more")
        table.add("installed size of the package (for context)", p["installed_kib"] / 1024, "MiB", "—", None,
                  note=f"programs {p['programs_bytes'] / 2**20:.1f} MiB stripped")

    stats = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stats.sh")
    if os.access(stats, os.X_OK):
        log("statistics figures (bench/stats.sh)")
        env = {**os.environ, "BIN_DIR": options.bin_dir, "BENCH_WORK_DIR": root, "QUICK": "1" if quick else ""}
        output = subprocess.run([stats], env=env, check=True, capture_output=True, text=True).stdout
        for line in output.splitlines():
            table.add_external(line)

    raw["loadavg_after"] = os.getloadavg()
    markdown = table.markdown()
    print(markdown)
    os.makedirs(os.path.dirname(os.path.abspath(options.json)), exist_ok=True)
    with open(options.json, "w") as f:
        json.dump({"rows": table.rows, "table": markdown, "raw": raw}, f, indent=2, ensure_ascii=False)
    log(f"wrote {options.json}")
    missed = [r["figure"] for r in table.rows if r["met"] is False]
    if missed:
        log(f"{len(missed)} target(s) missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
