"""A steady stream of balls into a firmware board's beam, for the restart and link-fault tests."""

import threading


class Balls(threading.Thread):
    """Drops a ball into `cup`'s beam every `every` seconds until stopped; .n balls so far."""

    def __init__(self, fw, every=0.04, width_ms=8, cup="cup-1"):
        super().__init__(daemon=True)
        self.fw, self.every, self.width_ms, self.cup, self.n = fw, every, width_ms, cup, 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(self.every):
            self.fw.drop_ball(self.cup, width_ms=self.width_ms)
            self.n += 1

    def stop(self):
        self.halt.set()
        self.join(5)
        self.fw.sync()
