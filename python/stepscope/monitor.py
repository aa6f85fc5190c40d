"""Push training metrics to ``stepscope monitor`` (docs/monitor.md).

Pure Python (a TCP socket, no torch, no extension module): a training loop
reports each step and the monitor exports it to Prometheus beside the GPU
metrics::

    from stepscope.monitor import MonitorClient
    monitor = MonitorClient("127.0.0.1:9402")
    for step in range(steps):
        ...
        monitor.push(step=step, loss=loss.item(), step_time=dt, tokens=tokens)

``push`` never raises for a monitor that is down or goes away: it returns
False and tries to reconnect at most every ``retry_seconds``, so monitoring
can never stop training. Values are checked here the way the monitor checks
them, so a bad value raises ``ValueError`` at the call that made it.
"""

import math
import select
import socket
import time

FIELDS = ("step", "loss", "step_time", "tokens", "grad_norm", "loss_scale")
_INTEGER = {"step", "tokens"}
_FLOAT32_MAX = 3.4028234663852886e38
# The monitor's ranges (docs/monitor.md), inclusive.
_RANGE = {
    "step": (0, 2.0 ** 53),
    "loss": (-_FLOAT32_MAX, _FLOAT32_MAX),
    "step_time": (1e-6, 1e6),
    "tokens": (0, 1e12),
    "grad_norm": (0, _FLOAT32_MAX),
    "loss_scale": (1.1754943508222875e-38, _FLOAT32_MAX),
}


def _split(address):
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{address!r} is not HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]  # [IPV6]:PORT
    return host, int(port)


def format_line(**fields):
    """The protocol line (with its newline) for these fields."""
    parts = []
    for key in FIELDS:
        if key not in fields or fields[key] is None:
            continue
        value = fields[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            try:
                value = float(value)  # numpy / torch scalars
            except (TypeError, ValueError):
                raise ValueError(f"{key}: {value!r} is not a number") from None
        if math.isnan(value):
            if key != "loss":
                raise ValueError(f"{key}: NaN is accepted for loss only")
            parts.append("loss=nan")
            continue
        if math.isinf(value):
            raise ValueError(f"{key}: must be finite")
        if key in _INTEGER and value != int(value):
            raise ValueError(f"{key}: {value!r} is not a whole number")
        low, high = _RANGE[key]
        if not low <= value <= high:
            raise ValueError(f"{key}: {value!r} is outside {low:g} to {high:g}")
        if key in _INTEGER:
            parts.append(f"{key}={int(value)}")
        else:
            parts.append(f"{key}={float(value)!r}")
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; expected {', '.join(FIELDS)}")
    if not parts:
        raise ValueError("no field to push")
    return " ".join(parts) + "\n"


class MonitorClient:
    """One connection to a monitor's push port, reused for every step."""

    def __init__(self, address="127.0.0.1:9402", timeout=1.0, retry_seconds=5.0):
        self.host, self.port = _split(address)
        self.timeout = timeout
        self.retry_seconds = retry_seconds
        self._sock = None
        self._next_try = 0.0
        self.sent = 0      # lines handed to the socket
        self.dropped = 0   # lines lost because the monitor was unreachable

    def _connect(self):
        now = time.monotonic()
        if now < self._next_try:
            return False
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            self._sock.setblocking(True)
            self._sock.settimeout(self.timeout)
            return True
        except OSError:
            self._sock = None
            self._next_try = now + self.retry_seconds
            return False

    def _drain_replies(self):
        # Replies are not awaited; drop those waiting so the buffer never fills.
        while select.select([self._sock], [], [], 0)[0]:
            if not self._sock.recv(4096):
                raise ConnectionError("the monitor closed the connection")

    def push(self, **fields):
        """Sends one update; True when it reached the socket."""
        line = format_line(**fields).encode()
        if self._sock is None and not self._connect():
            self.dropped += 1
            return False
        try:
            self._drain_replies()
        except OSError:
            # The monitor closed the connection (its idle timeout, a restart):
            # connect again once now rather than lose this line.
            self.close()
            if not self._connect():
                self.dropped += 1
                return False
        try:
            self._sock.sendall(line)
            self.sent += 1
            return True
        except OSError:
            self.close()
            self._next_try = time.monotonic() + self.retry_seconds
            self.dropped += 1
            return False

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def push_once(address, timeout=5.0, **fields):
    """Sends one update and returns the monitor's reply ("ok" or "error REASON: DETAIL").

    Raises OSError when the monitor cannot be reached.
    """
    host, port = _split(address)
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(format_line(**fields).encode())
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while b"\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    return reply.decode(errors="replace").split("\n", 1)[0]
