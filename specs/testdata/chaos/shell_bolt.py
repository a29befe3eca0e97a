"""A shell bolt for goshelter's chaos specs: python3 -u shell_bolt.py SEED THRESHOLD

It speaks Storm's multilang protocol without any client library. Each input
(a ChaosHop or ChaosDirectHop: [key, parts]) is emitted again, anchored to it,
on ChaosHop to the grouped subscribers and on ChaosDirectHop to one task of each
direct subscriber, then acked. On the first attempt of a message whose hash
(from SEED) falls under THRESHOLD out of 10000, the child dies instead: it exits
with status 3 without acking, which fails its task and restarts the topology.
"""
import json
import os
import sys

seed, threshold = int(sys.argv[1]), int(sys.argv[2])


def read():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)  # the host closed stdin: stop quietly
        line = line.rstrip("\r\n")
        if line == "end":
            return json.loads("\n".join(lines))
        lines.append(line)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\nend\n")
    sys.stdout.flush()


def key_hash(s):
    h = 0
    for ch in s:
        h = (h * 31 + ord(ch)) & 0xFFFFFFFF
    return h


handshake = read()
pid = os.getpid()
open(os.path.join(handshake["pidDir"], str(pid)), "w").close()
send({"pid": pid})

context = handshake["context"]
targets = context.get("stream->target->grouping", {})
grouped = any(g["type"] != "DIRECT" for g in targets.get("ChaosHop", {}).values())
direct = []  # sorted task ids of each direct subscriber
for comp, g in sorted(targets.get("ChaosDirectHop", {}).items()):
    if g["type"] == "DIRECT":
        direct.append(sorted(int(t) for t, c in context["task->component"].items() if c == comp))

while True:
    msg = read()
    if isinstance(msg, list):
        continue  # the task ids an emit went to
    stream = msg.get("stream")
    if stream == "__heartbeat":
        send({"command": "sync"})
        continue
    if stream == "__tick":
        continue
    key, parts = msg["tuple"][0], msg["tuple"][1] or []
    for p in parts:
        if p["Attempt"] == 1 and (p["Msg"] * 2654435761 + seed) % 10000 < threshold:
            sys.stderr.write("chaos: shell bolt dies on message %d\n" % p["Msg"])
            sys.stderr.flush()
            os._exit(3)
    values = [key, parts]
    if grouped:
        send({"command": "emit", "anchors": [msg["id"]], "stream": "ChaosHop", "tuple": values})
    for tasks in direct:
        task = tasks[key_hash(key) % len(tasks)]
        send({"command": "emit", "anchors": [msg["id"]], "stream": "ChaosDirectHop", "task": task, "tuple": values})
    send({"command": "ack", "id": msg["id"]})
