"""The Python push client against a running `stepscope monitor` (the CLI
built beside this package, with the fake NVML the C++ tests use)."""

import math
import os
import re
import socket
import subprocess
import time
import unittest
import urllib.request

from stepscope.monitor import MonitorClient, format_line, push_once


def _cli():
    return os.environ.get("STEPSCOPE_CLI", "")


@unittest.skipUnless(os.path.exists(_cli()), "STEPSCOPE_CLI not set (ctest sets it)")
class MonitorClientTest(unittest.TestCase):
    def setUp(self, extra=()):
        args = [_cli(), "monitor", "--listen", "127.0.0.1:0", "--push-listen", "127.0.0.1:0",
                "--interval", "0.1", "--job", "pytest", "--duration", "60",
                "--nvml-lib", os.environ.get("STEPSCOPE_FAKE_NVML_LIB", "/nonexistent"), *extra]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        self.metrics_port = self.push_port = None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"/metrics on port (\d+), training pushes on port (\d+)", line)
            if m:
                self.metrics_port, self.push_port = int(m.group(1)), int(m.group(2))
                break
        self.assertIsNotNone(self.push_port, "the monitor did not start")
        self.address = f"127.0.0.1:{self.push_port}"

    def tearDown(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc.stderr.close()

    def scrape_until(self, needle):
        text = ""
        for _ in range(100):
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as r:
                text = r.read().decode()
            if needle in text:
                break
            time.sleep(0.05)
        return text

    def test_steps_reach_the_exporter(self):
        with MonitorClient(self.address) as client:
            for step in range(1, 11):
                self.assertTrue(client.push(step=step, loss=3.0 - step * 0.1, step_time=0.25, tokens=2048))
        text = self.scrape_until('stepscope_train_step{hostname=')
        text = self.scrape_until('stepscope_train_steps_total{hostname="%s",job="pytest"} 10' % socket.gethostname())
        self.assertIn('job="pytest"} 10\n', text)
        self.assertRegex(text, r'stepscope_train_tokens_total\{[^}]*\} 20480\n')
        self.assertRegex(text, r'stepscope_train_tokens_per_second\{[^}]*\} 8192\n')

    def test_reconnects_after_the_idle_timeout(self):
        # The monitor closes a connection silent for --push-idle-timeout; the
        # client connects again at its next push instead of losing the line.
        self.tearDown()
        self.setUp(["--push-idle-timeout", "1"])
        with MonitorClient(self.address) as client:
            self.assertTrue(client.push(step=1, loss=2.0))
            time.sleep(1.6)
            self.assertTrue(client.push(step=2, loss=1.5))
            self.assertEqual(client.dropped, 0)
        text = self.scrape_until('stepscope_train_steps_total{hostname="%s",job="pytest"} 2' % socket.gethostname())
        self.assertRegex(text, r'stepscope_train_steps_total\{[^}]*\} 2\n')
        self.assertRegex(text, r'stepscope_monitor_push_rejected_total\{[^}]*reason="idle_timeout"\} 1\n')

    def test_an_evicted_client_reconnects_and_its_next_line_arrives(self):
        # With all 256 places taken, a newcomer evicts the connection longest
        # without a line (here the client's); its next push reconnects, evicting
        # in turn the oldest idle socket, and the line arrives.
        host = socket.gethostname()
        idle = []
        try:
            with MonitorClient(self.address) as client:
                self.assertTrue(client.push(step=1, loss=2.0))
                self.scrape_until('stepscope_train_steps_total{hostname="%s",job="pytest"} 1' % host)
                for _ in range(255):
                    idle.append(socket.create_connection(("127.0.0.1", self.push_port), timeout=5))
                text = self.scrape_until('stepscope_monitor_push_connections_total{hostname="%s",job="pytest"} 256' % host)
                self.assertIn('push_connections_total{hostname="%s",job="pytest"} 256\n' % host, text)
                time.sleep(1.1)  # past the 1 s grace period
                idle.append(socket.create_connection(("127.0.0.1", self.push_port), timeout=5))
                self.scrape_until('reason="evicted"} 1')
                self.assertTrue(client.push(step=2, loss=1.5))
                self.assertEqual(client.dropped, 0)
            text = self.scrape_until('stepscope_train_steps_total{hostname="%s",job="pytest"} 2' % host)
            self.assertRegex(text, r'stepscope_train_steps_total\{[^}]*\} 2\n')
            self.assertRegex(text, r'stepscope_train_step\{[^}]*\} 2\n')
            self.assertRegex(text, r'stepscope_monitor_push_rejected_total\{[^}]*reason="evicted"\} 2\n')
            self.assertRegex(text, r'stepscope_monitor_push_rejected_total\{[^}]*reason="too_many_clients"\} 0\n')
        finally:
            for s in idle:
                s.close()

    def test_rejections_come_back_with_a_reason(self):
        self.assertEqual(push_once(self.address, step=1, loss=float("nan")), "ok")
        with socket.create_connection(("127.0.0.1", self.push_port)) as s:
            s.sendall(b"step=1 lr=0.1\n")
            s.shutdown(socket.SHUT_WR)
            reply = s.recv(4096).decode()
        self.assertTrue(reply.startswith("error unknown_key:"), reply)
        text = self.scrape_until('reason="unknown_key"} 1')
        self.assertRegex(text, r'stepscope_monitor_push_rejected_total\{[^}]*reason="unknown_key"\} 1\n')
        self.assertRegex(text, r'stepscope_train_nan_losses_total\{[^}]*\} 1\n')


class FormatTest(unittest.TestCase):
    def test_line_and_local_checks(self):
        self.assertEqual(format_line(step=3, loss=float("nan"), tokens=4096.0), "step=3 loss=nan tokens=4096\n")
        self.assertEqual(format_line(loss=1.5, step_time=0.25), "loss=1.5 step_time=0.25\n")
        for bad in ({"lr": 1}, {"grad_norm": float("nan")}, {"step": 1.5}, {"step_time": 0},
                    {"tokens": -1}, {"loss": math.inf}, {"loss": "x"}, {},
                    {"step_time": 5e-324}, {"tokens": 1e15}, {"loss": 1e39}):
            with self.assertRaises(ValueError, msg=str(bad)):
                format_line(**bad)

    def test_unreachable_monitor_never_raises(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # bound, not listening: connections are refused
            client = MonitorClient(f"127.0.0.1:{port}", retry_seconds=60)
            self.assertFalse(client.push(step=1, loss=2.0))
            self.assertFalse(client.push(step=2, loss=2.0))
            self.assertEqual(client.dropped, 2)


if __name__ == "__main__":
    unittest.main()
