"""Shell bolts for goshelter's multilang specs: python3 bolt.py MODE.

Modes:
  split        split the sentence into words, emit each anchored (well behaved)
  direct       like split, but emits each word directly to the highest task of "sink",
               found in the handshake's context
  report       like split, and also logs at every level, reports an error and a metric
  init-emit    like split, and emits one word on stream "default" while initializing
  unknown-ack  acks and fails ids the host never gave, then behaves like split
  silent       answers the handshake, then never says anything again
  die          exits with status 3 on the first tuple, without acking it
  garbage      writes something that is not JSON on the first tuple
  flood        like split, but writes 2000 lines to stderr for each tuple
  ignore-term  like split, but ignores SIGTERM and keeps running after stdin ends
  fail         like split, but fails (never acks) every sentence holding the word "bad"
  heartbeats   like split, and logs "heartbeat N" for the N-th heartbeat it answers
  spawn        starts a helper process (logs "helper PID"), then exits with status 3
               on the first tuple, leaving the helper behind
"""
import signal
import subprocess
import sys
import time

import stormlike

mode = sys.argv[1] if len(sys.argv) > 1 else "split"


class Split(stormlike.BasicBolt):
    heartbeats = 0

    def heartbeat(self):
        if mode == "heartbeats":
            self.heartbeats += 1
            stormlike.log("heartbeat %d" % self.heartbeats)

    def initialize(self, conf, context):
        self.context = context
        if mode == "spawn":
            helper = subprocess.Popen(["sleep", "3600"])
            stormlike.log("helper %d" % helper.pid)
        if mode == "init-emit":
            stormlike.emit(["hello-from-init"])
        if mode == "unknown-ack":
            stormlike.ack("no-such-id")
            stormlike.fail("-12345")
        if mode == "report":
            for level in range(5):
                stormlike.log("level %d from python" % level, level)
            stormlike.log("no level from python")
            stormlike.report_error("an error the bolt survives")
            stormlike.metric("words-seen", {"count": 0})

    def process(self, tup):
        if mode == "fail" and "bad" in tup["tuple"][0].split():
            raise ValueError("a bad sentence")
        if mode in ("die", "spawn"):
            sys.stderr.write("dying on purpose\n")
            sys.stderr.flush()
            sys.exit(3)
        if mode == "garbage":
            sys.stdout.write("this is not json\nend\n")
            sys.stdout.flush()
            time.sleep(60)
        if mode == "flood":
            sys.stderr.write(("x" * 100 + "\n") * 2000)
            sys.stderr.flush()
        for word in tup["tuple"][0].split():
            if mode == "direct":
                sinks = [int(t) for t, c in self.context["task->component"].items() if c == "sink"]
                stormlike.emit([word], anchors=[tup["id"]], direct_task=max(sinks))
            else:
                stormlike.emit([word], anchors=[tup["id"]])
        if mode == "report":
            stormlike.metric("words-seen", {"count": len(tup["tuple"][0].split())})


if mode == "silent":
    stormlike.handshake()
    time.sleep(3600)
elif mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        Split().run()
    except EOFError:
        time.sleep(3600)
else:
    try:
        Split().run()
    except EOFError:
        pass
