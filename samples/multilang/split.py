#!/usr/bin/env python3
"""The split bolt of goshelter's multilang sample: a shell bolt in the style of
Storm's starter splitsentence.py, self-contained (no storm module needed).

It speaks Storm's multilang protocol on stdin/stdout: JSON messages ended by a
line "end". Each input tuple holds one sentence; each word is emitted on the
default stream, anchored to the input, which is then acked.
"""
import json
import os
import sys
from collections import deque

pending_tuples = deque()  # tuples that arrived while we waited for task ids


def read_message():
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


def emit(values, anchor):
    send({"command": "emit", "anchors": [anchor], "tuple": values})
    while True:  # like Storm's client, wait for the task ids of this emit
        msg = read_message()
        if isinstance(msg, list):
            return msg
        pending_tuples.append(msg)


def main():
    setup = read_message()
    send({"pid": os.getpid()})
    open(os.path.join(setup["pidDir"], str(os.getpid())), "w").close()
    send({"command": "log", "msg": "split.py ready as task %d" % setup["context"]["taskid"]})
    while True:
        tup = pending_tuples.popleft() if pending_tuples else read_message()
        if tup.get("stream") == "__heartbeat":
            send({"command": "sync"})
            continue
        if tup.get("stream") == "__tick":
            send({"command": "ack", "id": tup["id"]})
            continue
        for word in str(tup["tuple"][0]).split():
            emit([word], tup["id"])
        send({"command": "ack", "id": tup["id"]})


if __name__ == "__main__":
    main()
