#!/usr/bin/env python3
r"""A split bolt that crashes: it splits its first 200 inputs as split.py does,
then writes a line to stderr and exits with status 3, as a script with a bug
does. The multilang sample runs without restarts, so its topology fails; the
sample still prints its summary, then the failure, and exits 1:

    go run ./samples/multilang -duration 8s \
        -bolt-cmd "python3 crashing_split.py" -dir samples/multilang/testdata

Self-contained (no storm module needed); it speaks Storm's multilang protocol
on stdin/stdout.
"""
import json
import os
import sys
from collections import deque

waiting = deque()  # inputs that arrived while an emit waited for its task ids


def receive():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)  # the host closed our input: stop
        if line.rstrip("\r\n") == "end":
            return json.loads("".join(lines))
        lines.append(line)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\nend\n")
    sys.stdout.flush()


def emit_word(word, anchor):
    send({"command": "emit", "anchors": [anchor], "tuple": [word]})
    while True:  # the host answers an emit with its task ids
        msg = receive()
        if isinstance(msg, list):
            return
        waiting.append(msg)


def main():
    setup = receive()
    pid = os.getpid()
    send({"pid": pid})
    open(os.path.join(setup["pidDir"], str(pid)), "w").close()
    seen = 0
    while True:
        tup = waiting.popleft() if waiting else receive()
        stream = tup.get("stream")
        if stream == "__heartbeat":
            send({"command": "sync"})
            continue
        if stream == "__tick":
            send({"command": "ack", "id": tup["id"]})
            continue
        seen += 1
        if seen > 200:
            sys.stderr.write("crashing_split.py: crashing on purpose after 200 inputs\n")
            sys.exit(3)
        for word in str(tup["tuple"][0]).split():
            emit_word(word, tup["id"])
        send({"command": "ack", "id": tup["id"]})


if __name__ == "__main__":
    main()
