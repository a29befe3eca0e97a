#!/usr/bin/env python3
r"""A split bolt that loses inputs: every fourth input is neither acked nor
failed, the way Storm's own tester bolt drops about a quarter of its inputs at
random. Its trees stay open until they time out or the topology stops, so it
shows that the multilang sample still ends in time and reports them:

    go run ./samples/multilang -duration 8s \
        -bolt-cmd "python3 lossy_split.py" -dir samples/multilang/testdata

The other inputs are split into words as split.py does. Self-contained (no
storm module needed); it speaks Storm's multilang protocol on stdin/stdout.
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
        if seen % 4 == 0:
            continue  # lost: no emit, no ack, no fail
        for word in str(tup["tuple"][0]).split():
            emit_word(word, tup["id"])
        send({"command": "ack", "id": tup["id"]})


if __name__ == "__main__":
    main()
