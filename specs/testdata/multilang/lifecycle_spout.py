"""A shell spout for goshelter's fidelity specs: python3 lifecycle_spout.py N.

Logs "activate" and "deactivate" each time it gets them and "first next" at its
first next, so a spec can see the order in which the host sends them; emits
the numbers 1..N as sentences "n" with numeric message ids, one per next, and
nothing after them.
"""
import sys

import stormlike

total = int(sys.argv[1]) if len(sys.argv) > 1 else 3


class Lifecycle(stormlike.Spout):
    def initialize(self, conf, context):
        self.next_n = 1

    def activate(self):
        stormlike.log("activate")

    def deactivate(self):
        stormlike.log("deactivate")

    def next_tuple(self):
        if self.next_n == 1:
            stormlike.log("first next")
        if self.next_n <= total:
            stormlike.emit([str(self.next_n)], msg_id=self.next_n)
            self.next_n += 1


try:
    Lifecycle().run()
except EOFError:
    pass
