"""The example trainer of the README's walkthrough, run as a user runs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import unittest

from standin import tempdir

TRAIN = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python_trainer", "train.py")


class ExampleTrainerTest(unittest.TestCase):
    def test_ctrl_c_says_how_to_resume(self) -> None:
        # The walkthrough says: press Ctrl-C in the middle, then start the same command again. The
        # trainer ended in a KeyboardInterrupt traceback; it now says where its checkpoint is and
        # exits 130, and the same command resumes after that step (newuser14).
        d = tempdir(self)
        cmd = [sys.executable, TRAIN, "--dir", d, "--steps", "30", "--uniform", "--step-delay", "0.1",
               "--checkpoint-every", "3"]
        # SIGINT as a terminal's Ctrl-C delivers it, also when this test runs where it is ignored
        # (a background job of a shell): Python raises KeyboardInterrupt only if it is not.
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + 30
        while time.time() < deadline and not os.path.exists(os.path.join(d, "toy-checkpoint.json")):
            time.sleep(0.05)
        time.sleep(0.15)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 130, err)
        self.assertNotIn("Traceback", err)
        self.assertRegex(err, r"interrupted at step \d+: the checkpoint .*toy-checkpoint.json is at step \d+; "
                              r"run the same command again to resume")
        again = subprocess.run(cmd[:-4], capture_output=True, text=True, timeout=60)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertIn("resumed from", again.stdout)
        self.assertIn("done: 30 steps", again.stdout)


if __name__ == "__main__":
    unittest.main()
