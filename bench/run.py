#!/usr/bin/env python3
"""`make bench`: measures diligenced and diligencectl against the floor this machine allows.

Every figure is measured in the same run as its reference (the C reference server in
bench/ref-server.c, socat, `diligencectl version`), so a busy machine moves both and the ratio
stays meaningful. Prints one table and writes it as JSON (docs/performance.md explains each
row and how it is measured).

    bench/run.py --bin-dir DIR --helpers DIR [--quick] [--json PATH]
    bench/run.py --bin-dir DIR --helpers DIR --compare-bin-dir OLD [--ref-name NAME] [--rounds N] [--quick]
    bench/run.py --self-test

DIR holds the release diligenced and diligencectl; --helpers holds the compiled ref-server and
client. --quick shortens the long windows (10 s instead of 60 s, fewer phases) for a look while
working; the committed table comes from a full run. --compare-bin-dir (`make bench-compare`)
runs every figure for OLD's programs and DIR's, alternated, and prints new/old per figure.
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
        # A daemon that exits instead (an old build refusing an option) is reported at once.
        self.notify.settimeout(0.5)
        while True:
            try:
                datagram = self.notify.recv(4096)
            except TimeoutError:
                if self.process.poll() is not None:
                    self.stderr.close()
                    with open(os.path.join(root, f"{name}.log"), errors="replace") as f:
                        said = [line.strip() for line in f if line.strip()]
                    raise RuntimeError(f"diligenced exited with status {self.process.returncode} before READY=1"
                                       + (f": {said[-1]}" if said else ""))
                if time.monotonic() - started > 30:
                    self.process.kill()
                    raise RuntimeError("diligenced sent no READY=1 within 30 s")
                continue
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
            error = response.get("error") or {}
            # The code and the message's first sentence: what a side-by-side table's note can hold.
            raise RuntimeError(f"{command} failed: {error.get('code', response)}: "
                               + str(error.get("message", "")).split(". ")[0])
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


def focus_wakeups(daemon_binary, root, window):
    """Wake-ups of a daemon under `[focus] do_not_disturb = yes` beside the real dunst on a
    private session bus (drawing on Xvfb; docs/focus.md): idle, then while a one-hour work phase
    runs with dunst paused by the guard, which then watches the server's name on the bus."""
    missing = [p for p in ("dbus-daemon", "dunst", "dunstctl", "Xvfb") if shutil.which(p) is None]
    if missing:
        raise RuntimeError(f"{', '.join(missing)} missing: apt-get install -y dbus dunst xvfb")
    directory = os.path.join(root, "focus")
    os.makedirs(os.path.join(directory, "daemon", "config", "diligence"), exist_ok=True)
    with open(os.path.join(directory, "daemon", "config", "diligence", "diligenced.conf"), "w") as f:
        f.write("[focus]\ndo_not_disturb = yes\n")
    processes = []
    try:
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1",
                                f"--address=unix:path={directory}/bus"], stdout=subprocess.PIPE, text=True)
        processes.append(bus)
        address = bus.stdout.readline().strip()
        read_end, write_end = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp", "-nolisten", "unix",
                                 "-screen", "0", "640x480x24"], pass_fds=(write_end,),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(xvfb)
        os.close(write_end)
        # The number comes when the server is ready, the newline after it.
        said = b""
        while not said.endswith(b"\n"):
            chunk = os.read(read_end, 64)
            if not chunk:
                break
            said += chunk
        os.close(read_end)
        display = said.decode().strip()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": directory, "DISPLAY": ":" + display,
               "XDG_CONFIG_HOME": os.path.join(directory, "dunst-config"), "DBUS_SESSION_BUS_ADDRESS": address}
        dunst_log = open(os.path.join(directory, "dunst.log"), "ab")
        processes.append(subprocess.Popen(["dunst"], env=env, stdout=dunst_log, stderr=dunst_log))

        def paused():
            run = subprocess.run(["dunstctl", "is-paused"], env=env, capture_output=True, text=True)
            return run.stdout.strip() if run.returncode == 0 else None

        deadline = time.monotonic() + 10
        while paused() is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"dunst did not answer on the bench's bus (see {directory}/dunst.log)")
            time.sleep(0.1)
        daemon = Daemon(daemon_binary, os.path.join(directory, "daemon"), name="focus",
                        extra_env={"DBUS_SESSION_BUS_ADDRESS": address})
        try:
            return idle_and_running_wakeups(daemon, window, "Bench quiet", settle=2, what=" with the focus guard on")
        finally:
            daemon.stop()
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait()


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


def history_stream(build, database, runs=3):
    """`diligencectl history --all` of every session, its output read as it comes (issue 28): the
    time from the start of the process to its first line and to its end, the client's peak RSS
    (wait4's ru_maxrss), and the daemon's RSS before the first run and its peak (VmHWM) after
    the last."""
    daemon = Daemon(build.daemon, os.path.dirname(os.path.dirname(database)), database=database, name="history")
    try:
        Connection(daemon.socket).request("status")
        before = memory(daemon.pid)["rss_mib"]
        first_ms, total_s, client_mib, lines = [], [], [], 0
        for _ in range(runs):
            started = time.perf_counter()
            ctl = subprocess.Popen([build.ctl, "--socket", daemon.socket, "history", "--all"], stdout=subprocess.PIPE)
            if not ctl.stdout.readline():
                raise RuntimeError("history --all printed nothing")
            first_ms.append((time.perf_counter() - started) * 1000)
            lines = 1
            while chunk := ctl.stdout.read(1 << 20):
                lines += chunk.count(b"\n")
            _, status, usage = os.wait4(ctl.pid, 0)
            ctl.returncode = os.waitstatus_to_exitcode(status)
            if ctl.returncode != 0:
                raise RuntimeError(f"history --all exited with status {ctl.returncode}")
            total_s.append(time.perf_counter() - started)
            client_mib.append(usage.ru_maxrss / 1024)
        return {"first_line_ms": sorted(first_ms)[len(first_ms) // 2], "total_s": sorted(total_s)[len(total_s) // 2],
                "client_peak_mib": max(client_mib), "lines": lines, "rss_before_mib": before,
                "rss_peak_mib": proc_status(daemon.pid, "VmHWM") / 1024}
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

    def add(self, figure, ours, unit, target, met, reference=None, ratio=None, note="", higher_is_better=False):
        self.rows.append({"figure": figure, "ours": ours, "reference": reference, "unit": unit,
                          "ratio": ratio, "target": target, "met": met, "note": note,
                          "higher_is_better": higher_is_better})

    def compare(self, figure, ours, reference, unit, bound, higher_is_better=False, note=""):
        ratio = ours / reference if reference else None
        met = ratio is not None and (ratio >= bound if higher_is_better else ratio <= bound)
        target = f"{'≥' if higher_is_better else '≤'} {bound:g} × ref"
        self.add(figure, ours, unit, target, met, reference=reference, ratio=ratio, note=note,
                 higher_is_better=higher_is_better)

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


# MARK: - Figures, in groups


class Build:
    """What one group of figures needs: one build's programs, the helpers, the windows, and a
    directory of its own for the daemons it starts."""

    def __init__(self, bin_dir, helpers, quick, root, deb_dir=None):
        self.bin_dir = bin_dir
        self.daemon = os.path.join(bin_dir, "diligenced")
        self.ctl = os.path.join(bin_dir, "diligencectl")
        self.helpers = helpers
        self.client = os.path.join(helpers, "client")
        self.quick = quick
        self.window = 10 if quick else 60
        self.root = root
        self.deb_dir = deb_dir
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)


def measure_requests(build):
    """One daemon on a fresh database beside the C reference server: wake-ups, `diligencectl
    status` against socat, round trips, throughput, phase-end lateness, memory under load and
    status behind a locked write."""
    quick, window, client = build.quick, build.window, build.client
    raw = {}
    log("starting diligenced")
    daemon = Daemon(build.daemon, os.path.join(build.root, "main"))
    rss_start = memory(daemon.pid)
    raw["ready_fresh_ms"] = daemon.ready_seconds * 1000

    # The reference server answers with exactly the bytes diligenced answers.
    probe = Connection(daemon.socket)
    probe.sock.sendall(REQUEST)
    status_line = probe.buffer
    while b"\n" not in status_line:
        status_line += probe.sock.recv(65536)
    probe.close()
    response_file = os.path.join(build.root, "status-response.json")
    with open(response_file, "wb") as f:
        f.write(status_line)
    request_file = os.path.join(build.root, "status-request.json")
    with open(request_file, "wb") as f:
        f.write(REQUEST)
    ref_socket = os.path.join(build.root, "ref.sock")
    ref = subprocess.Popen([os.path.join(build.helpers, "ref-server"), ref_socket, response_file],
                           stdout=subprocess.PIPE)
    ref.stdout.readline()

    try:
        raw.update(idle_and_running_wakeups(daemon, window, "Bench long", settle=1))

        log("diligencectl status vs socat (hyperfine)")
        raw["hyperfine"] = hyperfine_status(build.ctl, request_file, daemon.socket, 60 if quick else 300, build.root)

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
        churn(build.helpers, daemon.socket, requests, churn_phases)
        after = memory(daemon.pid)
        # The same again: growth now is what a day of use adds once every code path has run.
        log("memory after the same load again")
        churn(build.helpers, daemon.socket, requests, churn_phases)
        again = memory(daemon.pid)
        raw["memory"] = {"start": rss_start, "after": after, "again": again,
                         "hwm_mib": proc_status(daemon.pid, "VmHWM") / 1024,
                         "requests": requests, "phases": churn_phases}

        log("status while a write waits for another process's lock")
        raw["locked"] = reads_behind_a_locked_write(daemon.socket, daemon.database, 3, 500 if quick else 2000)
    finally:
        daemon.stop()
        ref.terminate()
        ref.wait()
    return raw


def wakeup_rows(table, windows):
    for label, w in windows:
        table.add(f"{label}, {w['seconds']} s: context switches", w["switches"], "", "0 (no watchdog)",
                  w["switches"] == 0, note=f"{w['cpu_ms']:g} ms CPU")


def requests_rows(raw, table):
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
    wakeup_rows(table, (("idle daemon", raw["idle"]), ("running phase, no watcher", raw["running"])))
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
    table.add("start to READY=1, fresh database (for context)", raw["ready_fresh_ms"], "ms", "—", None)
    lk = raw["locked"]
    table.add(f"status while a write waits on a lock, max of {lk['samples']}", lk["locked_max_ms"], "ms", "≤ 10 ms",
              lk["locked_max_ms"] <= 10, reference=lk["free_median_ms"], ratio=lk["locked_max_ms"] / lk["free_median_ms"],
              note=f"ref: status median, nothing locked; median {lk['locked_median_ms']:.3f} ms; the write answered {lk['write_answer']}")


def measure_presence(build):
    return {"presence": presence_wakeups(build.daemon, build.root, build.window)}


def presence_rows(raw, table):
    p = raw["presence"]
    wakeup_rows(table, (("idle, presence sources connected", p["idle"]),
                        ("running phase, presence sources connected", p["running"])))


def measure_focus(build):
    return {"focus": focus_wakeups(build.daemon, build.root, build.window)}


def focus_rows(raw, table):
    f = raw["focus"]
    wakeup_rows(table, (("idle, focus guard on beside dunst", f["idle"]),
                        ("running phase, dunst paused by the focus guard", f["running"])))


def measure_ready(build):
    """Start to READY=1 on a database of a million sessions, against a client's start-up."""
    sessions = 1_000_000
    log(f"start to READY=1 with {sessions} sessions")
    database, count = big_database(build.daemon, build.root, sessions)
    ready = ready_times(build.daemon, os.path.join(build.root, "big"), database, 5 if build.quick else 10)
    log("diligencectl version start-up (reference for READY)")
    daemon = Daemon(build.daemon, os.path.join(build.root, "version"))
    try:
        version_ms = process_start([build.ctl, "--socket", daemon.socket, "version"], 10 if build.quick else 30) * 1000
    finally:
        daemon.stop()
    return {"ready_big": {"sessions": count, "median_ms": statistics.median(ready) * 1000,
                          "times_ms": [round(t * 1000, 2) for t in ready]},
            "ctl_version_ms": version_ms}


def ready_rows(raw, table):
    table.compare(f"start to READY=1, {raw['ready_big']['sessions']} sessions", raw["ready_big"]["median_ms"],
                  raw["ctl_version_ms"], "ms", 5, note="ref: diligencectl version")


def measure_export(build):
    """`status` during an export of a million sessions with notes (issue 26, finding 9)."""
    database, count = big_database(build.daemon, build.root, 1_000_000)
    log(f"status during an export of {count} sessions with notes")
    return {"export": {**export_while_status(build.daemon, build.root, database), "sessions": count}}


def export_rows(raw, table):
    e = raw["export"]
    table.add(f"status p99 during an export of {e['sessions']} sessions ({e['samples']} asked)", e["status_p99_ms"], "ms",
              "≤ 20 ms", e["status_p99_ms"] <= 20, note=f"max {e['status_max_ms']:.1f} ms; the export {e['export_s']:.1f} s, "
              f"{e['bytes'] / 2**20:.0f} MiB")
    table.add(f"peak RSS (VmHWM) during an export of {e['sessions']} sessions", e["rss_peak_mib"], "MiB", "≤ 64 MiB",
              e["rss_peak_mib"] <= 64, note=f"{e['rss_before_mib']:.1f} MiB before, {e['rss_after_mib']:.1f} MiB after")


def measure_history(build):
    """`history --all` streamed at a million sessions (issue 28)."""
    database, count = big_database(build.daemon, build.root, 1_000_000)
    log(f"history --all of {count} sessions, streamed")
    return {"history": {**history_stream(build, database), "sessions": count}}


def history_rows(raw, table):
    h = raw["history"]
    table.add(f"history --all first line at {h['sessions']} sessions, median of 3", h["first_line_ms"], "ms", "≤ 50 ms",
              h["first_line_ms"] <= 50, note=f"all {h['lines']} lines in {h['total_s']:.1f} s")
    growth = h["rss_peak_mib"] - h["rss_before_mib"]
    table.add(f"daemon RSS growth during history --all at {h['sessions']} sessions", growth, "MiB", "≤ 16 MiB", growth <= 16,
              note=f"{h['rss_before_mib']:.1f} MiB before, peak {h['rss_peak_mib']:.1f} MiB")
    table.add(f"client peak RSS of history --all at {h['sessions']} sessions", h["client_peak_mib"], "MiB", "≤ 32 MiB",
              h["client_peak_mib"] <= 32)


def measure_sync(build):
    synced = 100_000
    log(f"another device's journal of {synced} sessions merged (docs/sync.md)")
    return {"sync": sync_merge(build.daemon, build.root, synced, build.window)}


def sync_rows(raw, table):
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


def measure_package(build):
    if not build.deb_dir:
        return {}
    return {"package": package_sizes(build.deb_dir)}


def package_rows(raw, table):
    if "package" not in raw:
        return
    p = raw["package"]
    table.add(f"Debian package {p['deb']} (for context)", p["deb_bytes"] / 2**20, "MiB", "—", None,
              note=f"debug symbols {p['ddeb_bytes'] / 2**20:.1f} MiB more")
    table.add("installed size of the package (for context)", p["installed_kib"] / 1024, "MiB", "—", None,
              note=f"programs {p['programs_bytes'] / 2**20:.1f} MiB stripped")


def measure_stats(build):
    """bench/stats.sh's rows: import, `stats year`, `stats all`, the report page."""
    log("statistics figures (bench/stats.sh)")
    stats = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stats.sh")
    env = {**os.environ, "BIN_DIR": build.bin_dir, "BENCH_WORK_DIR": build.root, "QUICK": "1" if build.quick else ""}
    output = subprocess.run([stats], env=env, check=True, capture_output=True, text=True).stdout
    return {"stats_lines": output.splitlines()}


def stats_rows(raw, table):
    for line in raw["stats_lines"]:
        table.add_external(line)


# Every figure belongs to one group: the group's measurement (one build, one directory) and the
# rows it adds to the table. In measuring order; `make bench` and `make bench-compare` both run
# these, so each figure is measured by one piece of code.
GROUPS = [
    ("requests", measure_requests, requests_rows),
    ("presence", measure_presence, presence_rows),
    ("focus", measure_focus, focus_rows),
    ("ready", measure_ready, ready_rows),
    ("export", measure_export, export_rows),
    ("history", measure_history, history_rows),
    ("sync", measure_sync, sync_rows),
    ("package", measure_package, package_rows),
    ("stats", measure_stats, stats_rows),
]
# The table's order: the sync rows first, as docs/performance.md lists them.
ROW_ORDER = ["sync", "requests", "presence", "focus", "ready", "export", "history", "package", "stats"]


# MARK: - Side by side (make bench-compare)


def figure_number(value, unit):
    """A cell's number and unit: a measured float, or the leading number of a bench/stats.sh
    cell ("12.3 ms", "1 190 ms"); None where the cell holds none ("–")."""
    if value is None or isinstance(value, bool):
        return None, unit
    if isinstance(value, (int, float)):
        return value, unit
    words = str(value).replace("\u202f", " ").split()
    digits = []
    for word in words:
        if not word.replace(".", "", 1).replace("-", "", 1).isdigit():
            break
        digits.append(word)
    try:
        number = float("".join(digits))
    except ValueError:
        return None, unit
    return number, " ".join(words[len(digits):]) or unit


def gather(runs):
    """One build's rows over its rounds: {figure: {"values", "unit", "group", "higher_is_better"}}
    in the order first seen, and {group: reason} for each group that failed in some round.
    `runs`: (group, rows or None, reason) per group and round."""
    figures, failed = {}, {}
    for group, rows, reason in runs:
        if rows is None:
            failed.setdefault(group, reason)
            continue
        for row in rows:
            number, unit = figure_number(row["ours"], row["unit"])
            entry = figures.setdefault(row["figure"], {"values": [], "unit": unit, "group": group,
                                                       "higher_is_better": row.get("higher_is_better", False)})
            if number is not None:
                entry["values"].append(number)
            elif row.get("note", "").startswith("n/a: "):
                entry["reason"] = row["note"][len("n/a: "):]  # bench/stats.sh: the command's words
    return figures, failed


def side_by_side(old_runs, new_runs):
    """Rows of `figure | REF | new | new/old`: each build's median over its rounds, and "n/a"
    with the reason where a build has no figure (its group failed, or the build lacks it)."""
    old, old_failed = gather(old_runs)
    new, new_failed = gather(new_runs)
    rows = []
    for figure in list(new) + [f for f in old if f not in new]:
        sides = {}
        notes = []
        for name, figures, failed in (("REF", old, old_failed), ("new", new, new_failed)):
            entry = figures.get(figure)
            if entry and entry["values"]:
                sides[name] = statistics.median(entry["values"])
                if entry["group"] in failed:
                    notes.append(f"{name}: {len(entry['values'])} round(s) measured, another failed: "
                                 f"{failed[entry['group']]}")
            else:
                sides[name] = None
                group = (new.get(figure) or old.get(figure))["group"]
                notes.append(f"{name}: " + failed.get(group, "not measured by this build" if entry is None
                                                       else entry.get("reason", "no number in its cell")))
        entry = new.get(figure) or old.get(figure)
        ratio = sides["new"] / sides["REF"] if sides["new"] is not None and sides["REF"] else None
        rows.append({"figure": figure, "unit": entry["unit"], "ref": sides["REF"], "new": sides["new"],
                     "ratio": ratio, "higher_is_better": entry["higher_is_better"], "note": "; ".join(notes)})
    return rows


def side_by_side_markdown(rows, ref_name):
    lines = [f"| figure | {ref_name} | new | new/old | note |", "|---|---|---|---|---|"]
    previous = ""
    for r in rows:
        figure = r["figure"] + (" (higher is better)" if r["higher_is_better"] else "")
        cells = ["n/a" if r[side] is None else Table.cell(r[side], r["unit"]) for side in ("ref", "new")]
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f}"
        # A failed group's reason once, not on each of its rows.
        note = "as above" if r["note"] and r["note"] == previous else r["note"]
        previous = r["note"]
        lines.append(f"| {figure} | {cells[0]} | {cells[1]} | {ratio} | {note} |")
    return "\n".join(lines)


def failure_reason(error):
    """What a user reads about a group that failed for one build: the program and its last words."""
    if isinstance(error, subprocess.CalledProcessError):
        said = [line.strip() for line in (error.stderr or "").splitlines() if line.strip()]
        program = os.path.basename(str(error.cmd[0] if isinstance(error.cmd, list) else error.cmd))
        return f"{program} exited with status {error.returncode}" + (f": {said[-1]}" if said else "")
    return f"{type(error).__name__}: {error}"


def measure_group(group, measure, rows_of, build):
    """One group for one build: (group, rows, None, raw), or (group, None, reason, None) where it
    failed, so that one build's missing command costs its figures, not the run."""
    try:
        raw = measure(build)
        table = Table()
        rows_of(raw, table)
        return group, table.rows, None, raw
    except Exception as error:  # noqa: BLE001 — any failure of an old build is a reason to print
        log(f"{group} failed for {build.bin_dir}: {failure_reason(error)}")
        return group, None, failure_reason(error), None


def compare(options):
    """Every group, for REF and for new alternated (REF, new, REF, new...) `rounds` times."""
    root = os.path.abspath(options.work_dir)
    shutil.rmtree(root, ignore_errors=True)
    builds = (("old", options.compare_bin_dir), ("new", options.bin_dir))
    results = {"old": [], "new": []}
    raw = {"ref": options.ref_name, "rounds": options.rounds, "quick": options.quick,
           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(),
           "loadavg_before": os.getloadavg(), "old": {}, "new": {}}
    for group, measure, rows_of in GROUPS:
        if group == "package":
            continue  # only `make bench` builds the package
        for round_number in range(1, options.rounds + 1):
            for side, bin_dir in builds:
                log(f"{group}, round {round_number}, {'REF ' + options.ref_name if side == 'old' else 'new'}")
                build = Build(bin_dir, options.helpers, options.quick,
                              os.path.join(root, group, f"{side[0]}{round_number}"))
                name, rows, reason, group_raw = measure_group(group, measure, rows_of, build)
                results[side].append((name, rows, reason))
                raw[side].setdefault(group, []).append(group_raw if reason is None else {"failed": reason})
    order = {group: i for i, group in enumerate(ROW_ORDER)}
    for side in results:
        results[side].sort(key=lambda run: order[run[0]])
    rows = side_by_side(results["old"], results["new"])
    raw["loadavg_after"] = os.getloadavg()
    markdown = side_by_side_markdown(rows, options.ref_name)
    print(f"REF {options.ref_name} ({options.compare_bin_dir}) against new ({options.bin_dir}), "
          f"medians of {options.rounds} round(s) each, alternated; new/old < 1: new is faster or smaller, "
          "except where higher is better")
    print(markdown)
    write_json(options.json, {"rows": rows, "table": markdown, "raw": raw})


def write_json(path, content):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(content, f, indent=2, ensure_ascii=False)
    log(f"wrote {path}")


# MARK: - Self-test


def self_test():
    """The comparison's logic against cases it exists for (no timing: `make lint` runs it)."""
    def rows(*cells):
        return [{"figure": figure, "ours": ours, "unit": unit, "higher_is_better": higher}
                for figure, ours, unit, higher in cells]

    failures = []

    def check(what, got, expected):
        if got != expected:
            failures.append(f"{what}: expected {expected!r}, got {got!r}")

    for value, unit, expected in ((12.5, "ms", (12.5, "ms")), ("9.4 ms", "", (9.4, "ms")),
                                  ("1 190 ms", "", (1190.0, "ms")), ("2.9×", "", (None, "")), ("–", "", (None, "")),
                                  ("-0.03 ms", "", (-0.03, "ms")), (None, "s", (None, "s")), (0, "", (0.0, ""))):
        check(f"figure_number({value!r})", figure_number(value, unit), expected)

    old = [("requests", rows(("rtt", 60.0, "µs", False), ("rps", 100.0, "/s", True)), None),
           ("sync", None, "diligenced exited with status 64: unknown command sync_enable"),
           ("stats", rows(("stats year", "10 ms", "", False)), None),
           ("requests", rows(("rtt", 40.0, "µs", False), ("rps", 300.0, "/s", True)), None),
           ("sync", None, "diligenced exited with status 64: unknown command sync_enable"),
           ("stats", rows(("stats year", "30 ms", "", False)), None),
           ("requests", rows(("rtt", 50.0, "µs", False), ("rps", 200.0, "/s", True)), None),
           ("stats", rows(("stats year", "20 ms", "", False)), None)]
    old.append(("stats", [{"figure": "page", "ours": None, "unit": "", "note": 'n/a: unknown command "report".'}], None))
    old.append(("sync", None, "diligenced exited with status 64: unknown command sync_enable"))
    new = [("requests", rows(("rtt", 25.0, "µs", False), ("rps", 400.0, "/s", True), ("cpu", 5.0, "µs", False)), None),
           ("sync", rows(("merge", 1.5, "s", False), ("latency", 20.0, "ms", False)), None),
           ("stats", rows(("stats year", "40 ms", "", False)), None),
           ("requests", rows(("rtt", 30.0, "µs", False), ("rps", 400.0, "/s", True), ("cpu", 5.0, "µs", False)), None),
           ("sync", rows(("merge", 2.5, "s", False)), None),
           ("stats", None, "stats.sh exited with status 1: import failed"),
           ("stats", rows(("page", "12 ms", "", False)), None)]
    table = {r["figure"]: r for r in side_by_side(old, new)}
    check("figures, in new's order", list(table), ["rtt", "rps", "cpu", "merge", "latency", "stats year", "page"])
    check("a command REF lacks (bench/stats.sh)", table["page"]["note"], 'REF: unknown command "report".; '
          "new: 1 round(s) measured, another failed: stats.sh exited with status 1: import failed")
    check("rtt medians", (table["rtt"]["ref"], table["rtt"]["new"]), (50.0, 27.5))
    check("rtt new/old", table["rtt"]["ratio"], 0.55)
    check("rps new/old", table["rps"]["ratio"], 2.0)
    check("rps direction", table["rps"]["higher_is_better"], True)
    check("a figure REF lacks", (table["cpu"]["ref"], table["cpu"]["ratio"], table["cpu"]["note"]),
          (None, None, "REF: not measured by this build"))
    check("a group REF failed", (table["merge"]["ref"], table["merge"]["new"], table["merge"]["note"]),
          (None, 2.0, "REF: diligenced exited with status 64: unknown command sync_enable"))
    check("stats.sh cells", (table["stats year"]["ref"], table["stats year"]["new"], table["stats year"]["unit"]),
          (20.0, 40.0, "ms"))
    check("a group new failed in a later round", table["stats year"]["note"],
          "new: 1 round(s) measured, another failed: stats.sh exited with status 1: import failed")
    markdown = side_by_side_markdown(side_by_side(old, new), "416e4ec").splitlines()
    check("header", markdown[0], "| figure | 416e4ec | new | new/old | note |")
    check("a row", markdown[2], "| rtt | 50.0 µs | 27.5 µs | 0.55 |  |")
    check("an n/a row", markdown[5],
          "| merge | n/a | 2.00 s | n/a | REF: diligenced exited with status 64: unknown command sync_enable |")
    check("its group's next row", markdown[6], "| latency | n/a | 20.0 ms | n/a | as above |")
    error = subprocess.CalledProcessError(1, ["/x/bench/stats.sh"], stderr="line\nimport: unknown command\n")
    check("failure_reason", failure_reason(error), "stats.sh exited with status 1: import: unknown command")
    for failure in failures:
        print(f"self-test: {failure}")
    print("self-test: " + ("ok" if not failures else f"{len(failures)} failed"))
    return 1 if failures else 0


# MARK: - Main


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--self-test", action="store_true", help="check the comparison's logic and exit")
    parser.add_argument("--bin-dir")
    parser.add_argument("--helpers")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", default="bench/results/latest.json")
    parser.add_argument("--work-dir", default="bench/results/run")
    parser.add_argument("--deb-dir", help="where `make deb` wrote the package (its sizes go in the table)")
    parser.add_argument("--compare-bin-dir", help="the reference build's programs: every figure for both, side by side")
    parser.add_argument("--ref-name", help="the reference build's name in the side-by-side table")
    parser.add_argument("--rounds", type=int, help="rounds per build with --compare-bin-dir (3; 1 with --quick)")
    options = parser.parse_args()
    if options.self_test:
        sys.exit(self_test())
    if not options.bin_dir or not options.helpers:
        parser.error("--bin-dir and --helpers are needed")
    if options.compare_bin_dir:
        options.ref_name = options.ref_name or options.compare_bin_dir
        options.rounds = options.rounds or (1 if options.quick else 3)
        if options.rounds < 1:
            parser.error("--rounds must be at least 1")
        compare(options)
        return

    # The work directory is on the same disk as a user's data (not tmpfs): every recorded
    # session is fsynced, as it would be at home.
    root = os.path.abspath(options.work_dir)
    shutil.rmtree(root, ignore_errors=True)
    raw = {"quick": options.quick, "window_seconds": 10 if options.quick else 60,
           "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cpus": os.cpu_count(), "loadavg_before": os.getloadavg()}
    measured = {}
    for group, measure, _ in GROUPS:
        measured[group] = measure(Build(options.bin_dir, options.helpers, options.quick,
                                        os.path.join(root, group), deb_dir=options.deb_dir))
        raw.update(measured[group])
    table = Table()
    rows_of = {group: rows for group, _, rows in GROUPS}
    for group in ROW_ORDER:
        rows_of[group](measured[group], table)

    raw["loadavg_after"] = os.getloadavg()
    markdown = table.markdown()
    print(markdown)
    write_json(options.json, {"rows": table.rows, "table": markdown, "raw": raw})
    missed = [r["figure"] for r in table.rows if r["met"] is False]
    if missed:
        log(f"{len(missed)} target(s) missed: " + "; ".join(missed))


if __name__ == "__main__":
    main()
