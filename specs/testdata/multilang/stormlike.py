"""A small multilang client that behaves like Storm's official Python client.

Written for goshelter's specs. What matters for the host:
  - the handshake answer {"pid": N} is sent BEFORE the pid file is created;
  - every emit that is not direct blocks until the task ids arrive, queueing
    whatever else (tuples, commands) comes first;
  - a bolt answers heartbeats with sync; a spout answers every command with sync.
"""
import json
import os
import sys
import time
from collections import deque

_queued_tuples = deque()
_queued_commands = deque()


def read_message():
    lines = []
    while True:
        line = sys.stdin.readline()
        if not line:
            raise EOFError("host closed stdin")
        if line.rstrip("\r\n") == "end":
            break
        lines.append(line)
    return json.loads("".join(lines))


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\nend\n")
    sys.stdout.flush()


def handshake():
    setup = read_message()
    pid = os.getpid()
    send({"pid": pid})
    open(os.path.join(setup["pidDir"], str(pid)), "w").close()
    return setup["conf"], setup["context"]


def read_task_ids():
    while True:
        msg = read_message()
        if isinstance(msg, list):
            return msg
        if "command" in msg:
            _queued_commands.append(msg)
        else:
            _queued_tuples.append(msg)


def next_tuple():
    if _queued_tuples:
        return _queued_tuples.popleft()
    while True:
        msg = read_message()
        if isinstance(msg, list):
            raise ValueError("task ids nobody waited for: %r" % (msg,))
        return msg


def next_command():
    if _queued_commands:
        return _queued_commands.popleft()
    return read_message()


def emit(values, stream=None, anchors=None, msg_id=None, direct_task=None, need_task_ids=True):
    m = {"command": "emit", "tuple": values}
    if stream is not None:
        m["stream"] = stream
    if anchors is not None:
        m["anchors"] = anchors
    if msg_id is not None:
        m["id"] = msg_id
    if direct_task is not None:
        m["task"] = direct_task
    if not need_task_ids:
        m["need_task_ids"] = False
    send(m)
    if direct_task is None and need_task_ids:
        return read_task_ids()
    return None


def ack(tup_id):
    send({"command": "ack", "id": tup_id})


def fail(tup_id):
    send({"command": "fail", "id": tup_id})


def sync():
    send({"command": "sync"})


def log(msg, level=None):
    m = {"command": "log", "msg": msg}
    if level is not None:
        m["level"] = level
    send(m)


def report_error(msg):
    send({"command": "error", "msg": msg})


def metric(name, params):
    send({"command": "metrics", "name": name, "params": params})


class BasicBolt(object):
    """Acks each input after process returns, fails it when process raises."""

    def initialize(self, conf, context):
        pass

    def process(self, tup):
        pass

    def heartbeat(self):
        pass

    def run(self):
        conf, context = handshake()
        self.initialize(conf, context)
        while True:
            tup = next_tuple()
            if tup["task"] == -1 and tup["stream"] == "__heartbeat":
                self.heartbeat()
                sync()
                continue
            try:
                self.process(tup)
                ack(tup["id"])
            except Exception as e:  # the official client reports and fails
                report_error(repr(e))
                fail(tup["id"])


class Spout(object):
    def initialize(self, conf, context):
        pass

    def next_tuple(self):
        pass

    def ack(self, msg_id):
        pass

    def fail(self, msg_id):
        pass

    def activate(self):
        pass

    def deactivate(self):
        pass

    def run(self):
        conf, context = handshake()
        self.initialize(conf, context)
        while True:
            cmd = next_command()
            kind = cmd["command"]
            if kind == "next":
                self.next_tuple()
            elif kind == "ack":
                self.ack(cmd["id"])
            elif kind == "fail":
                self.fail(cmd["id"])
            elif kind == "activate":
                self.activate()
            elif kind == "deactivate":
                self.deactivate()
            sync()
