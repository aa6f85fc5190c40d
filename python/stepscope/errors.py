"""The exceptions and warnings of stepscope's Python API.

What the CLI reports as an error (one line and exit status 2) is raised as a
subclass of :class:`Error` carrying the same line, the file it names and,
where the reader knows it, the byte offset in that file's JSON text. What the
CLI prints as a warning is issued as a :class:`StepscopeWarning`.
"""

import warnings


class Error(Exception):
    """Base class of every error stepscope raises for bad input.

    ``path`` is the file (or input) the error is about, or None; ``offset``
    the byte offset in its JSON text (uncompressed), or None.
    """

    def __init__(self, message, path=None, offset=None):
        super().__init__(message)
        self.message = message
        self.path = path or None
        self.offset = offset if offset is not None and offset >= 0 else None


class TraceError(Error):
    """A trace file, folder or glob that cannot be read or analysed."""


class OptionError(Error, ValueError):
    """An option the library refuses (unknown detector, compat mode, profile)."""


class StepscopeWarning(UserWarning):
    """Data skipped, salvaged or repaired while reading, or a doubtful input."""


def raise_for(native):
    """Raises the error of a failed native run; returns the run when it succeeded."""
    if native.ok:
        return native
    cls = OptionError if native.bad_option else TraceError
    raise cls(printable(native.error), native.error_file, native.error_byte)


def printable(message):
    """The message with control characters escaped (\\x1b), as the CLI prints it:
    a name from the input cannot move a terminal's cursor."""
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)


def warn_all(messages, stacklevel=3):
    for m in messages:
        warnings.warn(m, StepscopeWarning, stacklevel=stacklevel)

