#
# This file is part of LiteRecorder.
#
# SPDX-License-Identifier: BSD-2-Clause

"""The LiteX BIOS console, driven by a program: one driver, several byte transports.

    transport (bytes in/out) --> Console: prompt matching, command echo removal, ANSI stripping,
                                 per-command timeout (whole command or without output),
                                 RESULT lines, a callback per output line

Transports: ``PipeTransport`` (a process's stdin/stdout: the Verilator simulation, see
``targets/sim.py``'s ``SimSession``) and ``SerialTransport`` (a board's UART through pyserial: a
device such as ``/dev/ttyUSB1``, a pseudo-terminal, or a URL such as ``socket://host:port``).
"""

import os
import re
import sys
import time
import select

PROMPT_RE      = re.compile(rb"litex(\x1b\[0m)?> ")
PROMPT_TEXT_RE = re.compile(r"litex> ?$")
ANSI_RE        = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
BIOS_LINE_MAX  = 63         # LiteX's BIOS readline buffer (64 bytes with the terminator).

class ConsoleError(Exception):
    """The console did not behave: timeout, closed, or a command it cannot take."""

class ConsoleClosed(ConsoleError):
    """The other end went away (process exited, port closed)."""

# Transports ---------------------------------------------------------------------------------------

class PipeTransport:
    """The console of a child process (its stdin/stdout pipes, unbuffered)."""
    def __init__(self, proc, name="the simulation"):
        self.proc = proc
        self.name = name

    def write(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise ConsoleClosed(f"{self.name} exited (rc={self.proc.poll()})")

    def read(self, timeout):
        """Bytes that arrived within ``timeout`` seconds (b"" if none); ConsoleClosed at the end."""
        r, _, _ = select.select([self.proc.stdout], [], [], max(timeout, 0))
        if not r:
            return b""
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            try:
                self.proc.wait(timeout=5)
            except Exception:
                pass
            raise ConsoleClosed(f"{self.name} exited (rc={self.proc.returncode})")
        return chunk

    def close(self):
        pass            # The process belongs to its owner (SimSession kills it).

class SerialTransport:
    """A serial console through pyserial: ``/dev/ttyUSB1``, a pty, or ``socket://host:port``."""
    def __init__(self, url, baud=115200):
        import serial
        self.name = url
        try:
            self.port = serial.serial_for_url(url, baudrate=baud, timeout=0)
        except (serial.SerialException, ValueError, OSError) as e:
            why = os.strerror(e.errno) if isinstance(getattr(e, "errno", None), int) else str(e)
            raise ConsoleError(f"cannot open {url}: {why}") from None
        self._error = serial.SerialException

    def write(self, data):
        try:
            self.port.write(data)
            self.port.flush()
        except (self._error, OSError) as e:
            raise ConsoleClosed(f"{self.name}: {e}")

    def read(self, timeout):
        try:
            self.port.timeout = max(timeout, 0)
            first = self.port.read(1)
            if not first:
                return b""
            self.port.timeout = 0
            waiting = self.port.in_waiting
            return first + (self.port.read(waiting) if waiting else b"")
        except (self._error, OSError) as e:
            raise ConsoleClosed(f"{self.name}: {e}")

    def close(self):
        try:
            self.port.close()
        except Exception:
            pass

# Console ------------------------------------------------------------------------------------------

def text(data):
    """Console bytes -> text: ANSI sequences and carriage returns removed."""
    return ANSI_RE.sub(b"", bytes(data)).decode(errors="replace").replace("\r", "")

def parse_result(line):
    """``RESULT k=v k=v`` -> dict (None if the line is not a RESULT line)."""
    line = line.strip()
    if not line.startswith("RESULT "):
        return None
    d = {}
    for tok in line.split()[1:]:
        k, _, v = tok.partition("=")
        d[k] = v
    return d

def parse_results(out):
    """Every ``RESULT`` line of a console output, as dicts, in order."""
    return [d for d in (parse_result(l) for l in out.splitlines()) if d is not None]

class Console:
    """The BIOS prompt over a transport.

    ``log``: a binary file receiving every byte read; ``echo(str)``: called with the text of every
    chunk read (interactive display); ``error``: the exception class raised on timeouts and when the
    transport closes (``SimSession`` uses its ``SimError``).
    """
    def __init__(self, transport, log=None, echo=None, error=ConsoleError):
        self.transport = transport
        self.log       = log
        self.echo      = echo
        self.error     = error
        self.buf       = bytearray()
        self.pos       = 0              # End of the last prompt matched.
        self._log_pending = b""

    def _log_text(self, chunk):
        """The log without ANSI sequences (it is read as text); a sequence cut at the end of a chunk
        (the UART delivers a byte at a time) waits for the rest."""
        data = self._log_pending + bytes(chunk)
        esc = data.rfind(b"\x1b")
        cut = len(data)
        if esc >= 0 and not ANSI_RE.match(data, esc) and len(data) - esc < 16:
            cut = esc
        self._log_pending = data[cut:]
        self.log.write(ANSI_RE.sub(b"", data[:cut]))

    def _tail(self):
        return text(self.buf[-2000:])

    def _read(self, timeout):
        try:
            chunk = self.transport.read(timeout)
        except ConsoleClosed as e:
            raise self.error(f"{e}; console tail:\n{self._tail()}") from None
        if chunk:
            self.buf.extend(chunk)
            if self.log:
                self._log_text(chunk)
            if self.echo:
                self.echo(text(chunk))
        return chunk

    def wait_prompt(self, timeout, what, on_line=None, start=None, idle=False):
        """Read until a prompt after ``self.pos``; returns (and sets) the position after it.

        ``on_line(str)`` is called with every complete output line from ``start`` on, as it arrives.
        ``idle``: ``timeout`` bounds the time without console output instead of the whole wait (a
        command that keeps a live progress line runs as long as it prints)."""
        deadline = time.time() + timeout
        line_pos = self.pos if start is None else start
        while True:
            m = PROMPT_RE.search(self.buf, self.pos)
            if on_line:
                end = m.start() if m else len(self.buf)
                nl = self.buf.rfind(b"\n", line_pos, end)
                if nl >= 0:
                    for line in text(self.buf[line_pos:nl]).split("\n"):
                        on_line(line)
                    line_pos = nl + 1
                if m and line_pos < m.start():
                    for line in text(self.buf[line_pos:m.start()]).split("\n"):
                        if line:
                            on_line(line)
            if m:
                self.pos = m.end()
                return self.pos
            remaining = deadline - time.time()
            if remaining <= 0:
                why = f"no console output for {timeout:g} s" if idle else f"no prompt after {timeout:g} s"
                raise self.error(f"timeout: {why} waiting for {what}; console tail:\n{self._tail()}")
            if self._read(min(remaining, 0.5)) and idle:
                deadline = time.time() + timeout

    def sync(self, timeout=10, tries=3):
        """Find the prompt of a console already running (a board): type Enter until it answers."""
        for i in range(tries):
            self.pos = len(self.buf)
            self.transport.write(b"\r")
            try:
                return self.wait_prompt(timeout/tries, "the BIOS prompt (after Enter)")
            except self.error:
                if i == tries - 1:
                    raise

    def cmd(self, command, timeout=300, on_line=None, idle=False):
        """Type a command, wait for the next prompt, return its output (without the echo).

        ``timeout``: seconds for the whole command, or without output with ``idle`` (see
        ``wait_prompt``)."""
        if len(command) > BIOS_LINE_MAX:
            raise self.error(f"{command!r}: {len(command)} characters, the BIOS command line holds "
                f"{BIOS_LINE_MAX} (LiteX's readline buffer); set options with rec_set first")
        start = len(self.buf)
        self.pos = start
        try:
            self.transport.write(command.encode() + b"\r")
        except ConsoleClosed as e:
            raise self.error(f"{e}; console tail:\n{self._tail()}") from None
        skip = [command.strip()]
        def lines(line):             # The first line is the BIOS's echo of what was typed.
            if skip:
                echo = skip.pop()
                if line.strip() == echo or PROMPT_TEXT_RE.sub("", line).strip() == echo:
                    return
            on_line(line)
        self.wait_prompt(timeout, repr(command), lines if on_line else None, start, idle)
        out = PROMPT_TEXT_RE.sub("", text(self.buf[start:self.pos]))
        out_lines = out.split("\n")
        if out_lines and out_lines[0].strip() == command.strip():
            out_lines = out_lines[1:]
        return "\n".join(out_lines).rstrip() + "\n"

    def console(self):
        return text(self.buf)

    def close(self):
        self.transport.close()

class SerialSession:
    """A board's BIOS over a serial port or TCP: the same ``cmd()``/``console()``/``close()`` as
    ``SimSession``."""
    def __init__(self, url, baud=115200, log=None, echo=None, sync_timeout=10):
        """``log``: a binary file, or the path of one created once the port is open (a port that
        cannot be opened leaves no log file behind)."""
        self.url     = url
        transport    = SerialTransport(url, baud)
        if isinstance(log, (str, os.PathLike)):
            try:
                log = open(log, "wb", buffering=0)
            except OSError:
                transport.close()
                raise
        self.log     = log
        self.console_ = Console(transport, log=log, echo=echo)
        try:
            self.console_.sync(sync_timeout)
        except ConsoleError:
            self.close()
            raise ConsoleError(f"{url}: no `litex>` prompt within {sync_timeout:g} s after Enter (is "
                f"the board at the BIOS prompt, the baud rate {baud} right?)") from None

    def cmd(self, command, timeout=300, on_line=None, idle=False):
        return self.console_.cmd(command, timeout, on_line, idle)

    def console(self):
        return self.console_.console()

    def close(self):
        self.console_.close()
        if self.log:
            self.log.close()
            self.log = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
