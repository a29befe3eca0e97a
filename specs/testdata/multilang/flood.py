"""A shell component that emits as fast as it can: python3 flood.py KIND COUNTFILE.

KIND is one of
  bolt   emits unanchored 1 KiB tuples with need_task_ids false from the end of
         the handshake on, never reading its stdin again;
  spout  emits 10,000 such tuples in answer to each next before it syncs;
  echo   a bolt that emits 3,000 such tuples for each input before it acks it
         and reads the next: it reads its stdin only once the host has read
         its stdout.
Every 1000 emits it writes how many it has emitted so far to COUNTFILE (through
a temporary file and a rename, so a reader never sees half a number): the specs
compare that with what the host took, to see that a host that stops reading the
child's stdout slows it down.
"""
import json
import os
import sys

kind, count_file = sys.argv[1], sys.argv[2]


def read_message():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        if line.rstrip("\r\n") == "end":
            return json.loads("".join(lines))
        lines.append(line)


def record(n):
    tmp = count_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(n))
    os.replace(tmp, count_file)


setup = read_message()
pid = os.getpid()
sys.stdout.write(json.dumps({"pid": pid}) + "\nend\n")
sys.stdout.flush()
open(os.path.join(setup["pidDir"], str(pid)), "w").close()
emit = '{"command": "emit", "tuple": ["%s"], "need_task_ids": false}\nend\n' % ("x" * 1000)
sync = '{"command": "sync"}\nend\n'
n = 0


def burst(k):
    global n
    for _ in range(k // 1000):
        sys.stdout.write(emit * 1000)
        n += 1000
        record(n)


if kind == "bolt":
    while True:
        burst(1000)
if kind == "echo":
    while True:
        m = read_message()
        if m.get("stream") == "__heartbeat":
            sys.stdout.write(sync)
        else:
            burst(3000)
            sys.stdout.write('{"command": "ack", "id": "%s"}\nend\n' % m["id"])
        sys.stdout.flush()
while True:  # a spout: each next emits 10,000 tuples
    if read_message().get("command") == "next":
        burst(10000)
    sys.stdout.write(sync)
    sys.stdout.flush()
