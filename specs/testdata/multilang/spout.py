"""Shell spouts for goshelter's multilang specs: python3 spout.py MODE N.

Modes:
  count   emits the numbers 1..N as sentences "n", with numeric message ids,
          replays failed ones, logs "acked <id>" for every ack and "done" when
          every number was acked
  strings like count, with string message ids, and an emit while initializing
  hang    answers the handshake and activate, then never answers "next"
  direct  like count, but emits each number directly to the highest task of "sink"
          (found in the handshake's context), unreliably for even numbers
  burst   emits 50 numbers per next (N in all), with numeric message ids; at each
          next logs "next with K in flight" (emitted minus acked and failed)
Every mode logs "failed <id>" for every fail and "deactivated" on deactivate.
"""
import sys
import time

import stormlike

mode = sys.argv[1] if len(sys.argv) > 1 else "count"
total = int(sys.argv[2]) if len(sys.argv) > 2 else 10


class Numbers(stormlike.Spout):
    def initialize(self, conf, context):
        self.sink = max([int(t) for t, c in context["task->component"].items() if c == "sink"] or [0])
        self.next_n = 1
        self.replay = []
        self.acked = set()
        if mode == "strings":
            stormlike.emit(["0"], msg_id="m-0")

    def msg_id(self, n):
        return "m-%d" % n if mode == "strings" else n

    def next_tuple(self):
        if mode == "hang":
            time.sleep(3600)
        if mode == "burst":
            stormlike.log("next with %d in flight" % (self.next_n - 1 - len(self.acked) - self.failed))
            for _ in range(50):
                if self.next_n > total:
                    return
                stormlike.emit([str(self.next_n)], msg_id=self.next_n)
                self.next_n += 1
            return
        if self.replay:
            n = self.replay.pop()
        elif self.next_n <= total:
            n = self.next_n
            self.next_n += 1
        else:
            time.sleep(0.01)
            return
        if mode == "direct":  # a direct emit gets no task ids back
            stormlike.emit([str(n)], msg_id=n if n % 2 else None, direct_task=self.sink)
            return
        stormlike.emit([str(n)], msg_id=self.msg_id(n))

    def ack(self, msg_id):
        self.acked.add(msg_id)
        stormlike.log("acked %s" % msg_id)
        if len(self.acked) == {"strings": total + 1, "direct": (total + 1) // 2}.get(mode, total):
            stormlike.log("done")

    failed = 0

    def fail(self, msg_id):
        stormlike.log("failed %s" % msg_id)
        self.failed += 1
        if mode == "burst":
            return
        n = int(str(msg_id).replace("m-", ""))
        self.replay.append(n)

    def deactivate(self):
        stormlike.log("deactivated")


try:
    Numbers().run()
except EOFError:
    pass
