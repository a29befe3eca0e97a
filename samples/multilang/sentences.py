#!/usr/bin/env python3
"""A sentence spout for goshelter's multilang sample (run it with
-spout-cmd "python3 sentences.py" -dir samples/multilang).

A shell spout in the style of Storm's starter examples: it emits one field, the
sentence, on the default stream. It emits a first sentence while initializing
(with a string message id), then numbered ones (numeric message ids), and
replays any that fail.
"""
import json
import os
import random
import sys
import time

SENTENCES = [
    "the cow jumped over the moon",
    "an apple a day keeps the doctor away",
    "four score and seven years ago",
    "snow white and the seven dwarfs",
    "i am at two with nature",
]
queued_commands = []
in_flight = {}
replay = []


def read_message():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        if line.rstrip("\r\n") == "end":
            return json.loads("".join(lines))
        lines.append(line)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\nend\n")
    sys.stdout.flush()


def emit(sentence, msg_id):
    in_flight[msg_id] = sentence
    send({"command": "emit", "id": msg_id, "tuple": [sentence]})
    while True:  # wait for the task ids, keeping commands that come first
        msg = read_message()
        if isinstance(msg, list):
            return msg
        queued_commands.append(msg)


def main():
    setup = read_message()
    send({"pid": os.getpid()})
    open(os.path.join(setup["pidDir"], str(os.getpid())), "w").close()
    emit("hello from the spout's initialization", "init")
    next_id = 1
    while True:
        cmd = queued_commands.pop(0) if queued_commands else read_message()
        kind = cmd["command"]
        if kind == "next":
            if replay:
                msg_id = replay.pop()
                emit(in_flight[msg_id], msg_id)
            else:
                emit(random.choice(SENTENCES), next_id)
                next_id += 1
        elif kind == "ack":
            in_flight.pop(cmd["id"], None)
        elif kind == "fail":
            replay.append(cmd["id"])
        send({"command": "sync"})


if __name__ == "__main__":
    main()
