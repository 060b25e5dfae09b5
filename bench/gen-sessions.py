#!/usr/bin/env python3
"""Writes N work sessions as JSON lines (what `diligencectl export --format jsonl` writes),
spread evenly over the working days of the years ending yesterday, across the seven default
tasks. About one day in seven is a day off, at random, as in real use (so the current streak is
days, not years; docs/performance.md measures the unbroken-streak worst case too with
DAYS_OFF=0). Deterministic.

Every session passes the session rules (docs/protocol.md): none overlaps another, none is longer
than its day allows, all lie after 1990. Ten years hold 100 000 half-hour sessions; a million
need thirty years and are 10 minutes long, one after the other (the rules let no more in)."""
import os
import random, sys, time

count = int(sys.argv[1])
random.seed(count)
tasks = ["Work", "Study", "Exercise", "Meditate", "Wish", "Daily", "Errands"]
outcomes = ["completed"] * 8 + ["skipped", "abandoned"]
days_off = float(os.environ.get("DAYS_OFF", "0.14"))
years = 10 if count <= 150_000 else 30
first_day = int(time.time()) // 86400 - years * 365
working = [d for d in range(first_day, first_day + years * 365) if random.random() >= days_off]
per_day = count / len(working)
# From 01:00 UTC on, one session every `step` seconds, each shorter than its step.
step = min(1800, 22 * 3600 / per_day)
length = min(1500, int(step) - 180)
out = sys.stdout
for i in range(count):
    day = working[int(i / per_day)]
    start = day * 86400 + 3600 + int((i - int(i / per_day) * per_day) * step)
    pauses = random.choice([0, 0, 0, 1, 2])
    s = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))
    e = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start + length + pauses * 60))
    out.write('{"task":"%s","start":"%s","end":"%s","planned_seconds":%d,"focused_seconds":%d,"pauses":%d,"outcome":"%s"}\n'
              % (random.choice(tasks), s, e, length, length, pauses, random.choice(outcomes)))
