"""Regenerate harness_memory/failure_lexicon_tables.py: the published enumerations the category lexicon reads.

    python scripts/gen_failure_lexicon.py            # rewrite the table module
    python scripts/gen_failure_lexicon.py --check    # exit 1 when the committed module differs

Written once, committed as data (nothing is computed at import time, so every platform reads the same table):

- ``ERRNO``: POSIX errno names with the category their meaning belongs to (chosen here, by the errno's meaning,
  not from any log), and ``ERRNO_TEXT``: the message each one prints. The glibc texts are ``os.strerror`` on the
  glibc machine this script runs on (it refuses to run elsewhere); the texts other platforms print for the same
  errno (musl, macOS/BSD, Windows' WinSock ``WSAE*`` and ``ERROR_*`` messages) are listed by hand below, from
  their manuals.
- ``PY_EXCEPTIONS``: every built-in Python exception class (``BaseException``'s subclasses, walked once) with the
  category of its nearest ancestor that has one (``ConnectionRefusedError`` under ``ConnectionError``: network).
- ``RUBY_EXCEPTIONS``: Ruby's core exception classes (listed below as Ruby prints its hierarchy) with the category of
  their nearest ancestor that has one (``Encoding::InvalidByteSequenceError`` under ``EncodingError``: type_error).
"""

from __future__ import annotations

import argparse
import builtins
import errno
import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "harness_memory" / "failure_lexicon_tables.py"

# errno name -> category, by the errno's meaning (docs/signatures.md, "Category": a full disk and exhausted file
# handles are limits of the same kind as memory's; a read-only file system is a permission; a port in use a network
# failure). Errnos without a clear category (EINVAL, EAGAIN, EEXIST, ...) are left out on purpose.
ERRNO_CATEGORY = {
    # network
    "ECONNREFUSED": "network",
    "ECONNRESET": "network",
    "ECONNABORTED": "network",
    "EHOSTUNREACH": "network",
    "EHOSTDOWN": "network",
    "ENETUNREACH": "network",
    "ENETDOWN": "network",
    "ENETRESET": "network",
    "EADDRINUSE": "network",
    "EADDRNOTAVAIL": "network",
    "ENOTCONN": "network",
    "EPIPE": "network",
    "ESHUTDOWN": "network",
    "ENONET": "network",
    "ECOMM": "network",
    "EREMOTEIO": "network",
    # timeout
    "ETIMEDOUT": "timeout",
    "ETIME": "timeout",
    # permission
    "EACCES": "permission",
    "EPERM": "permission",
    "EROFS": "permission",
    "EKEYREJECTED": "permission",
    "EKEYREVOKED": "permission",
    "EKEYEXPIRED": "permission",
    # not found
    "ENOENT": "not_found",
    "ENXIO": "not_found",
    "ENODEV": "not_found",
    "ESRCH": "not_found",
    # limits of memory's kind: memory, storage, quotas, file handles, buffers
    "ENOMEM": "out_of_memory",
    "ENOSPC": "out_of_memory",
    "EDQUOT": "out_of_memory",
    "EFBIG": "out_of_memory",  # a file larger than the size limit allows (RLIMIT_FSIZE, the file system's maximum)
    "EMFILE": "out_of_memory",
    "ENFILE": "out_of_memory",
    "ENOBUFS": "out_of_memory",
    # a shared library that cannot be loaded
    "ELIBACC": "import_error",
    "ELIBBAD": "import_error",
}
# errno-like names of other platforms' published sets: Node's resolver codes (``getaddrinfo ENOTFOUND``),
# getaddrinfo's EAI_* names, WinSock's WSAE* and Win32's ERROR_* names (winerror.h)
OTHER_NAMES = {
    "ENOTFOUND": "network",
    "EAI_AGAIN": "network",
    "EAI_NONAME": "network",
    "EAI_FAIL": "network",
    "EAI_NODATA": "network",
    "ESOCKETTIMEDOUT": "timeout",
    "ERR_SOCKET_TIMEOUT": "timeout",
    "WSAECONNREFUSED": "network",
    "WSAECONNRESET": "network",
    "WSAECONNABORTED": "network",
    "WSAENETUNREACH": "network",
    "WSAEHOSTUNREACH": "network",
    "WSAENETDOWN": "network",
    "WSAEADDRINUSE": "network",
    "WSAEADDRNOTAVAIL": "network",
    "WSAHOST_NOT_FOUND": "network",
    "WSATRY_AGAIN": "network",
    "WSAETIMEDOUT": "timeout",
    "WSAEACCES": "permission",
    "WSAEMFILE": "out_of_memory",
    "WSAENOBUFS": "out_of_memory",
    "ERROR_ACCESS_DENIED": "permission",
    "ERROR_FILE_NOT_FOUND": "not_found",
    "ERROR_PATH_NOT_FOUND": "not_found",
    "ERROR_NOT_ENOUGH_MEMORY": "out_of_memory",
    "ERROR_OUTOFMEMORY": "out_of_memory",
    "ERROR_DISK_FULL": "out_of_memory",
    "ERROR_HANDLE_DISK_FULL": "out_of_memory",
    "ERROR_TOO_MANY_OPEN_FILES": "out_of_memory",
    "ERROR_SEM_TIMEOUT": "timeout",
    "WAIT_TIMEOUT": "timeout",
    "ERROR_TIMEOUT": "timeout",
    "ERROR_MOD_NOT_FOUND": "import_error",
    "ERROR_DLL_NOT_FOUND": "import_error",
    "ERROR_PRIVILEGE_NOT_HELD": "permission",
    "ERROR_WRITE_PROTECT": "permission",
    "ERROR_CONNECTION_REFUSED": "network",
    "ERROR_NETNAME_DELETED": "network",
    "ERROR_BAD_NETPATH": "network",
}
# Windows error numbers printed in parentheses (.NET's ``SocketException (10061): ...``, ``(os error 5)``) are read
# through their message, never their number alone: a number is too often something else.
#
# The messages other platforms print for the same meanings (lower case), beside glibc's strerror texts:
OTHER_TEXTS = {
    # musl libc (src/errno/__strerror.h)
    "no error information": None,
    "out of memory": "out_of_memory",
    "address in use": "network",
    "address not available": "network",
    "host is unreachable": "network",
    "network unreachable": "network",
    "resource busy": None,
    "operation timed out": "timeout",  # musl and macOS/BSD's ETIMEDOUT
    "connection reset by network": "network",
    "no error": None,
    # macOS / BSD (intro(2))
    "socket is not connected": "network",
    "disc quota exceeded": "out_of_memory",
    "can't assign requested address": "network",
    "operation not permitted": "permission",
    # Go's net package, which prints its own texts beside the kernel's
    "i/o timeout": "timeout",
    "no such host": "network",
    "server misbehaving": "network",
    # Windows: WinSock (WSAE*) and Win32 (ERROR_*) messages, FormatMessage's English texts
    "no connection could be made because the target machine actively refused it": "network",
    "a connection attempt failed because the connected party did not properly respond after a period of time": "timeout",
    "an existing connection was forcibly closed by the remote host": "network",
    "an established connection was aborted by the software in your host machine": "network",
    "only one usage of each socket address (protocol/network address/port) is normally permitted": "network",
    "the requested address is not valid in its context": "network",
    "no such host is known": "network",
    "a socket operation was attempted to an unreachable network": "network",
    "a socket operation was attempted to an unreachable host": "network",
    "an attempt was made to access a socket in a way forbidden by its access permissions": "permission",
    "access is denied": "permission",
    "the system cannot find the file specified": "not_found",
    "the system cannot find the path specified": "not_found",
    "not enough memory resources are available to process this command": "out_of_memory",
    "not enough storage is available to complete this operation": "out_of_memory",
    "there is not enough space on the disk": "out_of_memory",
    "the semaphore timeout period has expired": "timeout",
    "the wait operation timed out": "timeout",
    "the specified module could not be found": "import_error",
    "the network path was not found": "network",
    "the specified network name is no longer available": "network",
    "a required privilege is not held by the client": "permission",
    # resource limits a signal reports (SIGXCPU, SIGXFSZ; strsignal)
    "cpu time limit exceeded": "timeout",
    "file size limit exceeded": "out_of_memory",
}
# What a program's runtime prints when it finds its own memory corrupted or misused, whatever the program: a crash
# report with no failure word of its own (``free(): double free detected in tcache 2`` then the shell's ``Aborted``).
# Each is the statement of a failed run (test_failure, as a segfault or a sanitizer's report is, docs/signatures.md
# "Category"). Lower case, matched as text. Listed by hand from:
# - glibc 2.36: malloc/malloc.c's ``malloc_printerr`` messages, and the ``*** %s ***: terminated`` of
#   debug/stack_chk_fail.c (``stack smashing detected``) and debug/fortify_fail.c (``buffer overflow detected``);
# - Valgrind's Memcheck manual, "Explanation of error messages from Memcheck" (the headings of its error records;
#   the ``==PID==`` column is cleaned off before any line is read), checked against the format strings of the
#   memcheck-amd64-linux binary of Valgrind 3.19.0, and its core's fatal-signal report.
RUNTIME_REPORTS = (
    # glibc: the allocator's consistency checks (each aborts the process)
    "double free detected in tcache",
    "double free or corruption",
    "free(): invalid pointer",
    "free(): invalid size",
    "free(): invalid next size",
    "free(): corrupted unsorted chunks",
    "free(): too many chunks detected in tcache",
    "free(): unaligned chunk detected in tcache",
    "malloc(): corrupted top size",
    "malloc(): corrupted unsorted chunks",
    "malloc(): memory corruption",
    "malloc(): invalid size (unsorted)",
    "malloc(): invalid next size (unsorted)",
    "malloc(): mismatching next->prev_size",
    "malloc(): unaligned tcache chunk detected",
    "malloc(): unaligned fastbin chunk detected",
    "malloc(): smallbin double linked list corrupted",
    "malloc(): largebin double linked list corrupted",
    "malloc(): unsorted double linked list corrupted",
    "malloc_consolidate(): invalid chunk size",
    "munmap_chunk(): invalid pointer",
    "realloc(): invalid pointer",
    "realloc(): invalid old size",
    "realloc(): invalid next size",
    "corrupted size vs. prev_size",
    "corrupted double-linked list",
    # glibc: the stack protector and _FORTIFY_SOURCE
    "*** stack smashing detected ***",
    "*** buffer overflow detected ***",
    # Valgrind Memcheck: the headings of its error records
    "invalid read of size",
    "invalid write of size",
    "invalid free() / delete / delete[] / realloc()",
    "mismatched free() / delete / delete []",
    "conditional jump or move depends on uninitialised value",
    "use of uninitialised value of size",
    "points to uninitialised byte(s)",  # (the manual's wording; 3.19 prints "contains")
    "contains uninitialised byte(s)",
    "points to unaddressable byte(s)",
    "contains unaddressable byte(s)",
    "source and destination overlap in",
    "has a fishy (possibly negative) value",
    "invalid alignment value",  # (the manual's wording; 3.19 prints "bad alignment value")
    "bad alignment value",
    "are definitely lost in loss record",
    "are indirectly lost in loss record",
    "are possibly lost in loss record",
    "jump to the invalid address stated on the next line",
    "access not within mapped region",
    "bad permissions for mapped region",
    "process terminating with default action of signal",
    # Valgrind's thread checkers, Helgrind and DRD (their manuals, checked against the format strings of 3.19.0)
    "possible data race during",
    "unlocked a not-locked lock at",
    "unlocked an invalid lock at",
    "currently held by thread #",
    'lock order "',
    "attempt to re-lock a non-recursive lock",
    "exiting thread still holds",
    "conflicting load by thread",
    "conflicting store by thread",
    "probably a race condition: condition variable",
)

# the category of a Python built-in exception, by its nearest ancestor listed here
PY_ROOTS = {
    "ConnectionError": "network",
    "TimeoutError": "timeout",
    "PermissionError": "permission",
    "FileNotFoundError": "not_found",
    "ImportError": "import_error",
    "MemoryError": "out_of_memory",
    "RecursionError": "out_of_memory",
    "SyntaxError": "compile_error",
    "TypeError": "type_error",
    "UnicodeError": "type_error",
    "AssertionError": "assertion",
    "KeyError": "not_found",
    # a look-up outside what exists (``IndexError: list index out of range``; KeyError's base), and arithmetic on a
    # value outside the operation's domain (``ZeroDivisionError``, ``OverflowError``): the same kinds as other
    # runtimes' IndexOutOfBounds (not_found) and ArithmeticException (type_error), so one failure kind has one
    # category in every language (signing method 34)
    "LookupError": "not_found",
    "ArithmeticError": "type_error",
    # a name used that was never defined or bound (``NameError: name 'foo' is not defined``, ``UnboundLocalError``):
    # not_found, as JavaScript's ReferenceError, Ruby's NameError, Perl's ``Undefined subroutine`` and PHP's ``Call to
    # undefined function`` (method 35)
    "NameError": "not_found",
}


def py_exceptions() -> dict[str, str]:
    out: dict[str, str] = {}
    seen: set[type] = set()

    def walk(cls: type) -> None:
        if cls in seen:
            return
        seen.add(cls)
        cat = next((PY_ROOTS[c.__name__] for c in cls.__mro__ if c.__name__ in PY_ROOTS), None)
        if cat is not None and getattr(builtins, cls.__name__, None) is cls:
            out[cls.__name__] = cat
        for sub in cls.__subclasses__():
            walk(sub)

    walk(BaseException)
    return dict(sorted(out.items()))


# Ruby's core exception classes (``Exception`` and its subclasses in Ruby's core documentation; listed by hand as
# ``ruby -e`` walking ``ObjectSpace`` printed them on Ruby 3.1.2, ``Timeout::Error`` with ``require "timeout"``; the
# gem's, Ractor's and IO::Buffer's own classes left out): name -> superclass. ``Errno::E*`` are read by their errno
# name already (``ERROR_CODES``).
RUBY_CLASSES = {
    "ArgumentError": "StandardError",
    "ClosedQueueError": "StopIteration",
    "EOFError": "IOError",
    "Encoding::CompatibilityError": "EncodingError",
    "Encoding::ConverterNotFoundError": "EncodingError",
    "Encoding::InvalidByteSequenceError": "EncodingError",
    "Encoding::UndefinedConversionError": "EncodingError",
    "EncodingError": "StandardError",
    "FiberError": "StandardError",
    "FloatDomainError": "RangeError",
    "FrozenError": "RuntimeError",
    "IOError": "StandardError",
    "IndexError": "StandardError",
    "Interrupt": "SignalException",
    "KeyError": "IndexError",
    "LoadError": "ScriptError",
    "LocalJumpError": "StandardError",
    "Math::DomainError": "StandardError",
    "NameError": "StandardError",
    "NoMatchingPatternError": "StandardError",
    "NoMatchingPatternKeyError": "NoMatchingPatternError",
    "NoMemoryError": "Exception",
    "NoMethodError": "NameError",
    "NotImplementedError": "ScriptError",
    "RangeError": "StandardError",
    "RegexpError": "StandardError",
    "RuntimeError": "StandardError",
    "ScriptError": "Exception",
    "SecurityError": "Exception",
    "SignalException": "Exception",
    "StandardError": "Exception",
    "StopIteration": "IndexError",
    "SyntaxError": "ScriptError",
    "SystemCallError": "StandardError",
    "SystemExit": "Exception",
    "SystemStackError": "Exception",
    "ThreadError": "StandardError",
    "Timeout::Error": "RuntimeError",
    "TypeError": "StandardError",
    "UncaughtThrowError": "ArgumentError",
    "ZeroDivisionError": "StandardError",
}
# the Ruby classes whose documented meaning has a category, as Python's (PY_ROOTS); FrozenError ("raised when there
# is an attempt to modify a frozen object") is Python's TypeError for a change to an immutable value (``'tuple' object
# does not support item assignment``): type_error
RUBY_ROOTS: dict[str, str | None] = {
    "NoMemoryError": "out_of_memory",
    "SystemStackError": "out_of_memory",
    "LoadError": "import_error",
    "SyntaxError": "compile_error",
    "SecurityError": "permission",
    "TypeError": "type_error",
    "NoMethodError": "type_error",
    "EncodingError": "type_error",
    "FrozenError": "type_error",
    "KeyError": "not_found",
    "Timeout::Error": "timeout",
    # (method 34) an index outside the array or string (``index 5 outside of array bounds``); StopIteration and
    # ClosedQueueError are IndexErrors in Ruby's hierarchy but end an iteration or a queue, not a look-up
    "IndexError": "not_found",
    "StopIteration": None,
    # arithmetic on a value outside the operation's domain (``divided by 0``, ``Math::DomainError``, a float with no
    # integer value: ``FloatDomainError: Infinity``); not RangeError itself: the lexicon looks a name up by its last
    # part, and JavaScript's RangeError is also its stack overflow (``Maximum call stack size exceeded``)
    "ZeroDivisionError": "type_error",
    "Math::DomainError": "type_error",
    "FloatDomainError": "type_error",
    # (method 35) a name that is not defined (``undefined local variable or method `foo'``, ``uninitialized constant
    # Foo``); NoMethodError, a NameError, keeps its own root (a method called on a value that lacks it: type_error)
    "NameError": "not_found",
}


def ruby_exceptions() -> dict[str, str]:
    """Every class of ``RUBY_CLASSES`` with the category of its nearest listed ancestor (itself included)."""
    out = {name: _nearest(_ancestors(name, RUBY_CLASSES), RUBY_ROOTS, {}) for name in RUBY_CLASSES}
    return {name: cat for name, cat in sorted(out.items()) if cat is not None}


# Python's standard library (scripts/data/python_stdlib_exceptions.json, listed by scripts/list_python_exceptions.py):
# the classes whose documented meaning has a category, by qualified name, beyond the built-in ones (PY_ROOTS, which
# also apply: ``http.client.RemoteDisconnected`` is a ``ConnectionResetError``). None: no category, whatever the
# ancestors say (an ``HTTPError`` carries a status, which decides; it is no failure to connect).
PY_STDLIB_ROOTS: dict[str, str | None] = {
    "socket.gaierror": "network",  # getaddrinfo()/getnameinfo(): a name that does not resolve
    "socket.herror": "network",  # gethostbyname() and friends
    "ssl.SSLError": "network",  # the TLS layer of a connection (its handshake, a certificate, an EOF)
    "urllib.error.URLError": "network",  # a URL that could not be fetched
    "urllib.error.HTTPError": None,
    "http.client.IncompleteRead": "network",  # the connection ended before the body did
    "http.client.BadStatusLine": "network",  # no valid status line came back
    "http.client.NotConnected": "network",
    "http.client.ImproperConnectionState": "network",  # CannotSendRequest, CannotSendHeader, ResponseNotReady
    "smtplib.SMTPServerDisconnected": "network",
    "smtplib.SMTPConnectError": "network",
    "smtplib.SMTPAuthenticationError": "permission",  # the server refused the user name and password
    "multiprocessing.context.AuthenticationError": "permission",  # a connection's authentication key was refused
    "multiprocessing.context.TimeoutError": "timeout",
    "subprocess.TimeoutExpired": "timeout",  # a child process outlived its timeout
    "asyncio.exceptions.IncompleteReadError": "network",  # a stream ended before the bytes asked for
    "configparser.NoSectionError": "not_found",
    "configparser.NoOptionError": "not_found",
    "configparser.InterpolationMissingOptionError": "not_found",  # a value names an option that does not exist
    # decimal's signals are ArithmeticErrors, but most are conditions a context traps by choice (``Inexact``,
    # ``Rounded``, ``Clamped``), and their short names would read as outcomes in running text: no category
    "decimal.DecimalException": None,
    "decimal.FloatOperation": "type_error",  # (a TypeError too: a float mixed into decimal arithmetic)
}

# The JDK's public Throwable classes (scripts/data/java_throwables.txt, listed by scripts/ListJavaThrowables.java from
# java.base, java.net.http, java.sql, java.naming, java.rmi and java.xml) whose documented meaning has a category;
# a subclass takes its nearest listed ancestor's (``BindException`` and ``NoRouteToHostException`` are
# ``SocketException``s: network). None: no category, whatever the ancestors say.
JAVA_ROOTS: dict[str, str | None] = {
    # network: a socket, a name, a protocol, TLS, a database or directory connection
    "java.net.SocketException": "network",
    "java.net.UnknownHostException": "network",
    "java.net.ProtocolException": "network",
    "java.rmi.ConnectException": "network",
    "java.rmi.ConnectIOException": "network",
    "java.rmi.UnknownHostException": "network",
    "java.sql.SQLTransientConnectionException": "network",
    "java.sql.SQLNonTransientConnectionException": "network",
    "javax.naming.CommunicationException": "network",
    "javax.net.ssl.SSLException": "network",
    # timeout
    "java.net.SocketTimeoutException": "timeout",
    "java.net.http.HttpTimeoutException": "timeout",
    "java.nio.channels.InterruptedByTimeoutException": "timeout",
    "java.util.concurrent.TimeoutException": "timeout",
    "java.sql.SQLTimeoutException": "timeout",
    # not found: a file, a resource bundle, a directory entry
    "java.io.FileNotFoundException": "not_found",
    "java.nio.file.NoSuchFileException": "not_found",
    "java.util.MissingResourceException": "not_found",
    "javax.naming.NameNotFoundException": "not_found",
    # permission
    "java.nio.file.AccessDeniedException": "permission",
    "java.lang.SecurityException": "permission",
    "javax.naming.NamingSecurityException": "permission",
    "java.sql.SQLInvalidAuthorizationSpecException": "permission",
    # limits of memory's kind
    "java.lang.OutOfMemoryError": "out_of_memory",
    "java.lang.StackOverflowError": "out_of_memory",
    # a class or library the runtime cannot load or link against (a dependency missing or of another version)
    "java.lang.ClassNotFoundException": "import_error",
    "java.lang.NoClassDefFoundError": "import_error",
    "java.lang.UnsatisfiedLinkError": "import_error",
    "java.lang.IncompatibleClassChangeError": "import_error",  # NoSuchMethodError, AbstractMethodError, ...
    "java.lang.UnsupportedClassVersionError": "import_error",
    "java.lang.module.FindException": "import_error",
    "java.lang.module.ResolutionException": "import_error",
    "java.lang.ExceptionInInitializerError": None,  # a LinkageError, but the failure is the initializer's own
    # a value of the wrong type or encoding
    "java.lang.ClassCastException": "type_error",
    "java.nio.charset.CharacterCodingException": "type_error",
    # (method 34) arithmetic on a value outside the operation's domain (``/ by zero``), and an index outside the
    # array, list or string (``ArrayIndexOutOfBoundsException``, ``StringIndexOutOfBoundsException``)
    "java.lang.ArithmeticException": "type_error",
    "java.lang.IndexOutOfBoundsException": "not_found",
    "java.lang.AssertionError": "assertion",
}

DATA = Path(__file__).resolve().parent / "data"


def _ancestors(name: str, parent: dict[str, str]) -> list[str]:
    """``name`` and its ancestors, nearest first, by a class -> superclass listing (a class it does not list, or an
    empty superclass, ends the chain; a cycle ends it too)."""
    chain: list[str] = []
    cls = name
    while cls and cls not in chain:
        chain.append(cls)
        cls = parent.get(cls, "")
    return chain


def _nearest(chain: list[str], roots: Mapping[str, str | None], builtin_roots: Mapping[str, str]) -> str | None:
    """The category of the first name of ``chain`` (a class, then its ancestors nearest first) that a root lists."""
    for name in chain:
        if name in roots:
            return roots[name]
        if name in builtin_roots:
            return builtin_roots[name]
    return None


def _by_simple_name(qualified: dict[str, str | None], taken: dict[str, str]) -> dict[str, str]:
    """``qualified`` (class -> category) keyed by the class's own name, the way the lexicon looks a name up (its last
    dotted part): a name two classes share with different categories is left out, and so is a name ``taken``
    already answers (Python's built-in ``TimeoutError`` before ``multiprocessing.TimeoutError``)."""
    cats: dict[str, set[str | None]] = {}
    for name, cat in qualified.items():
        cats.setdefault(name.rsplit(".", 1)[-1], set()).add(cat)
    return {
        name: next(iter(c))  # type: ignore[misc]
        for name, c in sorted(cats.items())
        if len(c) == 1 and None not in c and name not in taken
    }


def py_stdlib_exceptions() -> dict[str, str]:
    """The standard library's exception classes with a category (``PY_STDLIB_ROOTS``, then ``PY_ROOTS``), by name."""
    listing = json.loads((DATA / "python_stdlib_exceptions.json").read_text(encoding="utf-8"))
    qualified = {name: _nearest([name, *chain], PY_STDLIB_ROOTS, PY_ROOTS) for name, chain in listing.items()}
    return _by_simple_name(qualified, py_exceptions())


def java_exceptions() -> dict[str, str]:
    """The JDK's Throwable classes with a category (``JAVA_ROOTS``), by name."""
    parent: dict[str, str] = {}
    for line in (DATA / "java_throwables.txt").read_text(encoding="utf-8").splitlines():
        name, _, sup = line.strip().partition(" ")
        if name:
            parent[name] = sup
    return _by_simple_name({name: _nearest(_ancestors(name, parent), JAVA_ROOTS, {}) for name in parent}, {})


def render() -> str:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        sys.exit("the glibc texts are read from os.strerror: run this on a glibc Linux")
    errno_names = {}
    texts: dict[str, str] = {}
    for name, cat in sorted(ERRNO_CATEGORY.items()):
        num = getattr(errno, name, None)
        if num is None:
            continue
        errno_names[name] = cat
        texts[os.strerror(num).lower()] = cat
    for text, cat in OTHER_TEXTS.items():
        if cat is not None:
            texts.setdefault(text, cat)
    names = {**errno_names, **OTHER_NAMES}
    lines = [
        '"""Generated by scripts/gen_failure_lexicon.py (do not edit by hand): published enumerations of failure',
        'names and texts, each with the category of its meaning (docs/signatures.md, "The lexicon")."""',
        "",
    ]
    nearest = "and the category of their nearest listed ancestor"
    tables = [
        ("errno names (glibc's set), Node's, getaddrinfo's, WinSock's and Win32's error names", "ERROR_CODES", names),
        ("the messages those codes print: glibc's strerror, musl's, macOS/BSD's, Go's, Windows'", "ERROR_TEXTS", texts),
        (f"Python's built-in exception classes {nearest}", "PY_EXCEPTIONS", py_exceptions()),
        (f"Ruby's core exception classes {nearest}", "RUBY_EXCEPTIONS", ruby_exceptions()),
        (f"Python's standard-library exception classes {nearest}", "PY_STDLIB_EXCEPTIONS", py_stdlib_exceptions()),
        (f"the JDK's exception and error classes {nearest}", "JAVA_EXCEPTIONS", java_exceptions()),
    ]
    for comment, name, table in tables:
        lines += [f"# {comment}", f"{name} = {{", *(f"    {k!r}: {v!r}," for k, v in sorted(table.items())), "}"]
    lines += [
        "# what a runtime prints when it finds its memory corrupted or misused (glibc's allocator and stack protector,",
        "# Valgrind's error records, Memcheck's and its thread checkers'): the statement of a failed run, lower case",
        "RUNTIME_REPORTS = (",
        *(f"    {t!r}," for t in sorted(RUNTIME_REPORTS)),
        ")",
        "",
    ]
    # formatted as the project formats its code (ruff format), so the committed module is the generator's output
    return subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--stdin-filename", str(OUT), "-"],
        input="\n".join(lines),
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed table differs")
    args = ap.parse_args()
    text = render()
    if args.check:
        sys.exit(0 if OUT.read_text(encoding="utf-8") == text else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
